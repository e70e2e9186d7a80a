"""A bad import line's error names the field that is wrong and where: the line is checked as the
format whose keys it has (prm800k.parse.line_format), so a plain line without `problem` says
`problem: missing` rather than "neither a PRM800K record nor a plain line". Through the command
line, the import job behind the data page, and the data page's list of past imports."""

from __future__ import annotations

import gzip
import io
import json
import tracemalloc
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import override_settings

from annotate.models import ImportJob, Membership, Problem, Project, Role, Solution
from annotate.services.imports import jobs as import_jobs
from annotate.services.imports.reading import ImportValidationError, validate_file

FIXTURES = Path(__file__).parent / "fixtures"
GOOD = (FIXTURES / "plain.jsonl").read_text().splitlines()  # three good plain lines
PLAIN_WITHOUT_PROBLEM = {"ground_truth_answer": "2", "steps": ["1 + 1 = 2.", "# Answer\n\n2"]}

pytestmark = pytest.mark.django_db


def _sign_in_lead(client) -> Project:
    """Project `algebra` with a lead, signed in on `client` (the data page and the import API)."""
    lead = get_user_model().objects.create_user("lead")
    project = Project.objects.create(slug="algebra", name="Algebra")
    Membership.objects.create(project=project, user=lead, role=Role.LEAD)
    client.force_login(lead)
    return project


def _bad_file(tmp_path: Path, line_4: dict, name: str = "bad.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join([*GOOD, json.dumps(line_4)]) + "\n")
    return path


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        (PLAIN_WITHOUT_PROBLEM, "problem", "missing"),
        ({"problem": "What is 1 + 1?", "steps": ["1 + 1 = 2."]}, "ground_truth_answer", "missing"),
        ({"subject": "Algebra", "steps": ["x"]}, "problem", "missing"),  # optional plain keys count too
        ({"input": "What is 1 + 1? Step 1: 2 ки", "task": "GSM8K"}, "label", "missing"),  # Math-Shepherd
        ({"label": "What is 1 + 1? Step 1: 2 +", "task": "GSM8K"}, "input", "missing"),
        ({"question": {"problem": "x", "ground_truth_answer": "1"}}, "labeler", "missing"),  # PRM800K
    ],
)
def test_a_line_missing_a_key_of_its_format_names_that_field(tmp_path, line, field, message):
    with pytest.raises(ImportValidationError) as raised:
        validate_file(path=_bad_file(tmp_path, line))
    assert [e.as_dict() for e in raised.value.errors] == [{"line": 4, "field": field, "message": message}]


@pytest.mark.parametrize(
    "line",
    [
        {"problem": "What is 1 + 1?", "ground_truth_answer": "2"},
        {"problem": "What is 1 + 1?", "solution": "1 + 1 = 2.", "answer": "2", "unique_id": "x"},  # MATH-500's
    ],
)
def test_a_problem_without_steps_says_it_has_no_solution_to_label(tmp_path, line):
    """Was: a MATH-500 problems file gave "ground_truth_answer: missing" on every line, and a lead
    who renamed `answer` met the next error instead of what the file lacks."""
    with pytest.raises(ImportValidationError) as raised:
        validate_file(path=_bad_file(tmp_path, line))
    (error,) = raised.value.errors
    assert (error.line, error.field) == (4, "steps")
    assert error.message.startswith("missing: this line is a problem with no model solution to label")


@pytest.mark.parametrize("generation", [-5, 2**31])
def test_a_prm800k_round_no_filter_could_select_is_refused(tmp_path, generation):
    record = json.loads((FIXTURES / "edge_cases.jsonl").read_text().splitlines()[0])
    record["generation"] = generation
    with pytest.raises(ImportValidationError) as raised:
        validate_file(path=_bad_file(tmp_path, record))
    (error,) = raised.value.errors
    assert (error.line, error.field) == (4, "generation")
    assert error.message == f"must be a round between -1 (screening) and {2**31 - 1}, got {generation}"


