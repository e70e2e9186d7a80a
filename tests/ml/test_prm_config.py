"""PRMConfig refuses, at construction, a config that cannot train (no Django involved)."""

import pytest

from ml.prm.config import PRMConfig


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"featurizer": "x"}, "featurizer"),
        ({"dropout": 5}, "dropout"),
        ({"uncertainty": "vibes"}, "uncertainty"),
        ({"ensemble_size": 0}, "ensemble_size"),
        ({"heldout_fraction": 1.5}, "heldout_fraction"),
        ({"max_epochs": True}, "max_epochs"),
        ({"char_ngrams": (0,)}, "char_ngrams"),
        ({"first_error_threshold": 2.0}, "first_error_threshold"),
    ],
)
def test_bad_values_are_refused_naming_the_field(overrides, field):
    with pytest.raises(ValueError, match=f"^{field}: "):
        PRMConfig(**overrides)
    with pytest.raises(ValueError, match=f"^{field}: "):
        PRMConfig.from_dict({**PRMConfig().to_dict(), **overrides})


def test_defaults_and_a_round_trip_are_accepted():
    config = PRMConfig(featurizer="minilm", dropout=0.0, first_error_threshold=None, seed=7)
    assert PRMConfig.from_dict(config.to_dict()) == config
