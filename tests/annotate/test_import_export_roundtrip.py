"""PRM800K import and export through the management commands, on PostgreSQL.

The contract (DESIGN.md): a record imported from PRM800K exports back equal as JSON with keys in
the same order. Our exports are also byte-identical to PRM800K's own encoding, which we assert too.
"""

import io
import json
import os
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotate.models import Annotation, Problem, Project, Solution, Step
from ml.prm.data import DATA
from tests.json_helpers import same_json

FIXTURES = Path(__file__).parent / "fixtures"
SHARED_DATA = DATA / "prm800k"
REAL_FILES = sorted(SHARED_DATA.glob("phase*.jsonl")) + sorted(SHARED_DATA.glob("openr_samples_prm800k.jsonl"))

pytestmark = pytest.mark.django_db


def _import(path: Path, project: str = "p") -> str:
    out = io.StringIO()
    call_command("import_prm800k", str(path), project=project, no_progress=True, stdout=out)
    return out.getvalue()


def _export(project: str, tmp_path: Path) -> Path:
    target = tmp_path / f"{project}.jsonl"
    call_command("export_prm800k", project=project, out=target, no_progress=True, stderr=io.StringIO())
    return target


def _assert_round_trip(source: Path, exported: Path) -> None:
    original = [line for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    produced = exported.read_text(encoding="utf-8").splitlines()
    assert len(produced) == len(original)
    for number, (a, b) in enumerate(zip(original, produced, strict=True), start=1):
        assert json.loads(a) == json.loads(b), f"line {number} differs as JSON"
        assert same_json(json.loads(a), json.loads(b)), f"line {number}: key order or number types differ"


def _table_counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in (Project, Problem, Solution, Step, Annotation)}


@pytest.mark.skipif(not REAL_FILES, reason="../shared/data/prm800k is absent")
@pytest.mark.parametrize("source", REAL_FILES, ids=lambda p: p.name)
def test_real_prm800k_files_round_trip_exactly(source: Path, tmp_path: Path) -> None:
    _import(source, project="real")
    exported = _export("real", tmp_path)
    _assert_round_trip(source, exported)
    # Same encoding as PRM800K's files (json.dumps defaults), so byte for byte too.
    assert exported.read_bytes() == source.read_bytes()


@pytest.mark.skipif(not REAL_FILES, reason="../shared/data/prm800k is absent")
def test_all_real_files_in_one_project_round_trip(tmp_path: Path) -> None:
    for source in REAL_FILES:
        _import(source, project="all")
    exported = _export("all", tmp_path).read_text().splitlines()
    expected: list[str] = []
    for source in REAL_FILES:
        for line in source.read_text().splitlines():
            if line not in expected:  # openr samples repeat three records of the phase files
                expected.append(line)
    assert exported == expected
    # QC/screening solutions served to many labelers are one solution with many annotations.
    assert Annotation.objects.count() == len(expected)


def test_hand_made_edge_cases_round_trip(tmp_path: Path) -> None:
    source = FIXTURES / "edge_cases.jsonl"
    _import(source, project="edge")
    exported = _export("edge", tmp_path)
    _assert_round_trip(source, exported)
    assert exported.read_bytes() == source.read_bytes()
    records = [json.loads(line) for line in exported.read_text().splitlines()]
    assert records[0]["timestamp"] == "2022-11-06T03:24:46"
    assert records[0]["question"]["pre_generated_verifier_score"] == 1.1e-09
    assert records[1]["label"]["steps"][0]["completions"][0]["rating"] is None
    assert records[2]["generation"] == -1 and records[2]["is_initial_screening_question"] is True
    assert records[3]["label"]["steps"][0]["human_completion"] == {
        "text": "2+2 is 4.",
        "rating": None,
        "source": "human",
        "flagged": False,
    }
    assert records[4]["label"] == {"steps": [], "total_time": None, "finish_reason": "bad_problem"}
    assert type(records[5]["question"]["pre_generated_verifier_score"]) is int
    assert list(records[6]["question"]) == ["ground_truth_answer", "problem"]


def test_unknown_keys_and_zoned_timestamps_are_kept(tmp_path: Path) -> None:
    """A PRM800K variant with extra fields at any level still round-trips exactly."""
    source = FIXTURES / "edge_cases_extra_keys.jsonl"
    _import(source, project="extra")
    exported = _export("extra", tmp_path)
    _assert_round_trip(source, exported)
    assert exported.read_bytes() == source.read_bytes()
    zoned = Annotation.objects.get(labeler_uuid__startswith="bbbb")
    assert zoned.submitted_at.isoformat() == "2022-11-06T03:24:46.500000+00:00"


def test_non_ascii_utf8_input_exports_equal_as_json(tmp_path: Path) -> None:
    source = FIXTURES / "edge_cases_utf8.jsonl"
    _import(source, project="utf8")
    _assert_round_trip(source, _export("utf8", tmp_path))
    problem = Problem.objects.get()
    assert "😀" in problem.text and "Évaluez" in problem.text


