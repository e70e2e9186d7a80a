"""Training configuration: per-run overrides checked against PRMConfig, deployment defaults."""

from __future__ import annotations

import logging
from dataclasses import fields
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings

from annotate.models import Project, TaskKind
from core.errors import Conflict, unknown_name
from ml.prm.config import ConfigError, PRMConfig

if TYPE_CHECKING:
    pass


logger = logging.getLogger("ml.services")

SCORE_BATCH_SOLUTIONS = 2000  # solutions scored per batch (their steps featurized together)
FEATURE_CACHE_MAX_ROWS = 300_000  # per process; past this the cache starts over (memory bound)
STALE_AFTER = timedelta(seconds=settings.ML_STALE_RUN_SECONDS)
# Config keys a caller may override per run (API, command); the rest come from PRMConfig defaults.
CONFIG_KEYS = frozenset(f.name for f in fields(PRMConfig)) - {"extra", "device"}
# A compare project's reward model settings (ml.prm.reward.RewardConfig) that PRMConfig lacks, named
# here so that the web process need not import the reward model (torch) to read them.
REWARD_ONLY_KEYS = frozenset({"features", "prm_project", "dense_lr"})
PRM_PROJECT_NEEDED = 'features "prm" need prm_project: a steps project whose active PRM scores the steps'


class NoActiveModel(Conflict):
    """The project has no active PRM yet."""


class RunNotActivatable(Conflict):
    """Only a succeeded run of the same project, whose artifact exists, can be activated."""


def validate_config(overrides: dict[str, Any]) -> dict[str, Any]:
    """Check per-run training overrides against PRMConfig's fields, types and bounds (PRMConfig
    checks itself on construction); ValueError (a ConfigError, with `.field`) names the key."""
    defaults = {f.name: f.default for f in fields(PRMConfig)}
    for key, value in overrides.items():
        if key == "extra":
            if not isinstance(value, dict):
                raise ConfigError("extra", "must be an object")
            continue
        if key not in CONFIG_KEYS:  # the nearest name, as the API's refusal gives it (`max_epoch`)
            raise ConfigError(*unknown_name({key}, CONFIG_KEYS, kind="training config key"))
        default = defaults[key]
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        elif isinstance(default, float) or default is None:
            ok = (value is None and default is None) or (
                isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
            )
        elif isinstance(default, str):
            ok = isinstance(value, str)
        elif isinstance(default, tuple):
            ok = isinstance(value, list | tuple) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        else:
            ok = True
        if not ok:
            raise ConfigError(key, f"expected a value like {default!r}, got {value!r}")
    PRMConfig.from_dict(overrides)  # bounds and choices: PRMConfig refuses, naming the field (ConfigError)
    return overrides


def training_config(*, overrides: dict[str, Any] | None = None) -> PRMConfig:
    """PRMConfig defaults, then the deployment's defaults (settings.ML_TRAINING_CONFIG, else the
    ML_TRAINING_CONFIG environment variable as JSON), then the run's own overrides."""
    defaults = settings.ML_TRAINING_CONFIG
    config = PRMConfig.from_dict(validate_config({**defaults, **(overrides or {})}))
    if config.featurizer == "local_hf" and not str(config.hf_model_path).strip():
        # Was: accepted (202), then the worker failed the run with huggingface_hub's "OSError: Repo id
        # must use alphanumeric chars ... ''": the model directory is a server path, not set over HTTP.
        raise ConfigError(
            "featurizer",
            "local_hf reads a local Hugging Face model directory, hf_model_path, and none is set: a server "
            "path, set by the deployment (ML_TRAINING_CONFIG) or the shell (manage.py retrain --config)",
        )
    return config


def artifact_abspath(relative: str) -> Path:
    return Path(settings.MEDIA_ROOT) / relative


def validate_run_config(*, project: Project, config: dict[str, Any], user=None) -> None:
    """A steps project's overrides are PRMConfig's; a compare project's RewardConfig's (ConfigError).
    A PRM named for the reward model's features must be one `user` may score with (when given)."""
    if project.task_kind == TaskKind.COMPARE:
        from ml.services.reward import REWARD_KEYS, prm_source_run, reward_config

        unknown = set(config) - REWARD_KEYS - {"extra"}
        if unknown:  # a PRM setting (hidden_size, ensemble_size, ...) would be ignored by the reward model
            name = sorted(unknown)[0]
            why = "a PRM setting, for steps projects" if name in CONFIG_KEYS else "unknown training config key"
            raise ConfigError(name, f"{why}; a compare project's reward model takes {', '.join(sorted(REWARD_KEYS))}")
        reward = reward_config(config)
        # the two go together: either alone was accepted, then the run failed in the worker (no
        # PRM named) or trained without the PRM it named, which its settings still listed
        if "prm" in reward.features:
            if not reward.prm_project:
                raise ConfigError("prm_project", PRM_PROJECT_NEEDED)
            try:
                prm_source_run(slug=reward.prm_project, user=user)
            except NoActiveModel as exc:
                raise ConfigError("prm_project", str(exc)) from None
        elif reward.prm_project:
            raise ConfigError(
                "prm_project",
                'only the "prm" features read a PRM: add "prm" to features, or leave prm_project out '
                f"(features here: {', '.join(reward.features)})",
            )
    else:
        reward_only = sorted(set(config) & REWARD_ONLY_KEYS)
        if reward_only:  # was "unknown training config key", as if misspelt
            raise ConfigError(
                reward_only[0], "a compare project's reward model setting; this project's PRM does not take it"
            )
        training_config(overrides=config)
