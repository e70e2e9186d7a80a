"""Creating projects and changing their settings from the browser (annotate.views_manage)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction

from annotate.models import Problem, Project, Role
from annotate.services import events
from annotate.services.members import add_member

# The group whose members may create projects (created by migration 0007, managed in the admin).
PROJECT_CREATORS = "Project creators"
# The settings a lead edits on the project's settings page (and sets when creating one).
EDITABLE_FIELDS = (
    "name",
    "task_kind",
    "overlap",
    "qc_rate",
    "selection_strategy",
    "control_share",
    "retrain_every",
    "critique_required",
    "rate_observations",
    "guidelines",
)


class SettingsError(ValueError):
    """A settings change the server refuses, with a message for the lead (shown on the field)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def can_create_projects(*, user: AbstractBaseUser | AnonymousUser) -> bool:
    if not user.is_authenticated:
        return False
    return user.is_superuser or user.groups.filter(name=PROJECT_CREATORS).exists()


@transaction.atomic
def create_project(*, user: AbstractBaseUser, slug: str, **fields: Any) -> Project:
    """A new project with `user` as its lead. Fields are the form's cleaned values."""
    project = Project.objects.create(slug=slug, **{k: v for k, v in fields.items() if k in EDITABLE_FIELDS})
    add_member(project=project, user=user, role=Role.LEAD)
    events.record(
        actor=user,
        project=project,
        action="project.created",
        slug=slug,
        **{name: getattr(project, name) for name in EDITABLE_FIELDS},
    )
    return project


def kind_fixed_message(project: Project) -> str:
    return (
        f"Task kind cannot change: this project already has data ({project.get_task_kind_display()}). "
        "Create a new project for the other kind."
    )


@transaction.atomic
def update_settings(*, project: Project, user: AbstractBaseUser, **fields: Any) -> dict[str, list[Any]]:
    """Save changed settings; returns {field: [before, after]} (also what the audit row keeps)."""
    # no_key: a settings change must not block (or deadlock) submits' foreign-key checks on the project
    locked = Project.objects.select_for_update(no_key=True).get(pk=project.pk)
    changes = {
        name: [getattr(locked, name), value]
        for name, value in fields.items()
        if name in EDITABLE_FIELDS and getattr(locked, name) != value
    }
    if not changes:
        return {}
    # Imported rows are of the old kind (step solutions vs. pairs); the queue, workspace, exports
    # and models would read them as the new one.
    if "task_kind" in changes and Problem.objects.filter(project=locked).exists():
        raise SettingsError("task_kind", kind_fixed_message(locked))
    for name, (_, after) in changes.items():
        setattr(locked, name, after)
        setattr(project, name, after)
    locked.save(update_fields=list(changes))
    events.record(actor=user, project=project, action="project.settings_changed", changes=changes)
    return changes
