"""Math-Shepherd lines through `import_prm800k` and the export (command and API), on PostgreSQL.

Imported tags become automatic labels: they never count as human annotations (queue, stats,
PRM800K export), and `format=math_shepherd&labels=auto` gives the lines back byte for byte.
"""

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotate.models import Annotation, AnnotationSource, Problem, Project, Role, Solution, Step
from annotate.services import leases, queue
from autolabel.models import AutoSource, AutoStepLabel, MathShepherdRecord
from ml.prm.data import DATA
from tests.api_clients import member_client
from tests.factories import make_solutions

SAMPLES = DATA / "math-shepherd-samples"
SAMPLE_FILE = SAMPLES / "openr_samples_math-shepherd.jsonl"

pytestmark = pytest.mark.django_db

TAG = "ки"


def _line(question: str, steps: list[str], marks: str, task: str = "GSM8K", **dump) -> str:
    text = question + " " + "\n".join(f"Step {i + 1}: {s} {TAG}" for i, s in enumerate(steps))
    pairs = enumerate(zip(steps, marks, strict=True))
    label = question + " " + "\n".join(f"Step {i + 1}: {s} {m}" for i, (s, m) in pairs)
    return json.dumps({"input": text, "label": label, "task": task}, **dump)


def _import(path: Path, project: str = "ms") -> str:
    out = io.StringIO()
    call_command("import_prm800k", str(path), project=project, no_progress=True, stdout=out)
    return out.getvalue()


def _export(project: str, tmp_path: Path, **options) -> bytes:
    target = tmp_path / "out.jsonl"
    call_command("export_prm800k", project=project, out=target, no_progress=True, stderr=io.StringIO(), **options)
    return target.read_bytes()


@pytest.mark.skipif(not SAMPLE_FILE.exists(), reason="../shared/data/math-shepherd-samples is absent")
def test_shared_samples_import_and_export_byte_for_byte(tmp_path: Path) -> None:
    output = _import(SAMPLE_FILE)
    assert "auto labels created: 25" in output
    exported = _export("ms", tmp_path, format="math_shepherd", labels="auto")
    assert exported == SAMPLE_FILE.read_bytes()

    # The question and the steps are split where "Step 1:" starts; tags become automatic labels.
    first = Solution.objects.order_by("id").first()
    assert first.problem.text.startswith("Janet pays $40/hour") and first.problem.text.endswith("in a year?")
    steps = list(Step.objects.filter(solution=first).values_list("text", flat=True))
    assert steps[0] == "Janet spends 3 hours + 5 hours = <<3+5=8>>8 hours per week on music lessons."
    assert first.final_answer == "13520" and first.problem.ground_truth_answer is None
    labels = list(AutoStepLabel.objects.filter(solution=first).values_list("source", "label"))
    assert labels == [(AutoSource.MATH_SHEPHERD, 1)] * 4 + [(AutoSource.MATH_SHEPHERD, -1)]

    # Never human annotations: nothing labeled, everything still in the queue, nothing in PRM800K.
    assert Annotation.objects.count() == 0
    assert set(Solution.objects.values_list("annotation_count", "is_open")) == {(0, True)}
    assert _export("ms", tmp_path, format="prm800k") == b""
    assert _export("ms", tmp_path, format="math_shepherd", labels="human") == b""

    # Importing again creates nothing.
    assert "Nothing new" in _import(SAMPLE_FILE)
    assert AutoStepLabel.objects.count() == 25 and MathShepherdRecord.objects.count() == 7