def test_stdout_export_equals_file_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _import(FIXTURES / "edge_cases.jsonl", project="edge")
    capsys.readouterr()
    call_command("export_prm800k", project="edge")
    streamed = capsys.readouterr().out
    assert streamed == _export("edge", tmp_path).read_text()


def test_reimport_creates_nothing_and_says_so() -> None:
    first = _import(FIXTURES / "edge_cases.jsonl", project="edge")
    assert "Imported" in first and "annotations created: 7" in first
    before = _table_counts()
    second = _import(FIXTURES / "edge_cases.jsonl", project="edge")
    assert "Nothing new" in second and "7 duplicate(s)" in second
    assert _table_counts() == before


def test_import_creates_project_stores_steps_and_grades_answers() -> None:
    _import(FIXTURES / "edge_cases.jsonl", project="new-project")
    project = Project.objects.get(slug="new-project")
    first = Solution.objects.filter(project=project).order_by("id").first()
    assert list(first.steps.values_list("index", "text")) == [
        (0, "The square root of 16 is 4 since $4^2 = 16$."),
        (1, "# Answer\n\n4"),
    ]
    assert first.answer_correct is True and first.final_answer == "4"
    wrong = Solution.objects.get(project=project, final_answer="7")
    assert wrong.answer_correct is False
    # Imported labels count toward overlap: labeled solutions leave the queue.
    assert not Solution.objects.filter(project=project, is_open=True).exists()
    found_error = Annotation.objects.get(project=project, labeler_uuid__startswith="2222")
    assert (found_error.n_negative, found_error.first_error_index, found_error.n_alternatives) == (1, 1, 1)
    assert found_error.is_quality_control is True and found_error.n_unrated == 1 and found_error.n_flagged == 1


def test_plain_format_import_creates_unlabeled_graded_solutions() -> None:
    out = _import(FIXTURES / "plain.jsonl", project="plain")
    assert "solutions created: 3" in out and "annotations created: 0" in out
    solutions = list(Solution.objects.order_by("id"))
    assert [s.answer_correct for s in solutions] == [True, False, True]
    assert [s.final_answer for s in solutions] == ["12", "7", "0.5"]
    assert all(s.is_open for s in solutions)
    assert Problem.objects.count() == 2  # the first two lines share their problem
    third = Problem.objects.get(text__startswith="Simplify")
    assert (third.subject, third.level) == ("Prealgebra", "Level 1")
    assert Solution.objects.get(final_answer="12").problem.source_id == "plain-1"
    again = _import(FIXTURES / "plain.jsonl", project="plain")
    assert "Nothing new" in again and Solution.objects.count() == 3


def test_malformed_file_is_refused_with_line_numbers_and_changes_nothing() -> None:
    _import(FIXTURES / "plain.jsonl", project="keep")  # existing data must survive untouched
    before = _table_counts()
    err = io.StringIO()
    with pytest.raises(CommandError) as raised:
        call_command("import_prm800k", str(FIXTURES / "malformed.jsonl"), project="keep", no_progress=True, stderr=err)
    assert "5 bad line(s)" in str(raised.value)
    report = err.getvalue()
    assert "line 2: (json): not valid JSON" in report
    assert "line 3: question.problem: missing" in report
    assert "line 5: label.steps[0].completions[0].rating: must be -1, 0, 1 or null, got 2" in report
    assert "line 6: label.finish_reason: must be one of" in report and '"finished"' in report
    assert "line 7: label.steps[0].chosen_completion: 3 is out of range" in report
    assert "line 1:" not in report and "line 8:" not in report
    assert _table_counts() == before


def test_malformed_file_into_new_project_leaves_no_project() -> None:
    with pytest.raises(CommandError):
        call_command(
            "import_prm800k", str(FIXTURES / "malformed.jsonl"), project="ghost", no_progress=True, stderr=io.StringIO()
        )
    assert not Project.objects.filter(slug="ghost").exists()


