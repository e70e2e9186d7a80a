"""Beyond math (issue 18) through the API on PostgreSQL: code and trace import lines, the task body,
critiques on submit, and the PRM800K and critique exports."""

from __future__ import annotations

import io
import json

import pytest
from rest_framework.test import APIClient

from annotate.models import Annotation, Problem, Project, Role, Solution, Step
from annotate.services.imports import jobs as import_jobs
from tests.api_clients import member_client

pytestmark = pytest.mark.django_db

CODE_LINE = {
    "kind": "code",
    "language": "python",
    "problem": "Write `mean(xs)`: the average of a non-empty list of numbers.",
    "tests": "assert mean([1, 2, 3]) == 2\nassert mean([5]) == 5",
    "steps": ["def mean(xs):", "    total = sum(xs)", "    return total / (len(xs) - 1)"],
}
TRACE_LINE = {
    "kind": "trace",
    "problem": "What is the population of the capital of France?",
    "ground_truth_answer": "about 2.1 million",
    "steps": [
        {"type": "thought", "text": "The capital of France is Paris; look up its population."},
        {"type": "tool_call", "text": 'search({"query": "population of Paris"})'},
        {"type": "observation", "text": "Paris: 2,102,650 inhabitants (2023)."},
        {"type": "answer", "text": "about 21 million"},
    ],
}


def _upload_bytes(client: APIClient, slug: str, body: bytes) -> dict:
    """Upload through the API (202, a job), run the import job as a worker would (inline here),
    and return the job as polled: status, counters, errors."""
    started = client.post(f"/api/v1/projects/{slug}/imports/", {"file": io.BytesIO(body)}, format="multipart")
    assert started.status_code == 202, started.content
    import_jobs.run_import_job(import_id=started.data["id"])
    return client.get(started.data["url"]).data


def _upload(client: APIClient, slug: str, lines: list) -> dict:
    body = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    return _upload_bytes(client, slug, body.encode())


def _lines(response) -> list[dict]:
    assert response.status_code == 200, response.content
    return [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]


@pytest.fixture
def project() -> Project:
    return Project.objects.create(slug="kinds")


@pytest.fixture
def lead(project):
    return member_client(project, "lead", Role.LEAD)


@pytest.fixture
def annotator(project):
    return member_client(project, "ann", Role.ANNOTATOR)


def test_code_and_trace_lines_import_with_their_kind(project, lead):
    job = _upload(lead, "kinds", [CODE_LINE, TRACE_LINE])

    assert job["status"] == "succeeded", job
    assert job["counters"]["solutions_created"] == 2
    code = Problem.objects.get(kind="code")
    assert (code.language, code.tests) == ("python", CODE_LINE["tests"])
    trace = Solution.objects.get(problem__kind="trace")
    assert list(trace.steps.values_list("step_type", flat=True)) == ["thought", "tool_call", "observation", "answer"]
    assert trace.final_answer == "about 21 million" and trace.answer_correct is False  # the answer step, graded
    assert Solution.objects.get(problem__kind="code").answer_correct is None  # code has no answer to grade
    assert _upload(lead, "kinds", [CODE_LINE, TRACE_LINE])["counters"]["duplicates"] == 2


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ({**CODE_LINE, "kind": "prose"}, "kind", "must be one of math, code, trace"),
        ({k: v for k, v in CODE_LINE.items() if k != "language"}, "language", "missing"),
        ({**CODE_LINE, "language": "Python 3"}, "language", "lower-case language name"),
        ({**CODE_LINE, "tests": ["assert 1"]}, "tests", "must be a string"),
        ({**TRACE_LINE, "language": "python"}, "language", "only code solutions have a language"),
        ({**TRACE_LINE, "steps": ["just text"]}, "steps[0]", 'must be an object {"type", "text"}'),
        ({**TRACE_LINE, "steps": [{"type": "plan", "text": "x"}]}, "steps[0].type", "must be one of thought"),
        ({**TRACE_LINE, "steps": [{"type": "thought", "text": " "}]}, "steps[0].text", "must not be empty"),
        ({**TRACE_LINE, "steps": [{"type": "thought", "text": "x", "args": 1}]}, "steps[0].args", "unknown field"),
        ({**CODE_LINE, "steps": [{"type": "thought", "text": "x"}]}, "steps[0]", "must be a string"),
        (
            {"problem": "1+1?", "steps": ["2"], "kind": "math"},
            "ground_truth_answer",
            "missing",
        ),  # math still needs its ground truth
    ],
)
def test_bad_kind_lines_are_refused_with_line_and_field(project, lead, line, field, message):
    job = _upload(lead, "kinds", [CODE_LINE, line])

    assert job["status"] == "failed", job
    [error] = job["errors"]
    assert (error["line"], error["field"]) == (2, field) and message in error["message"], error
    assert not Solution.objects.exists()  # the good first line was not written either