def test_unusual_encodings_and_spacing_round_trip(tmp_path: Path) -> None:
    lines = [
        _line("What is 2+3?", ["2+3 = 5.", "The answer is: 5"], "++"),
        _line("Ünïcode question?", ["Compute 7-2=5. The answer is: 5"], "-", ensure_ascii=False),
        _line("Compact?", ["a = 1", "b = 2 The answer is: 3"], "+-", separators=(",", ":")),
        # Odd spacing the canonical writer would not produce, and an extra key.
        json.dumps(
            {
                "task": "MATH",
                "input": f"Spacing?  Step 1:  two  spaces {TAG}\n\nStep 2: x The answer is: 1 {TAG}",
                "label": "Spacing?  Step 1:  two  spaces +\n\nStep 2: x The answer is: 1 -",
                "source": "hand-made",
            }
        ),
    ]
    source = tmp_path / "odd.jsonl"
    source.write_bytes(("\n".join(lines) + "\n").encode())
    _import(source, project="odd")
    assert _export("odd", tmp_path, format="math_shepherd", labels="auto") == source.read_bytes()
    assert list(Step.objects.filter(solution__problem__text="Spacing?").values_list("text", flat=True)) == [
        "two  spaces",
        "x The answer is: 1",
    ]


def test_a_line_that_also_carries_its_question_is_read_as_math_shepherd(tmp_path: Path) -> None:
    """Was: a `question` key beside `input` and `label` made the line a PRM800K record, refused
    with "labeler: missing" (copies of Math-Shepherd that carry the question apart have one)."""
    line = json.loads(_line("What is 2+3?", ["2+3 = 5.", "The answer is: 5"], "++"))
    source = tmp_path / "with-question.jsonl"
    source.write_text(json.dumps({"question": "What is 2+3?", **line}) + "\n")
    _import(source, project="withq")
    assert list(Step.objects.filter(solution__project__slug="withq").values_list("text", flat=True)) == [
        "2+3 = 5.",
        "The answer is: 5",
    ]
    assert _export("withq", tmp_path, format="math_shepherd", labels="auto") == source.read_bytes()


@pytest.mark.parametrize(
    ("obj", "field", "message"),
    [
        ({"input": "Q? Step 1: a", "label": "Q? Step 1: a", "task": "t"}, "input", "no step tag"),
        ({"input": f"Q? Step 1: a {TAG}", "label": "Q? Step 1: a *", "task": "t"}, "label", "must be '+' or '-'"),
        ({"input": f"Q? Step 1: a {TAG}", "label": "Q? Step 1: b +", "task": "t"}, "label", "differs from input"),
        ({"input": f"Q? Step 1: a {TAG}", "label": "Q? Step 1: a + more", "task": "t"}, "label", "after the last"),
        ({"input": f"Q? a {TAG}", "label": "Q? a +", "task": "t"}, "input", "no 'Step 1:'"),
        ({"input": f"Q? Step 1: a {TAG}", "label": 3, "task": "t"}, "label", "must be a string"),
        ({"input": f"Q? Step 1: a {TAG}", "label": "Q? Step 1: a +", "task": 7}, "task", "must be a string"),
        (
            {"input": f"Step 1: a {TAG}", "label": "Step 1: a +", "task": "t"},
            "input",
            "question before 'Step 1:' is empty",
        ),
    ],
)
def test_malformed_lines_are_refused_with_their_line_and_field(tmp_path, obj, field, message) -> None:
    good = _line("What is 1+1?", ["1+1=2. The answer is: 2"], "+")
    source = tmp_path / "bad.jsonl"
    source.write_text(good + "\n" + json.dumps(obj) + "\n")
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("import_prm800k", str(source), project="bad", no_progress=True, stdout=io.StringIO(), stderr=err)
    assert f"line 2: {field}: " in err.getvalue() and message in err.getvalue()
    assert not Project.objects.filter(slug="bad").exists()
    assert Problem.objects.count() == Solution.objects.count() == AutoStepLabel.objects.count() == 0


