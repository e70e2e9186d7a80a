"""The work queue: claims with leases, overlap, gold (QC) questions and screening.

Claims follow Label Studio's next_task and Saleor's lock_objects: candidates come in the stable
order of the partial index solution_queue_idx (project, -priority, id WHERE is_open) and are
locked with FOR UPDATE SKIP LOCKED, so concurrent annotators never wait on each other and never
see the same row. The filters in the candidate query read a statement snapshot that may be a
moment old, so once a row is locked its capacity is checked again by a fresh statement; every
claim and submit on a solution holds that row lock, which makes the check exact.

Capacity of a solution = Solution.annotation_count (kept by imports and submits) + its active
assignments whose lease has not expired; it must stay below Project.overlap. An expired lease
therefore frees its place with no sweeper; its row (status active or expired) still blocks
re-serving the solution to the same annotator, as do skipped rows (uniq_assignment_per_annotator).

Each annotator's AnnotatorStatus row is locked first by every claim (and by submits of screening
answers, which count on it), so one annotator's claims run one at a time: a double-clicked reload
never claims two solutions. Lock order everywhere: status, assignment, solution.

Claims, heartbeats and drafts commit without waiting for the WAL flush (synchronous_commit off
for that transaction only); submits keep the server's durable commit.

The claim's fixed statements (status lock, held lease, candidate, insert if room) are raw SQL in
annotate.queue_sql: compiling them through the ORM on every claim cost more CPU than running them.
The rare paths (an expired lease renewed, gold and screening pools, pairs) keep the ORM.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Exists, F, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotate import queue_sql
from annotate.models import (
    AnnotatorStatus,
    Assignment,
    AssignmentStatus,
    Comparison,
    Project,
    Role,
    ScreeningStatus,
    Solution,
    TaskKind,
)
from annotate.selectors import user_roles
from annotate.services.compare.queue import claim_pair, comparison_has_room
from core.errors import Forbidden

LABELING_ROLES = {Role.ANNOTATOR.value, Role.LEAD.value}
_rng = random.SystemRandom()


class ScreeningFailed(Forbidden):
    default_message = "You did not pass screening for this project, so no more tasks will be served to you."


# ---------------------------------------------------------------------------------------------
# Access
# ---------------------------------------------------------------------------------------------


def ensure_can_label(*, project: Project, user: AbstractBaseUser, roles: set[str] | None = None) -> set[str]:
    """Members with role annotator or lead may label; returns the caller's roles in the project."""
    if roles is None:
        roles = user_roles(user=user, project=project)
    if not roles & LABELING_ROLES:
        raise Forbidden("Only annotators and leads of this project can label.")
    return roles


def lock_annotator_status(*, project: Project, user: AbstractBaseUser) -> AnnotatorStatus:
    locked = AnnotatorStatus.objects.select_for_update().filter(project=project, user=user).first()
    if locked is not None:
        return locked
    try:
        with transaction.atomic():
            AnnotatorStatus.objects.create(project=project, user=user)
    except IntegrityError:  # created by a concurrent request of the same user
        pass
    return AnnotatorStatus.objects.select_for_update().get(project=project, user=user)


def _screening_applies(
    *, project: Project, user: AbstractBaseUser, screening_status: str, roles: set[str] | None
) -> bool:
    """Screening gates annotators; leads (who write the guidelines and the gold) are exempt."""
    if project.screening_required <= 0 or screening_status == ScreeningStatus.PASSED:
        return False
    if roles is None:
        roles = user_roles(user=user, project=project)
    return Role.LEAD.value not in roles


def relaxed_commit() -> None:
    """Claims, heartbeats and drafts need not wait for the WAL flush: after a database crash the
    worst case is a claim made again. Submits (the labels) keep the server's synchronous commit."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")


# ---------------------------------------------------------------------------------------------
# Capacity
# ---------------------------------------------------------------------------------------------


def _live_assignments(*, solution_ref: Any, now, exclude_user: AbstractBaseUser | None = None):
    """Active assignments with an unexpired lease on one solution (uses the (solution, annotator) index)."""
    qs = Assignment.objects.filter(solution=solution_ref, status=AssignmentStatus.ACTIVE, lease_expires_at__gt=now)
    if exclude_user is not None:
        qs = qs.exclude(annotator=exclude_user)
    return qs


def _live_count_subquery(now, exclude_user: AbstractBaseUser | None = None) -> Coalesce:
    counts = (
        _live_assignments(solution_ref=OuterRef("pk"), now=now, exclude_user=exclude_user)
        .order_by()
        .values("solution_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    return Coalesce(Subquery(counts, output_field=IntegerField()), Value(0))


def has_room(*, solution: Solution, project: Project, now, exclude_user: AbstractBaseUser | None = None) -> bool:
    """Fresh capacity check of a solution whose row the caller holds locked.

    Gold and screening solutions are served to every annotator once, with no overlap limit.
    """
    if solution.is_gold or solution.is_screening:
        return True
    load, extra = (
        Solution.objects.filter(pk=solution.pk)
        .annotate(load=F("annotation_count") + _live_count_subquery(now, exclude_user))
        .values_list("load", "extra_labels")
        .get()
    )
    return load < project.overlap + extra


# ---------------------------------------------------------------------------------------------
# Claim
# ---------------------------------------------------------------------------------------------


def _mine(*, user: AbstractBaseUser) -> Exists:
    return Exists(Assignment.objects.filter(solution=OuterRef("pk"), annotator=user))


def _lease_until(*, project: Project, now) -> Any:
    return now + timedelta(minutes=project.lease_minutes)


def _claim_regular(*, project: Project, user: AbstractBaseUser, now, status_id: int) -> Assignment | None:
    """The first regular solution in queue order the user may take (locked, SKIP LOCKED), served if
    it still has room; a place taken since the candidate query's snapshot sends us to the next."""
    rejected: list[int] = []
    while True:
        solution = queue_sql.candidate(project=project, user_id=user.pk, now=now, rejected=rejected)
        if solution is None:
            return None
        # The candidate's filters may have read a snapshot older than the lock: serve() checks the
        # room again, exactly, in the statement that inserts the assignment.
        lease_until = _lease_until(project=project, now=now)
        assignment = queue_sql.serve(
            project=project, solution=solution, user_id=user.pk, now=now, lease_until=lease_until, status_id=status_id
        )
        if assignment is not None:
            return assignment
        rejected.append(solution.pk)


