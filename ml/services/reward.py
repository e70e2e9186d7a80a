"""The reward model loop of compare projects: a training run on the project's preferences.

Same single flight, claim, artifact and activation as step-label runs (ml.services.runs calls
`run_reward_training` for a compare project after claiming the run). Metrics carry the held-out
pairwise accuracy under `heldout`, so the dashboard's learning curve shows it. After training,
open pairs are reordered by the model's uncertainty: P(A preferred) nearest 0.5 first.
"""

from __future__ import annotations

import dataclasses
import time
from collections import defaultdict
from collections.abc import Callable

import numpy as np
from django.db.models import Max

from annotate.models import Comparison, Preference, Project, Step
from ml.models import TrainingRun
from ml.prm import reward as bt
from ml.prm.reward import PairExample, RewardConfig, RewardModel, save_reward_checkpoint, train_reward_model
from ml.prm.reward_features import StepRisk, prm_step_risk
from ml.services.config import PRM_PROJECT_NEEDED, NoActiveModel, artifact_abspath

REWARD_KEYS = {f.name for f in dataclasses.fields(RewardConfig)} - {"extra"}


def reward_config(overrides: dict) -> RewardConfig:
    """The run's settings: RewardConfig's own keys from the run's config (PRM keys do not apply)."""
    return RewardConfig(**{k: v for k, v in overrides.items() if k in REWARD_KEYS})


def prm_source_run(*, slug: str, user=None) -> TrainingRun:
    """The active PRM of the steps project `slug` (the "prm" features' source).

    With `user` (whoever asked for the run), only a project where they may score with the model: a
    lead or ml_engineer there. A missing project, one they may not use and one without a PRM get
    the same answer, so a run's config cannot probe which slugs exist.
    """
    from annotate import access
    from ml.services.scoring import active_run

    refused = NoActiveModel(
        f"prm_project {slug!r}: no steps project of that slug with an active PRM that you may score with "
        "(lead or ml_engineer there)"
    )
    try:
        if user is None:  # the shell's retrain command, an automatic run: no one to check
            project = Project.objects.get(slug=slug)
        else:
            project = access.project_for(user=user, slug=slug, action="score")
    except (Project.DoesNotExist, access.ProjectNotFound, access.ActionForbidden):
        raise refused from None
    run = active_run(project=project)
    if run is None or (run.metrics or {}).get("model") == "bradley_terry":
        raise refused
    return run


def _step_risk(artifact: str) -> StepRisk:
    from ml.prm.train import load_checkpoint

    return prm_step_risk(load_checkpoint(artifact_abspath(artifact)))


def load_reward_model(path) -> RewardModel:
    """A reward model file, with the PRM it was trained with when its features read PRM scores."""
    model = bt.load_reward_model(path)
    if model.needs_prm:
        if not model.prm_artifact:
            raise NoActiveModel("this reward model reads PRM scores but does not name its PRM")
        model.step_risk = _step_risk(model.prm_artifact)
    return model


def _steps_by_solution(solution_ids: set[int]) -> dict[int, list[str]]:
    steps: dict[int, list[str]] = defaultdict(list)
    rows = Step.objects.filter(solution_id__in=solution_ids).order_by("solution_id", "index")
    for solution_id, text in rows.values_list("solution_id", "text"):
        steps[solution_id].append(text)
    return steps


def build_pair_examples(*, project: Project, up_to_preference_id: int) -> list[PairExample]:
    """One example per preference (gold pairs included), in pair terms (A = solution_a)."""
    rows = list(
        Preference.objects.filter(project=project, id__lte=up_to_preference_id)
        .order_by("id")
        .values_list(
            "comparison__problem__text",
            "comparison__solution_a_id",
            "comparison__solution_b_id",
            "preferred",
            "strength",
        )
    )
    steps = _steps_by_solution({r[1] for r in rows} | {r[2] for r in rows})
    return [
        PairExample(problem, steps[a], steps[b], preferred, strength) for problem, a, b, preferred, strength in rows
    ]