def test_a_line_with_no_key_of_any_format_lists_the_formats(tmp_path):
    with pytest.raises(ImportValidationError) as raised:
        validate_file(path=_bad_file(tmp_path, {"prompt": "What is 1 + 1?", "completion": "2"}))
    (error,) = raised.value.errors
    assert (error.line, error.field) == (4, "(line)")
    assert error.message.startswith("not a line of any import format: a PRM800K record")
    assert "a plain line (problem, ground_truth_answer, steps)" in error.message
    assert "a Math-Shepherd line (input, label)" in error.message


def test_the_command_names_file_line_and_field_and_imports_nothing(tmp_path):
    bad = _bad_file(tmp_path, PLAIN_WITHOUT_PROBLEM)
    err = io.StringIO()
    with pytest.raises(CommandError, match="1 bad line"):
        call_command("import_prm800k", str(bad), project="x", no_progress=True, stderr=err)
    assert err.getvalue().splitlines() == [f"{bad}:line 4: problem: missing"]
    assert not Project.objects.filter(slug="x").exists()
    assert not Solution.objects.exists()


def test_the_import_job_keeps_file_line_and_field_and_the_data_page_shows_them(client, tmp_path):
    project = _sign_in_lead(client)
    with _bad_file(tmp_path, PLAIN_WITHOUT_PROBLEM).open("rb") as upload:
        started = client.post("/api/v1/projects/algebra/imports/", {"file": upload})
    assert started.status_code == 202, started.content
    import_jobs.run_import_job(import_id=started.json()["id"])

    job = client.get(started.json()["url"]).json()
    # The data page's script lists each error as "bad.jsonl, line 4, field problem: missing".
    assert job["status"] == "failed" and job["filename"] == "bad.jsonl"
    assert job["errors"] == [{"line": 4, "field": "problem", "message": "missing"}]
    assert not Problem.objects.filter(project=project).exists()  # atomic: the three good lines are not in

    row = ImportJob.objects.get(pk=job["id"])
    html = client.get("/projects/algebra/data/").content.decode()
    assert f'<td data-label="File">{row.filename}</td>' in html
    # and what is wrong there, as the live message says it ("... field problem: missing"), not only where
    assert "1 bad line, first: line 4, field problem: missing" in html


# --- a file that is one JSON array, not JSON lines -------------------------------------------------

PROCESSBENCH = {  # the shape of /work/shared/data/processbench/*.json elements
    "id": "gsm8k-0",
    "generator": "Qwen2-7B-Instruct",
    "problem": "What is 1 + 1?",
    "steps": ["1 + 1 = 3.", "The answer is 3."],
    "final_answer_correct": False,
    "label": 0,
}


@pytest.mark.parametrize("indent", [2, None])  # pretty-printed over many lines, or all on one
def test_a_json_array_file_is_one_error_that_says_what_it_is_not_a_bad_line_each(tmp_path, indent):
    path = tmp_path / "plain.json"
    path.write_text("\n" + json.dumps([json.loads(line) for line in GOOD], indent=indent) + "\n")
    with pytest.raises(ImportValidationError) as raised:
        validate_file(path=path)
    assert raised.value.bad_lines == 1
    ((line, field, message),) = [(e.line, e.field, e.message) for e in raised.value.errors]
    assert (line, field) == (0, "(file)")  # the whole file: the data page names no line
    assert message.startswith("the file is one JSON array, not JSON lines: the importer reads one JSON object per line")
    assert "a plain line (problem, ground_truth_answer, steps)" in message and "jq -c '.[]'" in message


