"""The Bradley-Terry reward model of compare projects: the pure loop on a planted signal, and a
training run through a real Celery worker on PostgreSQL and Redis that records held-out pairwise
accuracy above chance, activates, and reorders the open pairs by the model's uncertainty."""

from __future__ import annotations

import numpy as np
import pytest
from django.test import override_settings

from annotate.models import Comparison, Preference, Project
from core.models import JobStatus
from ml import selectors, services
from ml.models import TrainingRun
from ml.prm.config import ConfigError
from ml.prm.reward import RewardConfig, load_reward_model, train_reward_model
from tests.factories import make_user
from tests.ml.reward_helpers import planted_compare_project, planted_pair_examples


def test_config_is_validated_at_construction():
    with pytest.raises(ConfigError, match="lr"):
        RewardConfig(lr=-1)
    with pytest.raises(ConfigError, match="char_ngrams"):
        RewardConfig(char_ngrams=(9,))
    with pytest.raises(ConfigError, match="max_epochs"):
        RewardConfig(max_epochs=0)


def test_the_pure_loop_learns_a_planted_preference():
    checkpoint = train_reward_model(planted_pair_examples(300, seed=1), RewardConfig())
    heldout = checkpoint["metrics"]["heldout"]
    assert heldout["n_pairs"] == 60
    assert heldout["pairwise_accuracy"] > 0.6, heldout


@pytest.mark.django_db(transaction=True)
def test_a_reward_model_trains_through_the_worker_beats_chance_and_reorders_pairs(tmp_path):
    from tests.celery_worker import celery_worker, purge_broker, wait_for

    project = planted_compare_project("bt", 330, labeled=300)
    purge_broker()
    with override_settings(MEDIA_ROOT=tmp_path), celery_worker(queues="ml"):
        run = services.request_retrain(project=project)
        wait_for(
            lambda: TrainingRun.objects.get(pk=run.pk).status in ("succeeded", "failed"), timeout=120, message="train"
        )
    run.refresh_from_db()
    assert run.status == JobStatus.SUCCEEDED, run.error
    assert run.is_active and run.label_count == 300
    heldout = run.metrics["heldout"]
    assert heldout["n_pairs"] == 60 and heldout["pairwise_accuracy"] > 0.5, heldout
    assert run.metrics["model"] == "bradley_terry"
    # the dashboard's learning curve shows it
    curve = selectors.model_summary(project=project)["learning_curve"]
    assert curve[-1]["pairwise_accuracy"] == heldout["pairwise_accuracy"] and curve[-1]["n_pairs"] == 60
    # open pairs carry the model's probability; the least certain comes first in the queue
    open_pairs = list(Comparison.objects.filter(project=project, is_open=True).order_by("-priority", "id"))
    assert len(open_pairs) == 30 and all(p.model_probability is not None for p in open_pairs)
    assert abs(open_pairs[0].model_probability - 0.5) <= abs(open_pairs[-1].model_probability - 0.5)
    # the model ranks unseen good solutions above bad ones more often than not
    model = load_reward_model(tmp_path / run.artifact_path)
    wins = 0
    for pair in open_pairs:
        good, bad = (pair.solution_a, pair.solution_b)
        rewards = model.rewards(
            [
                (pair.problem.text, [s.text for s in good.steps.all()]),
                (pair.problem.text, [s.text for s in bad.steps.all()]),
            ]
        )
        wins += rewards[0] > rewards[1]
    assert wins > 15, wins


@pytest.mark.django_db(transaction=True)
def test_preferences_trigger_an_automatic_retrain_after_retrain_every(tmp_path):
    project = planted_compare_project("auto", 12, labeled=10)
    Project.objects.filter(pk=project.pk).update(retrain_every=3)
    user = Preference.objects.filter(project=project).first().annotator
    pairs = list(Comparison.objects.filter(project=project, is_open=True))
    with override_settings(MEDIA_ROOT=tmp_path):
        first = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
        assert first.status == JobStatus.SUCCEEDED and first.metrics["preference_watermark"] > 0
        for i, pair in enumerate(pairs):  # two new preferences: not yet due
            Preference.objects.create(
                project=project,
                comparison=pair,
                annotator=user,
                labeler_uuid="x",
                preferred="A",
                shown="A",
                strength=1,
                idempotency_key=f"new{i}",
                submitted_at=pair.created_at,
            )
        assert TrainingRun.objects.filter(project=project).count() == 1
        Preference.objects.create(
            project=project,
            comparison=pairs[0],
            annotator=make_user("auto-2"),
            labeler_uuid="y",
            preferred="B",
            shown="B",
            strength=1,
            idempotency_key="third",
            submitted_at=pairs[0].created_at,
        )
    waiting = TrainingRun.objects.filter(project=project).exclude(pk=first.pk)
    assert [(run.status, run.config["extra"]["trigger"]) for run in waiting] == [("created", "auto")]


@pytest.mark.django_db
def test_a_compare_project_rolls_back_to_an_earlier_reward_model_and_reorders_its_pairs(tmp_path):
    """Was: the rollback job read the reward model's file as a PRM, failed ("lr: must be a number in
    [0.0, 1.0], got 2.0") and put the newer model back: a compare project could not roll back."""
    project = planted_compare_project("cmprb", 130, labeled=100)
    with override_settings(MEDIA_ROOT=tmp_path):
        first = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
        second = services.run_training(
            run_id=services.request_retrain(project=project, config={"seed": 3}, enqueue=False).pk
        )
        assert first.status == second.status == JobStatus.SUCCEEDED, (first.error, second.error)
        Comparison.objects.filter(project=project, is_open=True).update(model_probability=None, priority=0)
        services.rollback(project=project, run=first)
        reordered = services.rescore_after_activation(run_id=first.pk, previous_id=second.pk)
    assert TrainingRun.objects.get(project=project, is_active=True) == first
    open_pairs = list(Comparison.objects.filter(project=project, is_open=True))
    assert reordered == len(open_pairs) == 30
    model = load_reward_model(tmp_path / first.artifact_path)
    for pair in open_pairs[:5]:  # the first model's probabilities, not the second's
        a, b = (
            (pair.problem.text, [s.text for s in solution.steps.order_by("index")])
            for solution in (pair.solution_a, pair.solution_b)
        )
        ra, rb = model.rewards([a, b])
        assert pair.model_probability == pytest.approx(1 / (1 + np.exp(-(ra - rb))), abs=1e-6)
        assert pair.priority == pytest.approx(1 - abs(2 * pair.model_probability - 1), abs=1e-6)