def _claim_pool(
    *, project: Project, user: AbstractBaseUser, pool: Q, now, status_id: int, gold: bool
) -> Assignment | None:
    """A gold or screening solution the user has not seen (no lock: served to everyone once)."""
    solution = (
        Solution.objects.filter(pool, project=project)
        .alias(mine=_mine(user=user))
        .filter(mine=False)
        .order_by("-priority", "id")
        .select_related("problem")
        .first()
    )
    if solution is None:
        return None
    lease_until = _lease_until(project=project, now=now)
    return queue_sql.serve(
        project=project,
        solution=solution,
        user_id=user.pk,
        now=now,
        lease_until=lease_until,
        status_id=status_id,
        gold=gold,
        always=True,
    )


def place_free(*, assignment: Assignment, project: Project, user: AbstractBaseUser, now) -> bool:
    """Whether an expired assignment's place is still free: its solution's, or its pair's (row locked)."""
    if assignment.comparison_id is not None:
        comparison = Comparison.objects.select_for_update().get(pk=assignment.comparison_id)
        return comparison_has_room(comparison=comparison, project=project, now=now, exclude_user=user)
    solution = Solution.objects.select_for_update().get(pk=assignment.solution_id)
    return has_room(solution=solution, project=project, now=now, exclude_user=user)


def _resume(*, project: Project, user: AbstractBaseUser, now) -> Assignment | None:
    """The caller's active assignment: returned as is while its lease runs; an expired one is
    renewed when nobody has taken its place (the draft comes back), else marked expired."""
    mine = queue_sql.active_assignments(project=project, user_id=user.pk)
    if mine and mine[0].lease_expires_at > now:
        return mine[0]
    for expired in mine:  # lock order everywhere: status, assignment, solution
        assignment = (
            Assignment.objects.select_for_update(of=("self",))
            .select_related("project", "solution__problem")
            .get(pk=expired.pk)
        )
        if assignment.status != AssignmentStatus.ACTIVE:  # submitted meanwhile
            continue
        if place_free(assignment=assignment, project=project, user=user, now=now):
            assignment.lease_expires_at = _lease_until(project=project, now=now)
            assignment.save(update_fields=["lease_expires_at", "updated_at"])
            return assignment
        assignment.status = AssignmentStatus.EXPIRED
        assignment.save(update_fields=["status", "updated_at"])
    return None


def _lock_status(*, project: Project, user: AbstractBaseUser) -> tuple[int, str]:
    """Lock the caller's status row, with the claim's relaxed commit: (id, screening_status)."""
    locked = queue_sql.lock_status(project_id=project.pk, user_id=user.pk, relaxed=True)
    if locked is None:  # the first claim in this project
        relaxed_commit()
        status = lock_annotator_status(project=project, user=user)
        locked = (status.pk, status.screening_status)
    return locked


@transaction.atomic
def claim_next(*, project: Project, user: AbstractBaseUser, roles: set[str] | None = None) -> Assignment | None:
    """The caller's next task: their active assignment again, else a newly claimed solution.

    Screening first (until `screening_required` are submitted and the agreement is decided), then
    regular work with gold questions mixed in at `qc_rate` (an independent draw per new claim, so
    they cannot be told apart by position). None when nothing is left for the caller.
    Raises ScreeningFailed for an annotator who failed screening. `roles`: the caller's roles in
    the project when the caller already has them (saves a query); PermissionDenied unless they
    include annotator or lead.
    """
    roles = ensure_can_label(project=project, user=user, roles=roles)  # a removed member gets nothing
    status_id, screening_status = _lock_status(project=project, user=user)
    if screening_status == ScreeningStatus.FAILED:
        raise ScreeningFailed()
    now = timezone.now()
    resumed = _resume(project=project, user=user, now=now)
    if resumed is not None:
        return resumed

    # A new task counts on the status row (tasks_served, gold_served): queue_sql.serve does it with
    # the insert; a pair here.
    if project.task_kind == TaskKind.COMPARE:  # pairs: no screening pool; gold pairs at the QC rate
        assignment, gold = claim_pair(project=project, user=user, now=now)
        if assignment is not None:
            queue_sql.count_served(status_id=status_id, gold=gold)
        return assignment
    if _screening_applies(project=project, user=user, screening_status=screening_status, roles=roles):
        pool = Q(is_screening=True)
        return _claim_pool(project=project, user=user, pool=pool, now=now, status_id=status_id, gold=False)
    assignment = None
    if project.qc_rate > 0 and _rng.random() < project.qc_rate:
        pool = Q(is_gold=True, is_screening=False)
        assignment = _claim_pool(project=project, user=user, pool=pool, now=now, status_id=status_id, gold=True)
    if assignment is None:
        assignment = _claim_regular(project=project, user=user, now=now, status_id=status_id)
    return assignment
