"""The app's retrain on agent traces (issue 18): trained on labels whose observations are unrated,
it scores open traces without letting an observation, which nobody rates, make a trace uncertain."""

from __future__ import annotations

import json

import pytest
from django.test import override_settings

from annotate.models import Project, Step, Strategy
from annotate.services.imports import import_file
from core.models import JobStatus
from ml import services
from ml.models import StepScore
from tests.ml.loop_helpers import TINY
from tests.ml.trace_records import trace_record


def _plain_trace(n: int) -> dict:
    record = trace_record(n, wrong=n % 2 == 0)
    question = record["question"]
    steps = [
        {"type": t, "text": s} for t, s in zip(question["step_types"], question["pre_generated_steps"], strict=True)
    ]
    return {
        "kind": "trace",
        "problem": question["problem"],
        "ground_truth_answer": question["ground_truth_answer"],
        "steps": steps,
    }


@pytest.mark.django_db
@pytest.mark.parametrize("rate_observations", [False, True])
def test_retrain_on_traces_scores_open_traces_and_masks_unrated_observations(tmp_path, rate_observations):
    project = Project.objects.create(
        slug="traces", selection_strategy=Strategy.UNCERTAINTY, rate_observations=rate_observations
    )
    path = tmp_path / "traces.jsonl"
    lines = [trace_record(n, wrong=n % 3 == 0) for n in range(40)] + [_plain_trace(n) for n in range(40, 52)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = import_file(project=project, path=path)
    assert (result.annotations_created, result.solutions_created) == (40, 52)

    # the per-step score record (off by default) shows what each step type was given
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY, ML_STORE_STEP_SCORES=True):
        run = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)

    assert run.status == JobStatus.SUCCEEDED, run.error
    assert run.metrics["n_examples"] == 40 * 3  # thought, tool call, answer: observations are no examples
    open_steps = Step.objects.filter(solution__project=project, solution__is_open=True)
    scores = StepScore.objects.filter(training_run=run)
    assert scores.count() == open_steps.count() == 12 * 4
    observation = list(scores.filter(step__step_type="observation").values_list("uncertainty", flat=True))
    if rate_observations:
        assert all(u > 0 for u in observation)
    else:
        assert observation == [0.0] * 12
    assert all(u > 0 for u in scores.exclude(step__step_type="observation").values_list("uncertainty", flat=True))