def test_json_errors_name_the_column_not_orjsons_line_within_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"problem": "x"}\n\n{"a": 1\n{"a": tru}\n\x89PNG\r\n')
    err = io.StringIO()
    with pytest.raises(CommandError, match="4 bad line"):
        call_command("import_prm800k", str(bad), project="x", no_progress=True, stderr=err)
    report = err.getvalue()
    assert "line 3: (json): not valid JSON: unexpected end of data at the end of the line" in report
    assert "line 4: (json): not valid JSON: invalid literal, expected 'true' at column 7" in report
    assert "line 5: (json): not UTF-8 text (a binary file?)" in report
    assert "column 1 (char" not in report and "line 2 column" not in report


def test_a_binary_file_is_one_error_not_one_per_line(tmp_path: Path) -> None:
    png = tmp_path / "picture.jsonl"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00\xff\xfe\n" * 40)
    err = io.StringIO()
    with pytest.raises(CommandError, match="1 bad line"):
        call_command("import_prm800k", str(png), project="x", no_progress=True, stderr=err)
    report = err.getvalue()
    assert report.count("not UTF-8 text") == 1 and "line 1: (json): not UTF-8 text (a binary file?)" in report
    assert not Project.objects.filter(slug="x").exists()


def test_only_first_twenty_errors_are_listed(tmp_path: Path) -> None:
    bad = tmp_path / "many.jsonl"
    bad.write_text("{not json\n" * 25)
    err = io.StringIO()
    with pytest.raises(CommandError, match="25 bad line"):
        call_command("import_prm800k", str(bad), project="x", no_progress=True, stderr=err)
    lines = err.getvalue().splitlines()
    assert sum("(json)" in line for line in lines) == 20
    assert lines[-1] == "... and 5 more bad line(s)"


def test_missing_file_and_unknown_project_errors(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no such file"):
        call_command("import_prm800k", str(tmp_path / "nope.jsonl"), project="x")
    with pytest.raises(CommandError, match="No project"):
        call_command("export_prm800k", project="nope")


def test_export_to_a_missing_or_unwritable_place_is_a_command_error(tmp_path: Path) -> None:
    _import(FIXTURES / "edge_cases.jsonl", project="edge")
    with pytest.raises(CommandError, match=r"--out .*x\.jsonl: no directory .*nowhere"):
        call_command("export_prm800k", project="edge", out=tmp_path / "nowhere" / "x.jsonl", no_progress=True)
    # a target that cannot be written (here a directory: root ignores permissions) fails with the
    # reason, and the .partial file written beside it is removed
    taken = tmp_path / "taken"
    taken.mkdir()
    with pytest.raises(CommandError, match="--out .*taken: Is a directory"):
        call_command("export_prm800k", project="edge", out=taken, no_progress=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_invalid_project_slug_is_refused_and_nothing_is_written() -> None:
    """Issue 11: `--project 'My Project!'` made a project whose pages could not be reached."""
    before = _table_counts()
    with pytest.raises(CommandError, match=r"'My Project!' is not a valid slug.*'my-project'"):
        call_command("import_prm800k", str(FIXTURES / "plain.jsonl"), project="My Project!", no_progress=True)
    assert _table_counts() == before


@pytest.mark.parametrize("content", ["", "\n  \n\n"], ids=["empty", "blank-lines"])
def test_empty_file_is_refused_as_empty(tmp_path: Path, content: str) -> None:
    """Issue 11: an empty file said "Nothing new: all 0 line(s) ... were already in project" and exited 0."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text(content)
    with pytest.raises(CommandError, match=r"empty\.jsonl is empty: it has no JSON lines"):
        call_command("import_prm800k", str(empty), project="fresh", no_progress=True, stdout=io.StringIO())
    assert not Project.objects.filter(slug="fresh").exists()


def test_project_slugs_on_the_command_line_are_lower_case(tmp_path: Path) -> None:
    """Slugs are stored in lower case (the browser's form lowers them): `--project Edge` made a
    project `Edge` whose API paths and later `--project edge` could not find it."""
    call_command(
        "import_prm800k", str(FIXTURES / "edge_cases.jsonl"), "--project", "Edge", "--no-progress", stdout=io.StringIO()
    )
    assert list(Project.objects.values_list("slug", flat=True)) == ["edge"]
    out = tmp_path / "out.jsonl"
    call_command("export_prm800k", "--project", "EDGE", "--out", str(out), "--no-progress", stderr=io.StringIO())
    _assert_round_trip(FIXTURES / "edge_cases.jsonl", out)


def test_an_export_to_a_closed_pipe_ends_quietly(monkeypatch) -> None:
    """`export_prm800k ... | head`: the reader left; a BrokenPipeError traceback was printed."""
    _import(FIXTURES / "edge_cases.jsonl", project="piped")
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line
    with open(write_end, "w", encoding="utf-8") as pipe:
        monkeypatch.setattr(sys, "stdout", pipe)
        call_command("export_prm800k", project="piped")  # returns, no BrokenPipeError


def test_the_teams_rounds_follow_the_imported_ones() -> None:
    """Was: a project labeling after importing OpenAI's round 6 labels reached its own round 6 after
    six retrains, and the dashboard's round 6 and `generation=6` exports mixed the two."""
    _import(FIXTURES / "edge_cases.jsonl", project="rounds")  # rounds 3, 4, 5, 9 (and -1, null)
    project = Project.objects.get(slug="rounds")
    assert project.current_generation == 10
    project.current_generation = 12
    project.save(update_fields=["current_generation"])
    _import(FIXTURES / "code_steps.jsonl", project="rounds")  # no rounds: the team's stays
    project.refresh_from_db()
    assert project.current_generation == 12
