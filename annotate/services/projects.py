"""Creating projects and changing their settings from the browser (annotate.views_manage)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.db.models import BooleanField, Case, F, Q, Value, When

from annotate.models import Comparison, Problem, Project, Role, Solution, TaskKind
from annotate.services import events, quality
from annotate.services.members import add_member
from annotate.tasks import refresh_stats_snapshot, reorder_queue_before_any_model
from core import jobs
from core.signals import queue_order_changed

# The group whose members may create projects (created by migration 0007, managed in the admin).
PROJECT_CREATORS = "Project creators"
# The settings a lead edits on the project's settings page (and sets when creating one).
EDITABLE_FIELDS = (
    "name",
    "task_kind",
    "pairs_per_problem",
    "overlap",
    "qc_rate",
    "selection_strategy",
    "control_share",
    "retrain_every",
    "critique_required",
    "rate_observations",
    "screening_required",
    "screening_threshold",
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
    queue: dict[str, int] = {}
    if "overlap" in changes:
        queue = reopen_or_close(project=locked)
        # The dashboard's cached solution counts (large projects) were taken at the old overlap.
        jobs.enqueue_on_commit(refresh_stats_snapshot, locked.pk)
    # Reopened solutions still carry the priority and strategy of when they were first queued: they
    # are ordered again with the rest under the current settings, as a strategy change orders them.
    if changes.keys() & {"selection_strategy", "control_share"} or queue.get("solutions_open_changed"):
        # before any model the order is this app's (a task: a queue may hold a million solutions);
        # after, the model loop's, which the signal tells
        pk = locked.pk
        jobs.enqueue_on_commit(reorder_queue_before_any_model, pk)
        transaction.on_commit(lambda: queue_order_changed.send(sender=Project, project_id=pk))
    if changes.keys() & {"screening_required", "screening_threshold"}:
        # A lowered requirement decides those who have answered enough (pass mark as now set); a
        # decided annotator stays decided (a lead passes or fails one by hand in the admin).
        queue["screening_decided"] = quality.decide_waiting_screenings(project=locked)
    events.record(actor=user, project=project, action="project.settings_changed", changes=changes, **queue)
    return changes


def _flip(rows, *, should_be_open: Q) -> int:
    """One UPDATE: each of `rows` whose is_open differs from `should_be_open` gets it. Only the
    rows that change are written (a project may have a million solutions)."""
    differs = (Q(is_open=True) & ~should_be_open) | (Q(is_open=False) & should_be_open)
    is_open = Case(When(should_be_open, then=Value(True)), default=Value(False), output_field=BooleanField())
    return rows.filter(differs).update(is_open=is_open)


def reopen_or_close(*, project: Project) -> dict[str, int]:
    """After an overlap change (inside its transaction, the project row locked): a queue solution
    is open while it has fewer labels than the overlap plus the labels a lead's reopen asked for,
    the rule a submit closes it by (annotate.queue_sql.store_annotation). Raising the overlap
    reopens labeled solutions, lowering it closes those that now have enough. Gold and screening
    solutions are served from their own pools and are left alone; active assignments are never
    touched, so a lease running on a solution closed here is still submitted (its label counts as
    any other) or renewed if the solution has room. Pairs of a compare project follow the same
    rule (without extra labels). Returns how many rows changed, for the audit row."""
    overlap = project.overlap
    queue = Solution.objects.filter(project=project, is_gold=False, is_screening=False)
    room = Q(annotation_count__lt=F("extra_labels") + overlap)
    result = {"solutions_open_changed": _flip(queue, should_be_open=room)}
    if project.task_kind == TaskKind.COMPARE:
        pairs = Comparison.objects.filter(project=project, is_gold=False)
        result["pairs_open_changed"] = _flip(pairs, should_be_open=Q(annotation_count__lt=overlap))
    return result
