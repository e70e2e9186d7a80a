"""Production: secrets and hosts from the environment; passes `manage.py check --deploy`."""

import os

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if len(SECRET_KEY) < 50:
    raise ImproperlyConfigured(
        "SECRET_KEY must be set in the environment (50+ random characters). "
        "For local use set DJANGO_SETTINGS_MODULE=config.settings.local (make run does)."
    )
if len(set(SECRET_KEY)) < 5 or SECRET_KEY.startswith("django-insecure"):
    # Django's own bar for a key (check --deploy, security.W009): "a" * 50 passed the length test
    raise ImproperlyConfigured(
        "SECRET_KEY is not random: it has fewer than 5 different characters or Django's insecure prefix. "
        "Make one with: python -c 'import secrets; print(secrets.token_urlsafe(50))'"
    )

DEBUG = False
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)  # noqa: F405
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
