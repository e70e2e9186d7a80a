"""Test settings: PostgreSQL and Redis on localhost (the services CI and this machine run)."""

import os

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/steplabel")
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/15")

from .base import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405
