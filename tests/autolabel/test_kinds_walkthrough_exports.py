"""Walkthrough of agent traces through the automatic-label exports, on PostgreSQL: an annotator labels
a trace through the API (its observation shown, not rated) and the ML engineer reads it back as
Math-Shepherd lines (labels=human) beside the TRL rows of the same label."""

from __future__ import annotations

import pytest

from annotate.models import Project, Role
from tests.api_clients import member_client
from tests.labeling_api.test_kinds_api import _lines, _step, _submit, _upload

pytestmark = pytest.mark.django_db

TAG = "ки"
TRACE = {
    "kind": "trace",
    "problem": "What is the population of Paris times 2?",
    "ground_truth_answer": "4200000",
    "steps": [
        {"type": "thought", "text": "Search the population."},
        {"type": "tool_call", "text": 'search({"q": "population of Paris"})'},
        {"type": "observation", "text": "Paris has 2.1 million inhabitants."},
        {"type": "thought", "text": "2.1 million times 2 is 4.4 million."},
        {"type": "answer", "text": "4400000"},
    ],
}


def test_math_shepherd_human_lines_go_on_past_an_unrated_observation() -> None:
    project = Project.objects.create(slug="traces")
    lead = member_client(project, "lead", Role.LEAD)
    annotator = member_client(project, "ann", Role.ANNOTATOR)
    _upload(lead, "traces", [TRACE])
    task = annotator.get("/api/v1/projects/traces/tasks/next/").json()
    steps = [_step(0, 1), _step(1, 1), _step(2, None), _step(3, -1), _step(4, None)]
    assert _submit(annotator, task, steps, finish_reason="found_error").status_code == 201

    ml = member_client(project, "ml", Role.ML_ENGINEER)
    [line] = _lines(ml.get("/api/v1/projects/traces/export/?format=math_shepherd&labels=human"))
    [row] = _lines(ml.get("/api/v1/projects/traces/export/?format=trl"))
    # The observation opens the step after it, as in the TRL row: the line went on to the
    # annotator's first error (it stopped at the observation, all `+`: the -1 was lost).
    assert row["completions"][2] == "Paris has 2.1 million inhabitants.\n\n2.1 million times 2 is 4.4 million."
    assert row["labels"] == [True, True, False]
    texts = [step["text"] for step in TRACE["steps"]]
    observed = texts[2] + "\n\n" + texts[3]
    question = TRACE["problem"]
    assert line == {
        "input": f"{question} Step 1: {texts[0]} {TAG}\nStep 2: {texts[1]} {TAG}\n"
        f"Step 3: {observed} {TAG}\nStep 4: {texts[4]} {TAG}",
        "label": f"{question} Step 1: {texts[0]} +\nStep 2: {texts[1]} +\nStep 3: {observed} -\nStep 4: {texts[4]} -",
        "task": "",
    }


def test_automatic_labels_of_a_trace_export_its_steps_as_people_labels_do() -> None:
    """Rollouts label every step, observations too; exported, a trace's observation opens the next
    step's text as in the human rows, so a PRM trained on both sees one step structure."""
    from annotate.models import Solution
    from autolabel.models import AutoSource, AutoStepLabel

    project = Project.objects.create(slug="traces")
    lead = member_client(project, "lead", Role.LEAD)
    _upload(lead, "traces", [TRACE])
    trace = Solution.objects.get()
    AutoStepLabel.objects.bulk_create(
        AutoStepLabel(solution=trace, index=i, source=AutoSource.ROLLOUT, label=label)
        for i, label in enumerate([1, 1, 1, -1, -1])
    )
    ml = member_client(project, "ml", Role.ML_ENGINEER)
    [line] = _lines(ml.get("/api/v1/projects/traces/export/?format=math_shepherd&labels=auto"))
    [row] = _lines(ml.get("/api/v1/projects/traces/export/?format=trl&labels=auto"))
    texts = [step["text"] for step in TRACE["steps"]]
    observed = texts[2] + "\n\n" + texts[3]
    assert row == {
        "prompt": TRACE["problem"],
        "completions": [texts[0], texts[1], observed, texts[4]],
        "labels": [True, True, False, False],
    }
    assert line["label"].endswith(f"Step 3: {observed} -\nStep 4: {texts[4]} -")

    # a project that rates observations keeps them as steps of their own
    Project.objects.filter(pk=project.pk).update(rate_observations=True)
    [row] = _lines(ml.get("/api/v1/projects/traces/export/?format=trl&labels=auto"))
    assert row["completions"] == texts and row["labels"] == [True, True, True, False, False]


def test_an_automatic_first_error_on_an_observation_agrees_with_the_persons_on_the_next_step() -> None:
    """Was: rollouts put the first `-` on the observation (the prefix up to it no longer reaches the
    answer) and the annotator, who does not rate observations, on the thought after it: the panel
    counted a first-error disagreement and a missed error for the same finding."""
    from annotate.models import Solution
    from autolabel.models import AutoSource, AutoStepLabel

    project = Project.objects.create(slug="traces")
    lead = member_client(project, "lead", Role.LEAD)
    annotator = member_client(project, "ann", Role.ANNOTATOR)
    _upload(lead, "traces", [TRACE])
    trace = Solution.objects.get()
    AutoStepLabel.objects.bulk_create(
        AutoStepLabel(solution=trace, index=i, source=AutoSource.ROLLOUT, label=label)
        for i, label in enumerate([1, 1, -1, -1, -1])
    )
    task = annotator.get("/api/v1/projects/traces/tasks/next/").json()
    steps = [_step(0, 1), _step(1, 1), _step(2, None), _step(3, -1), _step(4, None)]
    assert _submit(annotator, task, steps, finish_reason="found_error").status_code == 201
    panel = lead.get("/api/v1/projects/traces/stats/").json()["auto_labels"]
    assert panel["pairs_compared"] == 1
    assert panel["first_error_agreement"] == 1.0  # was 0.0
    assert panel["counts"] == {"tp": 1, "fp": 0, "fn": 0}