def test_a_processbench_file_is_named_with_the_commands_that_read_it(client, tmp_path):
    path = tmp_path / "gsm8k.json"
    path.write_text(json.dumps([PROCESSBENCH, {**PROCESSBENCH, "id": "gsm8k-1", "label": -1}], indent=2))
    with pytest.raises(CommandError) as refused:
        call_command("import_prm800k", str(path), project="x", no_progress=True, stderr=io.StringIO())
    assert str(refused.value).startswith(f"{path}: the file is a JSON array of ProcessBench solutions")
    assert "manage.py simulate_active_learning" in str(refused.value) and "1 bad line" not in str(refused.value)
    assert not Project.objects.filter(slug="x").exists()

    _sign_in_lead(client)
    with path.open("rb") as upload:
        started = client.post("/api/v1/projects/algebra/imports/", {"file": upload})
    import_jobs.run_import_job(import_id=started.json()["id"])
    (error,) = client.get(started.json()["url"]).json()["errors"]
    assert (error["line"], error["field"]) == (0, "(file)") and "not imported as a project" in error["message"]
    assert not Solution.objects.exists()
    html = client.get("/projects/algebra/data/").content.decode()
    assert "The file is a JSON array of ProcessBench solutions" in html
    assert "with a ground truth of your own: ProcessBench has none" in error["message"]
    # the long message folds in the past imports' table: its start, and the rest on demand
    assert '<details class="sl-error-details"><summary>The file is a JSON array' in html


def test_a_pretty_printed_json_object_is_one_error_and_mr_ben_is_named(tmp_path):
    keyed = tmp_path / "keyed.json"
    keyed.write_text(json.dumps({str(i): json.loads(line) for i, line in enumerate(GOOD)}, indent=2))
    mrben = tmp_path / "math.json"
    record = {"Question_UUID": "q1", "Question": "x", "Model_Solution_Steps": []}
    mrben.write_text(json.dumps({"q1": [record]}, indent=2))
    for path, start in [
        (keyed, "the file is one JSON object written over many lines, not JSON lines"),
        (mrben, "the file is an MR-Ben file (one JSON object of solutions keyed by question), not JSON lines"),
    ]:
        with pytest.raises(CommandError) as refused:
            call_command("import_prm800k", str(path), project="x", no_progress=True, stderr=io.StringIO())
        assert str(refused.value).startswith(f"{path}: {start}"), refused.value
        assert str(refused.value).endswith("; nothing was imported")
    assert not Project.objects.filter(slug="x").exists()


@pytest.mark.parametrize("packed", [False, True])
def test_a_utf8_byte_order_mark_at_the_start_is_read_past(tmp_path, packed):
    """A file saved by a Windows editor starts with a BOM; it was refused as line 1's bad JSON."""
    body = b"\xef\xbb\xbf" + ("\n".join(GOOD) + "\n").encode()
    path = tmp_path / ("bom.jsonl.gz" if packed else "bom.jsonl")
    path.write_bytes(gzip.compress(body) if packed else body)
    assert validate_file(path=path).records == 3
    call_command("import_prm800k", str(path), project="bom", no_progress=True, stdout=io.StringIO())
    assert Solution.objects.filter(project__slug="bom").count() == 3
    array = tmp_path / "array.json"  # and a BOM does not hide what a whole-file JSON document is
    array.write_bytes(b"\xef\xbb\xbf" + json.dumps([json.loads(line) for line in GOOD]).encode())
    with pytest.raises(ImportValidationError) as raised:
        validate_file(path=array)
    assert raised.value.errors[0].message.startswith("the file is one JSON array")


def test_an_exports_end_line_is_named_as_such(tmp_path):
    path = tmp_path / "with_trailer.jsonl"
    end = {"steplabel_export_end": {"lines": 3, "format": "prm800k", "cursor": "abc"}}
    path.write_text("\n".join([*GOOD, json.dumps(end)]) + "\n")
    with pytest.raises(ImportValidationError) as raised:
        validate_file(path=path)
    assert [e.as_dict() for e in raised.value.errors] == [
        {
            "line": 4,
            "field": "(line)",
            "message": "is the end line of a Steplabel export (trailer=true), not a record: leave it out (head -n -1)",
        }
    ]


