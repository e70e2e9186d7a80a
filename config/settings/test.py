"""Test settings: PostgreSQL and Redis on localhost (the services CI and this machine run)."""

import os

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/steplabel")
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/15")
# The throttle cache shares the test Redis db; tests that check a limit set a low rate themselves.
os.environ.setdefault("CACHE_URL", os.environ["CELERY_BROKER_URL"])
os.environ.setdefault("THROTTLE_EXPORT", "100000/minute")
os.environ.setdefault("THROTTLE_RETRAIN", "100000/minute")
os.environ.setdefault("THROTTLE_SCORE", "100000/minute")
# Tests log in many times; tests/security/test_web_hardening.py checks the lockout at its real limit.
os.environ.setdefault("AXES_FAILURE_LIMIT", "1000")
# The stand-in completions server of the autolabel tests listens on loopback.
os.environ.setdefault("AUTOLABEL_ALLOWED_HOSTS", "127.0.0.1,localhost")

from .base import *  # noqa: E402,F403

SECRET_KEY = os.environ.get("SECRET_KEY") or "test-insecure-steplabel-key"
DEBUG = False

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405
