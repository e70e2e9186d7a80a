"""The Bradley-Terry reward model through a real Celery worker (PostgreSQL, Redis) beyond n-grams:

- on real pairs (ProcessBench and MR-Ben: two solutions of one problem, one graded right and one
  wrong, the right one preferred) with the solution-shape features, above chance on held-out
  problems (skipped when ../shared/data is absent);
- with the "prm" features: a steps project's active PRM scores the steps, the run records that
  PRM's file, and scoring (best-of-N, the queue) reads the same PRM.

bench/results/reward.md has the cross-validated numbers with intervals for every feature set.
"""

from __future__ import annotations

import uuid

import pytest
import torch
from django.test import override_settings

from annotate.models import Comparison, Preference, Problem, Project, Solution, Step
from core.models import JobStatus
from ml import services
from ml.models import TrainingRun
from ml.prm.config import ConfigError, PRMConfig
from ml.prm.data import DATA
from ml.prm.graded import right_wrong_pairs, shared_groups
from ml.prm.reward import PairExample
from ml.prm.synthetic import planted_examples
from ml.prm.train import save_checkpoint, train_prm
from ml.services.reward import score_with_reward
from tests.factories import make_user
from tests.ml.reward_helpers import planted_pair_examples


def _project_of_pairs(slug: str, pairs: list[PairExample]) -> Project:
    """A compare project holding `pairs`, each answered once as its PairExample says."""
    # no automatic retrain while the preferences are written: the test asks for its own run
    project = Project.objects.create(slug=slug, task_kind="compare", retrain_every=0)
    user = make_user(f"{slug}-ann")
    problems: dict[str, Problem] = {}
    solutions: dict[tuple[str, tuple[str, ...]], Solution] = {}

    def solution(problem: Problem, steps) -> Solution:
        key = (problem.text, tuple(steps))
        if key not in solutions:
            made = Solution.objects.create(
                project=project, problem=problem, content_hash=uuid.uuid4().hex, n_steps=len(steps)
            )
            Step.objects.bulk_create(Step(solution=made, index=j, text=t) for j, t in enumerate(steps))
            solutions[key] = made
        return solutions[key]

    for i, pair in enumerate(pairs):
        if pair.problem not in problems:
            problems[pair.problem] = Problem.objects.create(
                project=project, text=pair.problem, content_hash=uuid.uuid4().hex
            )
        problem = problems[pair.problem]
        a, b = solution(problem, pair.steps_a), solution(problem, pair.steps_b)
        preferred = pair.preferred
        if a.pk > b.pk:  # a pair's solution_a has the lower id
            a, b, preferred = b, a, {"A": "B", "B": "A"}[preferred]
        comparison = Comparison.objects.create(
            project=project, problem=problem, solution_a=a, solution_b=b, is_open=False
        )
        Preference.objects.create(
            project=project,
            comparison=comparison,
            annotator=user,
            labeler_uuid="x",
            preferred=preferred,
            shown=preferred,
            strength=2,
            idempotency_key=f"k{i}",
            submitted_at=comparison.created_at,
        )
    return project


def _train_through_worker(project: Project, config: dict) -> TrainingRun:
    from tests.celery_worker import celery_worker, purge_broker, wait_for

    purge_broker()
    with celery_worker(queues="ml"):
        run = services.request_retrain(project=project, config=config)
        assert not getattr(run, "merged", False)
        wait_for(
            lambda: TrainingRun.objects.get(pk=run.pk).status in ("succeeded", "failed"), timeout=180, message="train"
        )
    run.refresh_from_db()
    assert run.status == JobStatus.SUCCEEDED, run.error
    return run


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(not (DATA / "processbench").is_dir() or not (DATA / "mr-ben").is_dir(), reason="no shared data")
def test_real_pairs_through_the_worker_beat_chance_on_held_out_problems(tmp_path):
    groups = shared_groups(DATA)
    pairs = right_wrong_pairs(groups["processbench"]) + right_wrong_pairs(groups["mr-ben"])
    project = _project_of_pairs("real", pairs)
    with override_settings(MEDIA_ROOT=tmp_path):
        # half the problems held out, so the held-out share rests on ~300 pairs
        run = _train_through_worker(project, {"features": ["shape"], "heldout_fraction": 0.5})
    heldout = run.metrics["heldout"]
    assert heldout["n_pairs"] > 250, heldout
    assert heldout["pairwise_accuracy"] > 0.5, heldout
    assert run.config["features"] == ["shape"] and run.label_count == len(pairs)


