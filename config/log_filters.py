"""Logging filters (LOGGING in config/settings/base.py)."""

from __future__ import annotations

import logging
import re

# Paths that carry a secret (an invite link is a password to join a project while it lives); the
# access log's lines are redacted the same way in config/gunicorn.py.
SECRET_IN_PATH = re.compile(r"(/invite/)[^/?#\s\"]+")


def redact(text: str) -> str:
    return SECRET_IN_PATH.sub(r"\1<redacted>", text)


# Refusals are part of normal use (a member without the role, an expired session): one quiet line.
EXPECTED_REFUSALS = frozenset({401, 403})


class QuietRefusals(logging.Filter):
    """django.request logs a 403 from PermissionDenied as a warning with the full traceback, and
    every 401/403 answer as a warning. Log them at INFO, one line without a traceback; 5xx errors
    and everything else pass unchanged."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) in EXPECTED_REFUSALS:
            record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
            record.exc_info = record.exc_text = None
        return True


class RedactSecretPaths(logging.Filter):
    """django.request names the path of every 4xx/5xx ("Not Found: /invite/<secret>/"): without the secret."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        return True
