"""ML_TRAINING_CONFIG is checked when Django starts (ml.checks): a misspelt key or a value out of
bounds is an error naming it, with the nearest key, instead of failing every training run later
in the worker."""

from __future__ import annotations

import pytest
from django.core.checks import run_checks
from django.test import override_settings


def _errors() -> list[str]:
    return [f"{e.id}: {e.msg}" for e in run_checks() if e.id == "ml.E001"]


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ({"max_epoch": 5}, "ML_TRAINING_CONFIG: max_epoch: unknown training config key (did you mean max_epochs?)"),
        ({"max_epochs": "five"}, "ML_TRAINING_CONFIG: max_epochs: expected a value like"),
    ],
)
def test_a_bad_deployment_training_config_is_an_error_at_start(config, said):
    with override_settings(ML_TRAINING_CONFIG=config):
        (error,) = _errors()
    assert error.startswith(f"ml.E001: {said}")


def test_a_good_one_passes():
    with override_settings(ML_TRAINING_CONFIG={"max_epochs": 5, "featurizer": "hashed_ngram"}):
        assert _errors() == []
