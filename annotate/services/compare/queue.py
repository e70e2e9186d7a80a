"""Claiming pairs: the step queue's rules (annotate.services.queue) over Comparison rows.

Same order (comparison_queue_idx: project, -priority, id WHERE is_open), same SKIP LOCKED claim
with an exact capacity re-check under the row lock, same per-annotator status lock, gold pairs at
the project's QC rate. The candidate order is drawn per assignment and kept (Assignment.swapped).
"""

from __future__ import annotations

import random
from datetime import timedelta

from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import Count, Exists, F, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce

from annotate.models import Assignment, AssignmentStatus, Comparison, Project

_rng = random.SystemRandom()


def _live(*, comparison_ref, now, exclude_user: AbstractBaseUser | None = None):
    qs = Assignment.objects.filter(comparison=comparison_ref, status=AssignmentStatus.ACTIVE, lease_expires_at__gt=now)
    return qs.exclude(annotator=exclude_user) if exclude_user is not None else qs


def _live_count(now) -> Coalesce:
    counts = (
        _live(comparison_ref=OuterRef("pk"), now=now)
        .order_by()
        .values("comparison_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    return Coalesce(Subquery(counts, output_field=IntegerField()), Value(0))


def _mine(user: AbstractBaseUser) -> Exists:
    return Exists(Assignment.objects.filter(comparison=OuterRef("pk"), annotator=user))


def comparison_has_room(
    *, comparison: Comparison, project: Project, now, exclude_user: AbstractBaseUser | None = None
) -> bool:
    """Fresh capacity check of a pair whose row the caller holds locked (gold: always)."""
    if comparison.is_gold:
        return True
    live = _live(comparison_ref=comparison, now=now, exclude_user=exclude_user).count()
    count = Comparison.objects.filter(pk=comparison.pk).values_list("annotation_count", flat=True).get()
    return count + live < project.overlap


def _claim_regular(*, project: Project, user: AbstractBaseUser, now) -> Comparison | None:
    rejected: list[int] = []
    while True:
        comparison = (
            Comparison.objects.filter(project=project, is_open=True, is_gold=False)
            .exclude(pk__in=rejected)
            .alias(load=F("annotation_count") + _live_count(now), mine=_mine(user))
            .filter(load__lt=project.overlap, mine=False)
            .order_by("-priority", "id")
            .select_for_update(skip_locked=True, of=("self",))
            .first()
        )
        if comparison is None:
            return None
        if comparison_has_room(comparison=comparison, project=project, now=now):
            return comparison
        rejected.append(comparison.pk)


def _claim_gold(*, project: Project, user: AbstractBaseUser) -> Comparison | None:
    return (
        Comparison.objects.filter(project=project, is_gold=True)
        .alias(mine=_mine(user))
        .filter(mine=False)
        .order_by("-priority", "id")
        .first()
    )


def claim_pair(*, project: Project, user: AbstractBaseUser, now) -> tuple[Assignment | None, bool]:
    """A new pair for the caller (inside claim_next's transaction, status row locked); returns the
    assignment (None when nothing is left) and whether it is a gold pair."""
    comparison = None
    gold = False
    if project.qc_rate > 0 and _rng.random() < project.qc_rate:
        comparison = _claim_gold(project=project, user=user)
        gold = comparison is not None
    if comparison is None:
        comparison = _claim_regular(project=project, user=user, now=now)
    if comparison is None:
        return None, False
    assignment = Assignment.objects.create(
        project=project,
        solution_id=comparison.solution_a_id,
        comparison=comparison,
        swapped=_rng.random() < 0.5,
        annotator=user,
        status=AssignmentStatus.ACTIVE,
        lease_expires_at=now + timedelta(minutes=project.lease_minutes),
        generation=project.current_generation,
        strategy="compare",
        verifier_score=comparison.model_probability,
    )
    return assignment, gold