def score_open_pairs(*, project: Project, model: RewardModel) -> list[Comparison]:
    """The open pairs with the model's P(A preferred) and priority = how unsure it is (1 at P = 0.5,
    0 at certainty); written by apply_pair_scores when the run activates."""
    pairs = list(
        Comparison.objects.filter(project=project, is_open=True).values_list(
            "id", "problem__text", "solution_a_id", "solution_b_id"
        )
    )
    if not pairs:
        return []
    steps = _steps_by_solution({p[2] for p in pairs} | {p[3] for p in pairs})
    reward_a = model.rewards([(p[1], steps[p[2]]) for p in pairs])
    reward_b = model.rewards([(p[1], steps[p[3]]) for p in pairs])
    prob = 1.0 / (1.0 + np.exp(-(reward_a - reward_b)))
    return [
        Comparison(pk=p[0], model_probability=float(q), priority=float(1.0 - abs(2 * q - 1)))
        for p, q in zip(pairs, prob, strict=True)
    ]


def apply_pair_scores(scored: list[Comparison]) -> None:
    Comparison.objects.bulk_update(scored, ["model_probability", "priority"], batch_size=1000)


def train_reward_run(*, run: TrainingRun, log: Callable[[str], None] | None = None) -> tuple[dict, dict, str, int]:
    """Train on the project's preferences so far; returns (metrics, config dict, artifact, label count)."""
    t0 = time.perf_counter()
    project = run.project
    config = reward_config({k: v for k, v in run.config.items() if k != "extra"})
    config.extra = {**(run.config.get("extra") or {}), "run_id": run.pk}
    watermark = (run.metrics or {}).get("preference_watermark")
    if watermark is None:  # claimed before preference watermarks were recorded
        watermark = Preference.objects.filter(project=project).aggregate(m=Max("id"))["m"] or 0
    pairs = build_pair_examples(project=project, up_to_preference_id=watermark)
    if log:
        log(f"run {run.pk}: {len(pairs)} preferences")
    prm_artifact, step_risk = None, None
    if "prm" in config.features:
        if not config.prm_project:
            raise NoActiveModel(PRM_PROJECT_NEEDED)  # refused at request time too (config.validate_run_config)
        # the requester's access again at training time: a role taken away since the request counts
        prm_artifact = prm_source_run(slug=config.prm_project, user=run.requested_by).artifact_path
        step_risk = _step_risk(prm_artifact)
    checkpoint = train_reward_model(pairs, config, log=log, step_risk=step_risk)
    checkpoint["prm_artifact"] = prm_artifact  # the PRM run's file: a later activation there changes nothing here
    artifact = f"models/{project.slug}/reward-run-{run.pk}.pt"
    save_reward_checkpoint(checkpoint, artifact_abspath(artifact))
    t_train = time.perf_counter() - t0
    heldout = checkpoint["metrics"]["heldout"]
    metrics = {
        "model": "bradley_terry",
        "preference_watermark": watermark,
        "pairwise_accuracy": heldout["pairwise_accuracy"],
        "n_train": checkpoint["n_train"],
        "n_heldout": checkpoint["n_heldout"],
        "n_problems": checkpoint["n_problems"],
        "best_epoch": checkpoint["best_epoch"],
        "heldout": heldout,
        "train": checkpoint["metrics"]["train"],
        "train_seconds": round(t_train, 3),
    }
    return metrics, config.to_dict(), artifact, len(pairs)


def score_with_reward(*, project: Project, problem: str, solutions: list[list[str]]) -> dict:
    """Rewards of candidate solutions under a compare project's active reward model."""
    from ml.services.scoring import active_run

    run = active_run(project=project)
    if run is None or (run.metrics or {}).get("model") != "bradley_terry":
        raise NoActiveModel(f"Project {project.slug} has no active reward model yet: compare pairs and train one.")
    model = load_reward_model(artifact_abspath(run.artifact_path))
    rewards = model.rewards([(problem, steps) for steps in solutions])
    return {
        "model": {"training_run": run.pk, "generation": project.current_generation},
        "solutions": [{"reward": float(r)} for r in rewards],
    }