def test_next_task_carries_kind_language_tests_and_step_types(project, lead, annotator):
    _upload(lead, "kinds", [CODE_LINE])
    task = annotator.get("/api/v1/projects/kinds/tasks/next/").json()
    assert (task["kind"], task["language"], task["tests"]) == ("code", "python", CODE_LINE["tests"])
    assert [s["text"] for s in task["steps"]] == CODE_LINE["steps"] and all(s["rated"] for s in task["steps"])
    assert task["critique_required"] is False

    Solution.objects.all().delete()
    _upload(lead, "kinds", [TRACE_LINE])
    task = annotator.get("/api/v1/projects/kinds/tasks/next/").json()
    assert task["kind"] == "trace" and "language" not in task
    assert [(s["type"], s["rated"]) for s in task["steps"]] == [
        ("thought", True),
        ("tool_call", True),
        ("observation", False),
        ("answer", True),
    ]


def _submit(client: APIClient, task: dict, steps: list[dict], *, finish_reason: str, key: str = "k1"):
    body = {"idempotency_key": key, "finish_reason": finish_reason, "total_time_ms": 900, "steps": steps}
    return client.post(f"/api/v1/assignments/{task['id']}/submit/", body, format="json")


def _step(index: int, rating: int | None, **extra) -> dict:
    return {"index": index, "rating": rating, "flagged": False, **extra}


def test_code_critique_required_on_negative_step_then_exported(project, lead, annotator):
    project.critique_required = True
    project.save()
    _upload(lead, "kinds", [CODE_LINE])
    task = annotator.get("/api/v1/projects/kinds/tasks/next/").json()
    assert task["critique_required"] is True

    missing = _submit(annotator, task, [_step(0, 1), _step(1, 1), _step(2, -1)], finish_reason="found_error")
    assert missing.status_code == 400
    assert "critique" in missing.json()["steps[2].critique"][0] and not Annotation.objects.exists()
    blank = _submit(
        annotator, task, [_step(0, 1), _step(1, 1), _step(2, -1, critique="  ")], finish_reason="found_error"
    )
    assert "steps[2].critique" in blank.json()
    too_long = _submit(annotator, task, [_step(0, 1), _step(1, 1, critique="x" * 4001)], finish_reason="give_up")
    assert "at most 4000" in too_long.json()["steps[1].critique"][0]
    wrong_type = _submit(annotator, task, [_step(0, 1, critique=["a"])], finish_reason="found_error")
    assert wrong_type.json()["steps[0].critique"] == ["Must be text."]

    critique = "Divides by len(xs) - 1: the mean divides by len(xs)."
    steps = [_step(0, 1), _step(1, 1, critique="  "), _step(2, -1, critique=critique)]
    ok = _submit(annotator, task, steps, finish_reason="found_error")
    assert ok.status_code == 201, ok.content

    [record] = _lines(lead_ml(project).get("/api/v1/projects/kinds/export/?format=prm800k"))
    question = record["question"]
    assert (question["kind"], question["language"], question["tests"]) == ("code", "python", CODE_LINE["tests"])
    assert question["pre_generated_steps"] == CODE_LINE["steps"]
    completions = [step["completions"][0] for step in record["label"]["steps"]]
    assert [list(c) for c in completions] == [["text", "rating", "flagged"]] * 2 + [
        ["text", "rating", "flagged", "critique"]
    ]  # only the written critique is carried; the blank one is none
    assert completions[2]["critique"] == critique and record["label"]["finish_reason"] == "found_error"

    [row] = _lines(lead_ml(project).get("/api/v1/projects/kinds/export/?format=critique"))
    assert row == {
        "prompt": CODE_LINE["problem"],
        "steps": CODE_LINE["steps"],
        "verdicts": [
            {"index": 0, "rating": 1, "critique": None, "lines": [1, 1]},
            {"index": 1, "rating": 1, "critique": None, "lines": [2, 2]},
            {"index": 2, "rating": -1, "critique": critique, "lines": [3, 3]},
        ],
        "kind": "code",
        "language": "python",
    }


_ml_count = iter(range(10**6))


def lead_ml(project: Project) -> APIClient:
    """An ML engineer's client (a new member each call)."""
    return member_client(project, f"ml{next(_ml_count)}", Role.ML_ENGINEER)


