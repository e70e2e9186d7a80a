"""Deployment checks (`manage.py check --deploy`): the embedded defaults that let `make run` start
with nothing configured are wrong for a deployment, and a missing variable must not fall back to
them without a word."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Tags, Warning, register


@register(Tags.security, deploy=True)
def embedded_defaults(app_configs, **kwargs) -> list[Warning]:
    found = []
    if settings.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
        found.append(
            Warning(
                "The database is the embedded SQLite file: DATABASE_URL is not set.",
                hint="Set DATABASE_URL to the PostgreSQL database (postgres://USER:PASSWORD@HOST:5432/NAME).",
                id="steplabel.W001",
            )
        )
    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        found.append(
            Warning(
                "The Celery broker is the embedded filesystem queue: CELERY_BROKER_URL is not set.",
                hint="Set CELERY_BROKER_URL to the Redis broker (redis://HOST:6379/0); web and workers must share it.",
                id="steplabel.W002",
            )
        )
    return found