def test_api_exports_auto_and_human_labels_and_refuses_auto_for_other_formats(tmp_path: Path) -> None:
    source = tmp_path / "two.jsonl"
    source.write_text(
        _line("What is 2+3?", ["2+3 = 5.", "The answer is: 5"], "++")
        + "\n"
        + _line("What is 2*3?", ["2*3 = 5.", "The answer is: 5"], "--")
        + "\n"
    )
    _import(source, project="api")
    project = Project.objects.get(slug="api")
    lead = member_client(project, "lead", Role.LEAD)
    annotator = member_client(project, "ann", Role.ANNOTATOR)

    response = lead.get("/api/v1/projects/api/export/?format=math_shepherd&labels=auto")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == source.read_bytes()
    assert annotator.get("/api/v1/projects/api/export/?format=math_shepherd&labels=auto").status_code == 403
    trl = lead.get("/api/v1/projects/api/export/?format=trl&labels=auto")
    assert [json.loads(row) for row in b"".join(trl.streaming_content).splitlines()] == [
        {"prompt": "What is 2+3?", "completions": ["2+3 = 5.", "The answer is: 5"], "labels": [True, True]},
        {"prompt": "What is 2*3?", "completions": ["2*3 = 5.", "The answer is: 5"], "labels": [False, False]},
    ]
    bad = lead.get("/api/v1/projects/api/export/?format=prm800k&labels=auto")
    assert bad.status_code == 400 and "labels" in bad.json()
    # automatic labels export whole: no cursor to append from, and the human-label filters are refused
    assert not response.has_header("X-Export-Cursor")
    cursor = lead.get("/api/v1/projects/api/export/?format=prm800k")["X-Export-Cursor"]
    # ...and so are the shapes of people's ratings: automatic labels are + or - with no alternatives
    refusable = [("since", cursor), ("split", "test"), ("generation", "1"), ("qc", "exclude")]
    for name, value in [*refusable, ("neutral", "negative"), ("alternatives", "drop")]:
        refused = lead.get("/api/v1/projects/api/export/", {"format": "trl", "labels": "auto", name: value})
        assert refused.status_code == 400 and name in refused.json(), (name, refused.status_code)
    shaped = lead.get("/api/v1/projects/api/export/", {"format": "math_shepherd", "labels": "auto", "neutral": "drop"})
    assert shaped.status_code == 400 and "automatic labels" in shaped.json()["neutral"][0]
    assert lead.get("/api/v1/projects/api/export/?format=math_shepherd&labels=both").status_code == 400

    # A human labels the second solution in the app: steps before the first -1 `+`, it and later `-`.
    from labeling_api.serializers_submit import submit_payload

    solution = Solution.objects.get(problem__text="What is 2*3?")
    assignment = queue.claim_next(project=project, user=annotator.user, roles={Role.ANNOTATOR})
    while assignment.solution_id != solution.pk:
        leases.skip(assignment=assignment, user=annotator.user)
        assignment = queue.claim_next(project=project, user=annotator.user, roles={Role.ANNOTATOR})
    submit_payload(
        assignment=assignment,
        user=annotator.user,
        payload={
            "idempotency_key": "k1",
            "finish_reason": "found_error",
            "total_time_ms": 1000,
            "steps": [{"index": 0, "rating": -1, "flagged": False, "alternatives": [], "human_completion": None}],
        },
    )
    assert Annotation.objects.filter(source=AnnotationSource.APP).count() == 1
    human = lead.get("/api/v1/projects/api/export/?format=math_shepherd&labels=human")
    rows = [json.loads(line) for line in b"".join(human.streaming_content).splitlines()]
    assert rows == [
        {
            "input": f"What is 2*3? Step 1: 2*3 = 5. {TAG}\nStep 2: The answer is: 5 {TAG}",
            "label": "What is 2*3? Step 1: 2*3 = 5. -\nStep 2: The answer is: 5 -",
            "task": "",
        }
    ]