def test_trace_observation_shown_not_rated_unless_project_says_so(project, lead, annotator):
    _upload(lead, "kinds", [TRACE_LINE])
    task = annotator.get("/api/v1/projects/kinds/tasks/next/").json()

    rated_obs = _submit(annotator, task, [_step(0, 1), _step(1, 1), _step(2, 1)], finish_reason="give_up")
    assert "not rated" in rated_obs.json()["steps[2].rating"][0]
    critique_obs = _submit(
        annotator, task, [_step(0, 1), _step(1, 1), _step(2, None, critique="odd")], finish_reason="give_up"
    )
    assert "takes no critique" in critique_obs.json()["steps[2].critique"][0]

    steps = [_step(0, 1), _step(1, 1), _step(2, None), _step(3, -1, critique="21 million: a factor of ten off.")]
    assert _submit(annotator, task, steps, finish_reason="found_error").status_code == 201
    [record] = _lines(lead_ml(project).get("/api/v1/projects/kinds/export/?format=prm800k"))
    assert record["question"]["kind"] == "trace" and "language" not in record["question"]
    assert record["question"]["step_types"] == ["thought", "tool_call", "observation", "answer"]
    assert [s["completions"][0]["rating"] for s in record["label"]["steps"]] == [1, 1, None, -1]
    [row] = _lines(lead_ml(project).get("/api/v1/projects/kinds/export/?format=critique"))
    assert row["steps"] == TRACE_LINE["steps"] and row["kind"] == "trace"
    assert row["verdicts"][-1] == {"index": 3, "rating": -1, "critique": "21 million: a factor of ten off."}
    assert [v["index"] for v in row["verdicts"]] == [0, 1, 3]  # the observation has no verdict

    project.rate_observations = True
    project.save()
    Annotation.objects.all().delete()
    Solution.objects.update(is_open=True, annotation_count=0)
    second = member_client(project, "ann2", Role.ANNOTATOR)
    task = second.get("/api/v1/projects/kinds/tasks/next/").json()
    assert all(step["rated"] for step in task["steps"])
    unrated = _submit(second, task, [_step(0, 1), _step(1, 1), _step(2, None), _step(3, 1)], finish_reason="solution")
    assert "Rate this step" in unrated.json()["steps[2].rating"][0]


def test_exported_code_and_trace_records_import_back_equal(project, lead, annotator, tmp_path):
    _upload(lead, "kinds", [CODE_LINE, TRACE_LINE])
    for _ in range(2):
        task = annotator.get("/api/v1/projects/kinds/tasks/next/").json()
        n = len(task["steps"])
        steps = [
            _step(i, None if not s["rated"] else 1, **({"critique": "fine"} if i == 0 else {}))
            for i, s in enumerate(task["steps"])
        ]
        assert _submit(annotator, task, steps, finish_reason="solution", key=f"k{task['id']}").status_code == 201, n
    exported = b"".join(lead_ml(project).get("/api/v1/projects/kinds/export/").streaming_content)

    Project.objects.create(slug="copy")
    copy_lead = member_client(Project.objects.get(slug="copy"), "lead2", Role.LEAD)
    job = _upload_bytes(copy_lead, "copy", exported)
    assert job["status"] == "succeeded", job
    again = b"".join(
        member_client(Project.objects.get(slug="copy"), "ml2", Role.ML_ENGINEER)
        .get("/api/v1/projects/copy/export/")
        .streaming_content
    )
    assert again == exported
    assert Step.objects.filter(solution__project__slug="copy", step_type="observation").count() == 1


def test_critique_export_of_math_has_no_kind_and_the_command_writes_it(project, lead, annotator, tmp_path):
    line = {"problem": "What is $1+1$?", "ground_truth_answer": "2", "steps": ["1+1=3", "# Answer\n\n3"]}
    _upload(lead, "kinds", [line])
    task = annotator.get("/api/v1/projects/kinds/tasks/next/").json()
    steps = [_step(0, -1, critique="1+1 is 2, not 3.")]
    assert _submit(annotator, task, steps, finish_reason="found_error").status_code == 201
    [row] = _lines(lead_ml(project).get("/api/v1/projects/kinds/export/?format=critique"))
    assert row == {
        "prompt": line["problem"],
        "steps": line["steps"],
        "verdicts": [{"index": 0, "rating": -1, "critique": "1+1 is 2, not 3."}],
    }
    [record] = _lines(lead_ml(project).get("/api/v1/projects/kinds/export/"))
    assert "kind" not in record["question"]

    from django.core.management import call_command

    out = tmp_path / "critique.jsonl"
    call_command(
        "export_prm800k",
        project="kinds",
        format="critique",
        out=out,
        no_progress=True,
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    assert [json.loads(x) for x in out.read_text().splitlines()] == [row]


def test_trl_rows_of_a_trace_fold_the_unrated_observation_into_the_next_step(project, lead, annotator):
    _upload(lead, "kinds", [TRACE_LINE])
    task = annotator.get("/api/v1/projects/kinds/tasks/next/").json()
    steps = [_step(0, 1), _step(1, 1), _step(2, None), _step(3, -1)]
    assert _submit(annotator, task, steps, finish_reason="found_error").status_code == 201
    [row] = _lines(lead_ml(project).get("/api/v1/projects/kinds/export/?format=trl"))
    texts = [s["text"] for s in TRACE_LINE["steps"]]
    assert row["completions"] == [texts[0], texts[1], texts[2] + "\n\n" + texts[3]]
    assert row["labels"] == [True, True, False]
