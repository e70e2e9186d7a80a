"""Reads of the lead's and ML engineer's pages (annotate.views, views_manage, views_account)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Q
from django.utils import timezone

from annotate.models import (
    Annotation,
    Comparison,
    Export,
    ImportJob,
    Invite,
    Membership,
    Preference,
    Problem,
    Project,
    Role,
    Solution,
    TaskKind,
)
from annotate.selectors import projects_for_user

PAST_JOBS = 50


# The queue's work, as the dashboard counts it: gold questions (and screening solutions) are
# quality checks served beside the queue, so the totals leave them out, and so do step labels
# (the dashboard's `labels`); its `preferences` count answers on gold pairs too, and so does this.
def _done_of_all(queryset, project_ids: list[int]) -> dict[int, dict]:
    """Per project: {"total", "done"} rows of a queued model (solutions, pairs), one grouped query."""
    rows = queryset.filter(project_id__in=project_ids, is_gold=False).values("project")
    return {r["project"]: r for r in rows.annotate(total=Count("id"), done=Count("id", filter=Q(is_open=False)))}


def _count_of(queryset, project_ids: list[int]) -> dict[int, int]:
    rows = queryset.filter(project_id__in=project_ids).values("project").annotate(n=Count("id"))
    return dict(rows.values_list("project", "n"))


def home_rows(*, user: AbstractBaseUser) -> list[dict]:
    """The home page's table: each of the user's projects (every project for superusers) with the
    user's roles and its progress (solutions done of all, labels submitted), in two grouped queries."""
    projects = list(projects_for_user(user=user))
    roles: dict[int, set[str]] = {}
    for project_id, role in Membership.objects.filter(user=user).values_list("project_id", "role"):
        roles.setdefault(project_id, set()).add(role)
    ids = [p.pk for p in projects]
    solutions = _done_of_all(Solution.objects.filter(is_screening=False), ids)
    labels = _count_of(Annotation.objects.filter(is_gold=False), ids)
    # A compare project's work is its pairs and their preferences, not solutions and step labels.
    compare_ids = [p.pk for p in projects if p.task_kind == TaskKind.COMPARE]
    pairs, preferences = (
        _done_of_all(Comparison.objects.all(), compare_ids),
        _count_of(Preference.objects.all(), compare_ids),
    )
    rows = []
    for project in projects:
        compare = project.task_kind == TaskKind.COMPARE
        counts = (pairs if compare else solutions).get(project.pk, {"total": 0, "done": 0})
        total, done = counts["total"], counts["done"]
        rows.append(
            {
                "project": project,
                "roles": sorted(roles.get(project.pk, set())),
                "unit": "pairs" if compare else "solutions",
                "solutions": total,
                "done": done,
                "labels": (preferences if compare else labels).get(project.pk, 0),
                "percent": round(100 * done / total) if total else 0,
            }
        )
    return rows


def recent_imports(*, project: Project) -> list[ImportJob]:
    return list(ImportJob.objects.filter(project=project).select_related("requested_by").order_by("-id")[:PAST_JOBS])


def solution_count(*, project: Project) -> int:
    return Solution.objects.filter(project=project).count()


def own_exports(*, project: Project, user: AbstractBaseUser) -> list[Export]:
    """Export jobs are their requester's own: the API shows and serves no one else's."""
    return list(Export.objects.filter(project=project, requested_by=user).order_by("-id")[:PAST_JOBS])


def open_invites(*, project: Project) -> list[Invite]:
    invites = list(
        Invite.objects.filter(project=project, used_at__isnull=True, expires_at__gt=timezone.now())
        .select_related("created_by")
        .order_by("-id")
    )
    for invite in invites:
        invite.role_labels = [Role(role).label for role in invite.roles]
    return invites


def members(*, project: Project) -> list[dict]:
    """One row per person: the user, their roles (value and name), and since when they are a member."""
    by_user: dict[int, dict] = {}
    for m in Membership.objects.filter(project=project).select_related("user").order_by("user__username", "role"):
        row = by_user.setdefault(m.user_id, {"user": m.user, "roles": [], "since": m.created_at})
        row["roles"].append({"value": m.role, "label": m.get_role_display()})
        row["since"] = min(row["since"], m.created_at)
    return list(by_user.values())


def has_data(*, project: Project) -> bool:
    """Whether anything was imported into the project (its task kind is then fixed)."""
    return Problem.objects.filter(project=project).exists()


def settings_instance(*, project: Project) -> Project:
    """A fresh copy for the settings form (which changes the instance it validates)."""
    return Project.objects.get(pk=project.pk)
