"""Logging filters (LOGGING in config/settings/base.py)."""

from __future__ import annotations

import logging

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