def test_human_lines_map_neutral_like_trl(tmp_path: Path) -> None:
    from prm800k.math_shepherd import human_line

    steps = ["a", "b", "c", "d"]
    marks = {
        neutral: (line or {}).get("label", "").split("Q ")[-1]
        for neutral in ("positive", "negative", "drop")
        for line in [human_line(question="Q", steps=steps, ratings=[1, 0, 1, -1], neutral=neutral)]
    }
    assert marks["positive"] == "Step 1: a +\nStep 2: b +\nStep 3: c +\nStep 4: d -"
    assert marks["negative"] == "Step 1: a +\nStep 2: b -\nStep 3: c -\nStep 4: d -"
    assert marks["drop"] == "Step 1: a +"
    # Unrated steps after the first error (phase 2 stops there) are `-`; no rated step: no line.
    assert human_line(question="Q", steps=steps, ratings=[1, -1], neutral="positive")["label"].endswith("d -")
    assert human_line(question="Q", steps=steps, ratings=[None], neutral="positive") is None


def test_auto_labels_do_not_enter_the_queue_or_stats() -> None:
    project = Project.objects.create(slug="q")
    solutions = make_solutions(project, 2, n_steps=3)
    for solution in solutions:
        AutoStepLabel.objects.bulk_create(
            AutoStepLabel(solution=solution, index=i, source=AutoSource.MATH_SHEPHERD, label=-1) for i in range(3)
        )
    lead = member_client(project, "lead2", Role.LEAD)
    stats = lead.get("/api/v1/projects/q/stats/").json()
    assert stats["progress"]["solutions_labeled"] == 0
    assert stats["auto_labels"]["solutions_with_auto_labels"] == 2
    # no imported line and no rollout: labels=auto exports none of them, and the panel says so
    assert stats["auto_labels"]["solutions_complete"] == 0
    assert stats["auto_labels"]["pairs_compared"] == 0
    annotator = member_client(project, "ann2", Role.ANNOTATOR)
    assert queue.claim_next(project=project, user=annotator.user, roles={Role.ANNOTATOR}) is not None


@pytest.mark.skipif(not SAMPLE_FILE.exists(), reason="../shared/data/math-shepherd-samples is absent")
def test_an_export_job_writes_the_same_bytes(tmp_path: Path) -> None:
    from annotate.models import Export
    from annotate.services.exports import jobs as export_jobs
    from annotate.services.exports.options import parse_options

    _import(SAMPLE_FILE)
    project = Project.objects.get(slug="ms")
    options = parse_options(project=project, params={"format": "math_shepherd", "labels": "auto"})
    export = export_jobs.create_export_job(project=project, user=None, options=options, gzip_output=False)
    export_jobs.run_export_job(export_id=export.pk)  # what the worker runs
    export = Export.objects.get(pk=export.pk)
    assert export.status == "succeeded", export.error
    assert Path(export.file_path).read_bytes() == SAMPLE_FILE.read_bytes()
    assert export.record_count == 7


REAL_PRM800K = SAMPLES.parent / "prm800k" / "phase2_test.reconstructed.jsonl"


@pytest.mark.skipif(not REAL_PRM800K.exists(), reason="../shared/data/prm800k is absent")
def test_real_human_labels_export_as_math_shepherd_lines(tmp_path: Path) -> None:
    from prm800k import math_shepherd

    _import(REAL_PRM800K, project="real")
    exported = _export("real", tmp_path, format="math_shepherd").decode().splitlines()
    parsed = [math_shepherd.parse(json.loads(line), raw=line) for line in exported]
    assert all(p.shape is None for p in parsed)  # our own lines are canonical
    # Each line: `+` up to the first error, `-` from it on (never `+` after a `-`).
    for line in parsed:
        first = next((i for i, v in enumerate(line.labels) if v < 0), len(line.labels))
        assert line.labels == [1] * first + [-1] * (len(line.labels) - first)
    # One line per human label that starts with a rated step; those with a first -1 have a `-` exactly there.
    annotations = list(Annotation.objects.order_by("export_seq"))
    errors = sorted(a.first_error_index for a in annotations if a.first_error_index is not None)
    found = sorted(line.labels.index(-1) for line in parsed if -1 in line.labels)
    assert len(parsed) <= len(annotations) and found == errors
