"""System checks of the model loop's settings (every manage.py command and server start runs them).

ML_TRAINING_CONFIG is the deployment's default for every training run: a misspelt key or a value
out of bounds was met only when a run started, and then every run failed in the worker. The
settings already refuse a value that is not a JSON object; here its keys and values are checked
as a run's own overrides are (ml.services.config.validate_config), naming the key.
"""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, register


@register()
def training_config_is_valid(app_configs, **kwargs) -> list[Error]:
    from ml.prm.config import ConfigError
    from ml.services.config import validate_config

    try:
        validate_config(dict(settings.ML_TRAINING_CONFIG))
    except ConfigError as exc:
        return [
            Error(
                f"ML_TRAINING_CONFIG: {exc.field}: {exc.message}",
                hint="Every training run starts from these settings; fix or remove the key (README: Active learning).",
                id="ml.E001",
            )
        ]
    return []
