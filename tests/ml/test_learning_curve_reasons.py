"""The dashboard's learning curve says why it is empty and what to do: no run yet, a run training,
no run succeeded, held-out switched off, or labels on too few problems to hold any out. Real
(tiny) training runs on PostgreSQL; the reason reaches the stats API."""

from __future__ import annotations

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from annotate.models import Role
from core.models import JobStatus
from ml import selectors, services
from ml.models import TrainingRun
from tests.factories import make_user
from tests.ml.loop_helpers import TINY, planted_project

pytestmark = pytest.mark.django_db


def _train(project, tmp_path, **config) -> TrainingRun:
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG={**TINY, **config}):
        return services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)


def test_no_run_yet_says_when_runs_start():
    project = planted_project("none", labeled=8, open_=4, retrain_every=200)
    summary = selectors.model_summary(project=project)
    assert summary["learning_curve"] == []
    assert summary["curve_empty"]["reason"] == "no_runs"
    assert summary["curve_empty"]["message"].startswith("No training run yet. Runs start by themselves after every 200")
    assert summary["curve_empty"]["message"].endswith("or press Retrain now.")
    assert "the next submitted label" not in summary["curve_empty"]["message"]
    project.retrain_every, project.step_labels_since_run = 5, 12  # imported labels past the threshold
    assert (
        "since the last run; the next submitted label starts one)"
        in selectors.model_summary(project=project)["curve_empty"]["message"]
    )
    project.retrain_every = 0
    assert "Automatic retraining is off" in selectors.model_summary(project=project)["curve_empty"]["message"]


def test_a_compare_project_counts_preferences_since_the_last_run_not_imported_step_labels():
    from annotate.models import Project

    # the cheap counter holds the step labels imported with the solutions; the trigger reads preferences
    project = Project.objects.create(slug="duel", task_kind="compare", retrain_every=500, step_labels_since_run=126)
    message = selectors.model_summary(project=project)["curve_empty"]["message"]
    assert "after every 500 new preferences (0 since the last run)" in message


def test_a_run_on_three_problems_has_no_heldout_split_and_says_so(tmp_path):
    project = planted_project("three", labeled=12, open_=4)  # four solutions per problem: 3 problems
    run = _train(project, tmp_path)
    assert run.status == JobStatus.SUCCEEDED, run.error
    assert run.metrics["n_heldout"] == 0 and run.metrics["n_problems"] == 3
    summary = selectors.model_summary(project=project)
    assert summary["learning_curve"] == []
    why = summary["curve_empty"]
    assert why["reason"] == "too_few_problems"
    assert f"Run #{run.pk} trained on labels of 3 problems" in why["message"]
    assert "on at least 4 problems (heldout_fraction 0.15" in why["message"]
    assert why["message"].endswith("Label solutions of more problems, then retrain.")


def test_heldout_fraction_zero_is_named_with_where_to_set_it(tmp_path):
    project = planted_project("off", labeled=40, open_=4)
    run = _train(project, tmp_path, heldout_fraction=0.0)
    assert run.status == JobStatus.SUCCEEDED, run.error
    why = selectors.model_summary(project=project)["curve_empty"]
    assert why["reason"] == "heldout_off"
    assert "heldout_fraction is 0.0 (ML_TRAINING_CONFIG" in why["message"] and "default is 0.15" in why["message"]


def test_training_and_failed_runs_say_so_and_a_curve_clears_the_reason(tmp_path):
    project = planted_project("later", labeled=40, open_=4)
    waiting = services.request_retrain(project=project, enqueue=False)
    assert selectors.model_summary(project=project)["curve_empty"]["reason"] == "training"
    TrainingRun.objects.filter(pk=waiting.pk).update(status=JobStatus.FAILED, error="Traceback\nValueError: boom")
    why = selectors.model_summary(project=project)["curve_empty"]
    assert why["reason"] == "failed" and f"run #{waiting.pk} failed. Its error is in the runs table" in why["message"]
    # the error text itself is shown beside the latest run and in the runs table, not a third time
    assert "boom" not in why["message"]
    run = _train(project, tmp_path)  # 10 problems: one or two held out
    assert run.status == JobStatus.SUCCEEDED and run.metrics["n_heldout"] > 0, run.error
    summary = selectors.model_summary(project=project)
    assert [p["run"] for p in summary["learning_curve"]] == [run.pk]
    assert summary["curve_empty"] is None


def test_the_reason_reaches_the_stats_api():
    project = planted_project("api", labeled=4, open_=4)
    client = APIClient()
    client.force_authenticate(make_user("lena", project=project, role=Role.LEAD))
    body = client.get(f"/api/v1/projects/{project.slug}/stats/").json()
    assert body["model"]["curve_empty"]["reason"] == "no_runs"
