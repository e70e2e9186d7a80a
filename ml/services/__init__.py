"""The model loop's services: what the API, the admin, the commands and the tasks call.

- config: per-run training overrides checked against PRMConfig, deployment defaults, paths;
- runs: requesting a run (single flight), claiming and running it, activation, the
  stale-run sweeper;
- scoring: scoring open solutions, writing queue priorities, rescoring, the scoring API;
- activation: rollback to an earlier run and its rescoring job.
"""

from ml.services.activation import reorder_with_active_model, rescore_after_activation, rollback
from ml.services.config import (
    CONFIG_KEYS,
    STALE_AFTER,
    NoActiveModel,
    RunNotActivatable,
    artifact_abspath,
    training_config,
    validate_config,
)
from ml.services.examples import auto_label_examples, build_examples
from ml.services.runs import (
    request_retrain,
    run_training,
    sweep_stale_runs,
    sweep_training_runs,
)
from ml.services.scoring import active_run, load_prm, rescore_project, score_open_solutions, score_steps
from ml.services_auto import label_total


def rank_solutions(*, project, problem: str, solutions: list[list[str]], rank_by: str | None = None) -> dict:
    """Best-of-N: score candidates (score_steps, or the reward model for rank_by=reward) and, when
    rank_by is given, add `ranking`: indices best first (ties keep the given order)."""
    from core.errors import Invalid
    from ml.services.reward import score_with_reward

    is_compare = project.task_kind == "compare"
    if rank_by == "reward" or (rank_by is None and is_compare):
        if not is_compare:
            raise Invalid({"rank_by": ["reward needs a compare project (its reward model)."]})
        result = score_with_reward(project=project, problem=problem, solutions=solutions)
        key = "reward"
    else:
        if is_compare:
            raise Invalid({"rank_by": ["a compare project has a reward model: use rank_by=reward."]})
        result = score_steps(project=project, problem=problem, solutions=solutions)
        key = "score_min" if rank_by == "min" else "score_product"
    if rank_by is not None:
        values = [s[key] for s in result["solutions"]]
        result["rank_by"] = rank_by
        result["ranking"] = sorted(range(len(values)), key=lambda i: (-values[i], i))
    return result


__all__ = [
    "rank_solutions",
    "auto_label_examples",
    "CONFIG_KEYS",
    "STALE_AFTER",
    "NoActiveModel",
    "RunNotActivatable",
    "active_run",
    "artifact_abspath",
    "build_examples",
    "label_total",
    "load_prm",
    "request_retrain",
    "reorder_with_active_model",
    "rescore_after_activation",
    "rescore_project",
    "rollback",
    "run_training",
    "score_open_solutions",
    "score_steps",
    "sweep_stale_runs",
    "sweep_training_runs",
    "training_config",
    "validate_config",
]
