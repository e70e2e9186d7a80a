"""The model loop's services: what the API, the admin, the commands and the tasks call.

- config: per-run training overrides checked against PRMConfig, deployment defaults, paths;
- runs: requesting a run (single flight), claiming and running it, activation, rollback, the
  stale-run sweeper;
- scoring: scoring open solutions, writing queue priorities, rescoring, the scoring API.
"""

from ml.services.config import (
    CONFIG_KEYS,
    STALE_AFTER,
    NoActiveModel,
    RunNotActivatable,
    artifact_abspath,
    training_config,
    validate_config,
)
from ml.services.runs import (
    auto_label_examples,
    build_examples,
    request_retrain,
    rescore_after_activation,
    rollback,
    run_training,
    sweep_stale_runs,
    sweep_training_runs,
)
from ml.services.scoring import active_run, load_prm, rescore_project, score_open_solutions, score_steps
from ml.services_auto import label_total

__all__ = [
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
