"""Deployment checks (`manage.py check --deploy`): the embedded defaults that let `make run` start
with nothing configured are wrong for a deployment, and a missing variable must not fall back to
them without a word; nor may static files that production cannot serve (never or not lately
collected)."""

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


@register(Tags.staticfiles, deploy=True)
def collected_static_files(app_configs, **kwargs) -> list[Warning]:
    """Production serves hashed static names from collectstatic's manifest: with none (never
    collected) or a stale one (an upgrade without collectstatic), every page that names a missing
    file answers 500, the error page included."""
    from django.contrib.staticfiles import finders
    from django.contrib.staticfiles.storage import ManifestFilesMixin, staticfiles_storage

    if not isinstance(staticfiles_storage, ManifestFilesMixin):
        return []
    hint = "Run `python manage.py collectstatic --noinput` after every upgrade (the Docker image runs it when built)."
    if not staticfiles_storage.exists(staticfiles_storage.manifest_name):
        return [
            Warning(
                f"The static files are not collected: {settings.STATIC_ROOT} has no "
                f"{staticfiles_storage.manifest_name}, so every page answers 500.",
                hint=hint,
                id="steplabel.W003",
            )
        ]
    collected = staticfiles_storage.load_manifest()[0]
    missing = sorted(
        path
        for finder in finders.get_finders()
        for path, _storage in finder.list(["CVS", ".*", "*~"])  # collectstatic's default ignores
        if path not in collected
    )
    if missing:
        return [
            Warning(
                f"{len(missing)} static files are newer than the last collectstatic (e.g. {missing[0]}): "
                "pages that use them answer 500.",
                hint=hint,
                id="steplabel.W004",
            )
        ]
    return []
