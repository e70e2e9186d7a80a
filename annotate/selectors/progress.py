"""An annotator's own standing in a project (the workspace side panel): labels today and overall,
the active assignment, screening, and submits refused after a lost lease."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import Count, F, Sum
from django.utils import timezone

from annotate.models import (
    Annotation,
    AnnotatorStatus,
    Assignment,
    AssignmentStatus,
    Preference,
    Project,
    Role,
    ScreeningStatus,
    TaskKind,
)
from annotate.selectors import user_roles


def annotator_progress(*, project: Project, user: AbstractBaseUser) -> dict[str, Any]:
    """The caller's labels today and overall, their active assignment and screening standing."""
    today = timezone.localdate()
    start = timezone.make_aware(datetime.combine(today, time.min))
    mine = Annotation.objects.filter(annotator=user, project=project)
    # Steps the annotator rated: a trace's observations ride in the label unrated (shown, not rated)
    day = mine.filter(submitted_at__gte=start).aggregate(
        n=Count("id"), steps=Sum(F("n_label_steps") - F("n_unrated")), time=Sum("total_time_ms")
    )
    # A compare project's labels are preferences (its first-wrong marks share their time, so the
    # day's time is the preferences' alone there).
    # A steps project has no preferences: no queries for them on its submit path.
    compare = project.task_kind == TaskKind.COMPARE
    answered = Preference.objects.filter(annotator=user, project=project)
    pairs = (
        answered.filter(submitted_at__gte=start).aggregate(n=Count("id"), time=Sum("total_time_ms"))
        if compare
        else {"n": 0, "time": None}
    )
    status = AnnotatorStatus.objects.filter(project=project, user=user).first()
    roles = user_roles(user=user, project=project)
    if project.screening_required <= 0 or Role.LEAD.value in roles:
        screening_state = (
            "not_required"
            if status is None or status.screening_status == ScreeningStatus.PENDING
            else status.screening_status
        )
    else:
        screening_state = status.screening_status if status else ScreeningStatus.PENDING
    refused = refused_submits(project=project, user=user)
    active = (
        Assignment.objects.filter(
            project=project, annotator=user, status=AssignmentStatus.ACTIVE, lease_expires_at__gt=timezone.now()
        )
        .values_list("id", flat=True)
        .first()
    )
    return {
        "project": project.slug,
        "roles": sorted(roles),
        "date": today,
        "solutions_today": day["n"] or 0,
        "steps_today": day["steps"] or 0,
        "time_today_ms": (pairs["time"] if compare else day["time"]) or 0,
        "solutions_total": mine.count(),
        "pairs_today": pairs["n"] or 0,
        "pairs_total": answered.count() if compare else 0,
        "active_assignment_id": active,
        "screening": {
            "required": project.screening_required,
            "submitted": status.screening_submitted if status else 0,
            "status": str(screening_state),
            "threshold": project.screening_threshold,
            "agreement": status.screening_agreement if status else None,
        },
        "refused_submits": refused,
    }


REFUSED_SHOWN_FOR = timedelta(days=7)
REFUSED_SHOWN_MAX = 10


REFUSED_MESSAGES = {
    "late": (
        "This submit arrived after your lease had expired and another annotator had taken the solution, "
        "so it was not recorded as a label. Your ratings are shown here so your work is not lost."
    ),
    "conflict": (
        "This solution was submitted first from another tab or device with other ratings; that submit is the "
        "recorded one. These ratings, sent later with the same draft, were not recorded and are shown here."
    ),
}


def refused_submits(*, project: Project, user: AbstractBaseUser) -> list[dict[str, Any]]:
    """The caller's submits that were refused in the last week, newest first: late ones (lease
    expired, solution taken) on the expired assignment, and conflicting ones (another tab submitted
    first with the same key) on the submitted one, both kept in its draft (annotate.services.leases
    .keep_refused) and given back here until the annotator dismisses one by saving a null draft."""
    since = timezone.now() - REFUSED_SHOWN_FOR
    rows = (
        Assignment.objects.filter(
            project=project,
            annotator=user,
            status__in=[AssignmentStatus.EXPIRED, AssignmentStatus.SUBMITTED],
            draft__has_key="refused_submit",
            updated_at__gte=since,
        )
        .select_related("solution__problem")
        .order_by("-updated_at")[:REFUSED_SHOWN_MAX]
    )
    return [
        {
            "assignment_id": row.pk,
            "solution_id": row.solution_id,
            "refused_at": row.updated_at,
            "problem": row.solution.problem.text[:200],
            "submit": row.draft["refused_submit"],
            "message": REFUSED_MESSAGES.get(row.draft.get("refused_reason"), REFUSED_MESSAGES["late"]),
        }
        for row in rows
    ]
