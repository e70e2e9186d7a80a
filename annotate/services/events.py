"""The audit log of changes made outside annotations (which keep their own revisions): who, when, what."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from annotate.models import AuditEvent, Project


def record(
    *, actor: AbstractBaseUser | AnonymousUser | None, action: str, project: Project | None = None, **details: Any
) -> AuditEvent:
    """One audit row. `details` must be JSON and must never hold a secret (token, password, link)."""
    return AuditEvent.objects.create(
        actor=actor if actor is not None and actor.is_authenticated else None,
        project=project,
        action=action,
        details=details,
    )