@pytest.mark.django_db(transaction=True)
def test_prm_features_read_the_named_steps_projects_prm_in_training_and_scoring(tmp_path):
    steps_project = Project.objects.create(slug="prm-source")
    with override_settings(MEDIA_ROOT=tmp_path):
        checkpoint = train_prm(planted_examples(2000), PRMConfig(ensemble_size=2, max_epochs=6, step_hash_dim=4096))
        save_checkpoint(checkpoint, tmp_path / "models" / "prm-source" / "run-1.pt")
        TrainingRun.objects.create(
            project=steps_project,
            status=JobStatus.SUCCEEDED,
            is_active=True,
            artifact_path="models/prm-source/run-1.pt",
            metrics={"model": "prm"},
        )
        compare = _project_of_pairs("uses-prm", planted_pair_examples(200, seed=5))
        with pytest.raises(ConfigError, match="need prm_project"):  # refused when asked, not failed in the worker
            services.request_retrain(project=compare, config={"features": ["prm"]}, enqueue=False)
        run = _train_through_worker(compare, {"features": ["prm"], "prm_project": "prm-source"})
        heldout = run.metrics["heldout"]
        assert heldout["pairwise_accuracy"] > 0.6, heldout  # the PRM sees the planted error steps
        assert (
            torch.load(tmp_path / run.artifact_path, weights_only=False)["prm_artifact"] == "models/prm-source/run-1.pt"
        )
        # best-of-N scoring loads the same PRM: unseen error-free solutions mostly get the higher reward
        wins = 0
        for pair in planted_pair_examples(30, seed=11):
            good, bad = (pair.steps_a, pair.steps_b) if pair.preferred == "A" else (pair.steps_b, pair.steps_a)
            scored = score_with_reward(project=compare, problem=pair.problem, solutions=[list(good), list(bad)])
            assert scored["model"]["training_run"] == run.pk
            wins += scored["solutions"][0]["reward"] > scored["solutions"][1]["reward"]
        assert wins > 15, wins


def test_config_rejects_unknown_feature_parts():
    from ml.prm.config import ConfigError
    from ml.prm.reward import RewardConfig

    with pytest.raises(ConfigError, match="features"):
        RewardConfig(features=("words",))
    with pytest.raises(ConfigError, match="features"):
        RewardConfig(features=())
    assert RewardConfig(features=["shape", "shape", "prm"]).features == ("shape", "prm")


@pytest.mark.django_db
def test_the_training_runs_api_takes_reward_settings_for_compare_projects_only():
    from annotate.models import Role
    from tests.api_clients import member_client

    compare = Project.objects.create(slug="duel-api", task_kind="compare")
    lead = member_client(compare, "duel-lead", Role.LEAD)
    url = "/api/v1/projects/duel-api/training-runs/"
    bad = lead.post(url, {"config": {"features": ["words"]}}, format="json")
    assert bad.status_code == 400 and "features" in bad.json()["config"], bad.content
    # a PRM setting is refused on a compare project (the reward model would train on its defaults),
    # and so is a misspelt top-level key (it ran on the defaults as if no settings were asked for)
    prm_only = lead.post(url, {"config": {"hidden_size": 8}}, format="json")
    assert prm_only.status_code == 400 and "a PRM setting" in str(prm_only.json()["config"]["hidden_size"])
    misspelt = lead.post(url, {"conf": {"max_epochs": 3}}, format="json")
    assert misspelt.status_code == 400 and "did you mean config?" in misspelt.json()["conf"][0]
    assert not TrainingRun.objects.filter(project=compare).exists()
    # the PRM named for the "prm" features must exist with an active model the lead may score with
    unknown = lead.post(url, {"config": {"features": ["shape", "prm"], "prm_project": "x"}}, format="json")
    assert unknown.status_code == 400 and "prm_project" in unknown.json()["config"], unknown.content
    ok = lead.post(url, {"config": {"features": ["shape", "ngrams"]}}, format="json")
    assert ok.status_code == 202, ok.content
    assert TrainingRun.objects.get(project=compare).config["features"] == ["shape", "ngrams"]
    steps = Project.objects.create(slug="steps-api")
    steps_lead = member_client(steps, "steps-lead", Role.LEAD)
    refused = steps_lead.post(
        "/api/v1/projects/steps-api/training-runs/", {"config": {"features": ["shape"]}}, format="json"
    )
    assert refused.status_code == 400 and "features" in refused.json()["config"], refused.content
    assert not TrainingRun.objects.filter(project=steps).exists()