@pytest.mark.parametrize("damage", ["cut", "corrupt"])
def test_a_damaged_gzip_file_is_one_error_through_the_command_and_the_api(client, tmp_path, damage):
    packed = bytearray(gzip.compress(("\n".join(GOOD * 50) + "\n").encode()))
    if damage == "cut":
        packed = packed[: len(packed) // 2]
    else:
        packed[len(packed) // 2 : len(packed) // 2 + 8] = b"\xff" * 8
    path = tmp_path / "damaged.jsonl.gz"
    path.write_bytes(bytes(packed))
    with pytest.raises(CommandError) as refused:
        call_command("import_prm800k", str(path), project="x", no_progress=True, stderr=io.StringIO())
    message = str(refused.value)
    assert message.startswith(f"{path}: the gzip file is damaged or cut short (") and "gzip -t" in message
    assert message.count("nothing was imported") == 1, message  # said once (the README audit saw it twice)
    assert message.endswith("or check it with gzip -t") and "Traceback" not in message
    assert not Project.objects.filter(slug="x").exists()

    _sign_in_lead(client)
    with path.open("rb") as upload:
        started = client.post("/api/v1/projects/algebra/imports/", {"file": upload})
    import_jobs.run_import_job(import_id=started.json()["id"])
    job = client.get(started.json()["url"]).json()
    assert job["status"] == "failed"
    ((error),) = job["errors"]
    assert (error["line"], error["field"]) == (0, "(file)")
    assert error["message"].startswith("the gzip file is damaged or cut short")
    assert not Solution.objects.exists()


def test_two_files_in_one_upload_are_refused_not_one_dropped(client, tmp_path):
    _sign_in_lead(client)
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    one.write_text(GOOD[0] + "\n")
    two.write_text(GOOD[1] + "\n")
    with one.open("rb") as a, two.open("rb") as b:
        response = client.post("/api/v1/projects/algebra/imports/", {"file": [a, b]})
    assert response.status_code == 400
    assert response.json() == {"file": ["one file per import: 2 were sent; send each alone"]}
    assert not ImportJob.objects.exists()


# --- sizes: a gzip file that unpacks to a huge line, or to far more than was uploaded ---------------


@override_settings(IMPORT_MAX_LINE_BYTES=1024**2)
def test_a_line_past_the_line_limit_is_an_error_read_past_without_being_held(tmp_path):
    """A 40 KB gzip holding a 20 MB line took that much of the worker's memory (400 MB lines took
    gigabytes): the line is now read past a chunk at a time and named, and the lines after it checked."""
    path = tmp_path / "bomb.jsonl.gz"
    with gzip.open(path, "wb", compresslevel=9) as out:
        out.write(GOOD[0].encode() + b"\n" + b'{"problem": "' + b"a" * 20 * 1024**2 + b'"}\n' + GOOD[1].encode())
    tracemalloc.start()
    try:
        with pytest.raises(ImportValidationError) as raised:
            validate_file(path=path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [e.as_dict() for e in raised.value.errors] == [
        {"line": 2, "field": "(line)", "message": "longer than 1,048,576 bytes (IMPORT_MAX_LINE_BYTES)"}
    ]
    assert peak < 8 * 1024**2, peak  # the 20 MB line was never held whole


@override_settings(IMPORT_MAX_UNPACKED_BYTES=50_000)
def test_a_gzip_file_unpacking_past_the_limit_stops_with_one_error_and_imports_nothing(tmp_path):
    path = tmp_path / "many.jsonl.gz"
    with gzip.open(path, "wb") as out:
        out.write(("\n".join(GOOD * 200) + "\n").encode())
    with pytest.raises(CommandError) as refused:
        call_command("import_prm800k", str(path), project="x", no_progress=True, stderr=io.StringIO())
    assert str(refused.value) == (
        f"{path}: the file unpacks to more than 50,000 bytes (IMPORT_MAX_UNPACKED_BYTES); split it into smaller "
        "files; nothing was imported"
    )
    assert not Solution.objects.exists()
