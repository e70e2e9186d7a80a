"""TRL stepwise-supervision rows: neutral and alternatives mapping, and the stream through the API."""

import io
import json

import pytest
from django.core.management import call_command

from annotate.models import Project, Role
from prm800k.records import RecordParts, build_record
from prm800k.trl import trl_rows
from tests.api_clients import member_client
from tests.labeling_api.exports.helpers import NEUTRAL_THEN_ERROR, lines_of

# --- TRL -------------------------------------------------------------------------------------------


def _record(label_steps):
    parts = RecordParts(
        labeler="x",
        timestamp="2022-01-01T00:00:00",
        generation=1,
        is_quality_control=False,
        is_screening=False,
        problem_text="P",
        ground_truth_answer="4",
        ground_truth_solution=None,
        steps=[],
        final_answer=None,
        verifier_score=None,
        label_steps=label_steps,
        total_time_ms=1,
        finish_reason="found_error",
        phase2_shape=True,
    )
    return build_record(parts)


FOUND_ERROR = [
    {"completions": [{"text": "a", "rating": 1, "flagged": None}], "human_completion": None, "chosen_completion": 0},
    {"completions": [{"text": "b", "rating": 0, "flagged": None}], "human_completion": None, "chosen_completion": 0},
    {
        "completions": [
            {"text": "c-wrong", "rating": -1, "flagged": None},
            {"text": "c-alt-good", "rating": 1, "flagged": None},
            {"text": "c-alt-meh", "rating": 0, "flagged": None},
            {"text": "c-alt-unrated", "rating": None, "flagged": None},
        ],
        "human_completion": None,
        "chosen_completion": None,
    },
]


def test_trl_rows_neutral_positive_with_branches():
    rows = trl_rows(_record(FOUND_ERROR), neutral="positive", alternatives="branch")
    assert rows == [
        {"prompt": "P", "completions": ["a", "b", "c-wrong"], "labels": [True, True, False]},
        {"prompt": "P", "completions": ["a", "b", "c-alt-good"], "labels": [True, True, True]},
        {"prompt": "P", "completions": ["a", "b", "c-alt-meh"], "labels": [True, True, True]},
    ]


def test_trl_rows_neutral_negative_and_drop():
    negative = trl_rows(_record(FOUND_ERROR), neutral="negative", alternatives="drop")
    # A neutral mapped to False does not end the row: only a -1 rating does.
    assert negative == [{"prompt": "P", "completions": ["a", "b", "c-wrong"], "labels": [True, False, False]}]
    dropped = trl_rows(_record(FOUND_ERROR), neutral="drop", alternatives="branch")
    # The neutral main-line step ends the row; nothing branches past it.
    assert dropped == [{"prompt": "P", "completions": ["a"], "labels": [True]}]


def test_trl_rows_human_completion_counts_as_correct():
    steps = [
        {
            "completions": [{"text": "x", "rating": -1, "flagged": False}],
            "human_completion": {"text": "human", "rating": None, "source": "human", "flagged": False},
            "chosen_completion": None,
        },
        {
            "completions": [{"text": "y", "rating": 1, "flagged": False}],
            "human_completion": None,
            "chosen_completion": 0,
        },
    ]
    rows = trl_rows(_record(steps), neutral="positive", alternatives="branch")
    assert rows == [
        {"prompt": "P", "completions": ["human", "y"], "labels": [True, True]},
        {"prompt": "P", "completions": ["x"], "labels": [False]},
    ]


@pytest.mark.django_db
def test_trl_stream_through_api(clients):
    response = clients["ml"].get("/api/v1/projects/exp/export/?format=trl&neutral=negative&alternatives=drop")
    rows = lines_of(response)
    assert all(set(row) == {"prompt", "completions", "labels"} for row in rows)
    assert all(len(row["completions"]) == len(row["labels"]) for row in rows)
    first = rows[0]
    assert first["prompt"] == "Compute $\\sqrt{16}$." and first["labels"] == [True, True]
    # The screening record's first step is neutral (False with neutral=negative); the row goes on.
    assert {"prompt": "Compute $\\sqrt{16}$.", "completions": first["completions"], "labels": [False, True]} in rows


