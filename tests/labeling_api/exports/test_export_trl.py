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