@pytest.mark.django_db
def test_trl_neutral_negative_rows_end_at_the_first_minus_one_rating(tmp_path):
    """Issue 11: a(+1) b(0) c(-1) with alternative c2(+1), exported with neutral=negative."""
    source = tmp_path / "neutral.jsonl"
    source.write_text(json.dumps(NEUTRAL_THEN_ERROR) + "\n")
    call_command("import_prm800k", str(source), project="neutral", no_progress=True, stdout=io.StringIO())
    ml = member_client(Project.objects.get(slug="neutral"), "ml-neutral", Role.ML_ENGINEER)
    response = ml.get("/api/v1/projects/neutral/export/?format=trl&neutral=negative&alternatives=branch")
    assert response.status_code == 200
    rows = [(row["completions"], row["labels"]) for row in lines_of(response)]
    assert rows == [(["a", "b", "c"], [True, False, False]), (["a", "b", "c2"], [True, False, True])]


@pytest.mark.django_db
def test_phase1_records_export_the_line_the_labeler_walked_in_every_step_format(clients):
    """A phase-1 step the labeler rewrote (edge_cases.jsonl: "What is $2+2$?" turns down two -1
    completions and writes "2+2 is 4.") is their step in critique and Math-Shepherd lines, as in
    TRL's rows, not the first completion they turned down."""
    problem = "What is $2+2$?"

    def of_problem(rows, key):
        return [row for row in rows if row[key].startswith(problem)]

    trl = of_problem(lines_of(clients["ml"].get("/api/v1/projects/exp/export/?format=trl&alternatives=drop")), "prompt")
    assert [row["completions"] for row in trl] == [["2+2 is 4."]]
    critique = of_problem(lines_of(clients["ml"].get("/api/v1/projects/exp/export/?format=critique")), "prompt")
    assert [row["steps"] for row in critique] == [["2+2 is 4.", ""]]
    assert critique[0]["verdicts"] == []  # the labeler rated the completions they turned down, not their own step
    shepherd = of_problem(lines_of(clients["ml"].get("/api/v1/projects/exp/export/?format=math_shepherd")), "input")
    assert [row["label"] for row in shepherd] == [f"{problem} Step 1: 2+2 is 4. +"]
    # the rows of phase-2 records keep their main line (the first completion at a found error)
    all_critique = lines_of(clients["ml"].get("/api/v1/projects/exp/export/?format=critique"))
    assert any(verdict["rating"] == -1 for row in all_critique for verdict in row["verdicts"])


@pytest.mark.django_db
def test_a_phase1_label_made_in_the_app_exports_the_line_the_labeler_walked():
    """In phase-1 mode the app keeps the solution's pre-generated steps, so the record has them:
    the critique and Math-Shepherd lines read it as phase 2 and showed the step the labeler rated -1
    and turned down, with the +1 of the alternative they went on with."""
    from django.contrib.auth import get_user_model

    from annotate.models import Membership
    from annotate.services import queue
    from labeling_api.serializers_submit import submit_payload
    from tests.labeling_api.exports.helpers import add_solution

    project = Project.objects.create(slug="walk1", name="Walk", labeling_mode="phase1", overlap=1)
    annotator = get_user_model().objects.create_user("ann-walk")
    Membership.objects.create(project=project, user=annotator, role=Role.ANNOTATOR)
    ml = member_client(project, "ml-walk", Role.ML_ENGINEER)
    add_solution(project, ["$\\sqrt{49}=8$.", "So the answer is 8."])
    better = "$\\sqrt{49}=7$."
    step = lambda index, rating, alternatives=(): {  # noqa: E731
        "index": index,
        "rating": rating,
        "flagged": False,
        "alternatives": [{"text": text, "rating": r, "flagged": False} for text, r in alternatives],
        "human_completion": None,
    }
    payload = {
        "idempotency_key": "walk-1",
        "finish_reason": "solution",
        "total_time_ms": 3000,
        "steps": [step(0, -1, [(better, 1)]), step(1, 1)],
    }
    assignment = queue.claim_next(project=project, user=annotator)
    submit_payload(assignment=assignment, user=annotator, payload=payload)
    (record,) = lines_of(ml.get("/api/v1/projects/walk1/export/?format=prm800k"))
    assert record["label"]["steps"][0]["chosen_completion"] == 1  # went on with the alternative
    (critique,) = lines_of(ml.get("/api/v1/projects/walk1/export/?format=critique"))
    assert critique["steps"] == [better, "So the answer is 8."]
    assert [(v["index"], v["rating"]) for v in critique["verdicts"]] == [(0, 1), (1, 1)]
    (shepherd,) = lines_of(ml.get("/api/v1/projects/walk1/export/?format=math_shepherd"))
    assert shepherd["label"] == f"What is $1+1$? Step 1: {better} +\nStep 2: So the answer is 8. +"
    rows = lines_of(ml.get("/api/v1/projects/walk1/export/?format=trl&alternatives=drop"))
    assert [(row["completions"], row["labels"]) for row in rows] == [([better, "So the answer is 8."], [True, True])]
