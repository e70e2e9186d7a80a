"""The queue hot path's fixed statements, as raw parameterised SQL (issue 13's throughput target).

A claim (GET tasks/next/) and a submit are about twenty short statements each round. Built through
the ORM, compiling them cost most of the server's CPU per claim + submit (bench/results/
queue_issue13.md: ~75% in django.db.models.sql), far more than PostgreSQL spent running them.
These statements never change shape, so they are written once here; the decisions stay in the
services (annotate.services.queue, leases, submit) and the access policy (annotate.access), which
call these functions. Each statement says which ORM query it replaces; the semantics are the same
(the same rows, locks, order and index: the claim still walks solution_queue_idx).

They run on PostgreSQL and SQLite (the embedded default): row locks only where the backend has
them (core.rows.lock), values adapted and rows read back by the model fields (core.rows.Reader).
Statuses are constants of annotate.models.choices, passed as parameters like any value.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from functools import cache
from typing import Any

from django.db import connection
from django.utils import timezone

from annotate.models import (
    Annotation,
    Assignment,
    AssignmentStatus,
    Problem,
    Project,
    Solution,
)
from core import rows
from core.rows import Reader, cursor, lock

ACTIVE = AssignmentStatus.ACTIVE.value


@cache
def _readers() -> dict[str, Reader]:
    # Built on first use: quoting column names needs the configured database backend.
    return {
        "project": Reader(Project, "p"),
        "assignment": Reader(Assignment, "a"),
        "solution": Reader(Solution, "s"),
        "problem": Reader(Problem, "pr"),
    }


def _at(value: datetime) -> Any:
    """A datetime parameter as the backend stores it (SQLite: naive UTC text)."""
    return connection.ops.adapt_datetimefield_value(value)


def _all(sql: str, params: dict[str, Any]) -> list[tuple]:
    with cursor() as db:
        db.execute(sql, params)
        return db.fetchall()


def _one(sql: str, params: dict[str, Any]) -> tuple | None:
    with cursor() as db:
        db.execute(sql, params)
        return db.fetchone()


def _count(sql: str, params: dict[str, Any] | tuple) -> int:
    with cursor() as db:
        db.execute(sql, params)
        return db.rowcount


# --- access (annotate.access) ------------------------------------------------------------------


def memberships(*, user_id: int, slug: str) -> tuple[Project | None, list[str]]:
    """The project `slug` and the user's roles in it; (None, []) for a non-member. Replaces
    Membership.objects.filter(user=user, project__slug=slug).select_related("project")."""
    p = _readers()["project"]
    rows = _all(
        f"SELECT m.role, {p.select} FROM annotate_membership m JOIN annotate_project p ON p.id = m.project_id "
        "WHERE m.user_id = %(user)s AND p.slug = %(slug)s",
        {"user": user_id, "slug": slug},
    )
    if not rows:
        return None, []
    return p.build(rows[0], 1), [row[0] for row in rows]


def own_assignment(*, assignment_id: int, user_id: int) -> tuple[Assignment | None, list[str]]:
    """The user's assignment with its project and solution, and the user's roles in that project
    (none for a former member). Replaces the Assignment query with one Exists per role."""
    r = _readers()
    a, p, s = r["assignment"], r["project"], r["solution"]
    rows = _all(
        f"SELECT m.role, {a.select}, {p.select}, {s.select} FROM annotate_assignment a "
        "JOIN annotate_project p ON p.id = a.project_id JOIN annotate_solution s ON s.id = a.solution_id "
        "LEFT JOIN annotate_membership m ON m.project_id = a.project_id AND m.user_id = a.annotator_id "
        "WHERE a.id = %(id)s AND a.annotator_id = %(user)s",
        {"id": assignment_id, "user": user_id},
    )
    if not rows:
        return None, []
    assignment = a.build(rows[0], 1)
    assignment.project = p.build(rows[0], 1 + a.width)
    assignment.solution = s.build(rows[0], 1 + a.width + p.width)
    return assignment, [row[0] for row in rows if row[0] is not None]


# --- claims (annotate.services.queue) ----------------------------------------------------------


def lock_status(*, project_id: int, user_id: int, relaxed: bool) -> tuple[int, str] | None:
    """Lock the annotator's status row: (id, screening_status), None when it does not exist yet.
    `relaxed` also sets synchronous_commit off for this transaction on PostgreSQL, in the same
    statement (annotate.services.queue.relaxed_commit, one round trip fewer)."""
    relax = ", set_config('synchronous_commit', 'off', true)" if relaxed and connection.vendor == "postgresql" else ""
    row = _one(
        f"SELECT id, screening_status{relax} FROM annotate_annotatorstatus "
        f"WHERE project_id = %(project)s AND user_id = %(user)s{lock(of='annotate_annotatorstatus')}",
        {"project": project_id, "user": user_id},
    )
    return None if row is None else (row[0], row[1])


def active_assignments(*, project: Project, user_id: int) -> list[Assignment]:
    """The user's active assignments in the project, the latest lease first, each with its solution
    and problem (as _resume's query: select_related("project", "solution__problem"))."""
    r = _readers()
    a, s, pr = r["assignment"], r["solution"], r["problem"]
    rows = _all(
        f"SELECT {a.select}, {s.select}, {pr.select} FROM annotate_assignment a "
        "JOIN annotate_solution s ON s.id = a.solution_id JOIN annotate_problem pr ON pr.id = s.problem_id "
        "WHERE a.project_id = %(project)s AND a.annotator_id = %(user)s AND a.status = %(active)s "
        "ORDER BY a.lease_expires_at DESC, a.id ASC",
        {"project": project.pk, "user": user_id, "active": ACTIVE},
    )
    found = []
    for row in rows:
        assignment = a.build(row)
        solution = s.build(row, a.width)
        solution.problem = pr.build(row, a.width + s.width)
        assignment.project, assignment.solution = project, solution
        found.append(assignment)
    return found


# A solution's load: its annotations plus its active assignments with a running lease (the
# (solution, annotator) index); as annotate.services.queue._live_count_subquery.
_LIVE = (
    "(SELECT COUNT(*) FROM annotate_assignment l WHERE l.solution_id = s.id AND l.status = %(active)s "
    "AND l.lease_expires_at > %(now)s)"
)


def candidate_statement(*, project: Project, user_id: int, now: datetime, rejected: list[int]) -> tuple[str, dict]:
    """The claim's candidate query: (sql, params) of candidate() (the benchmark EXPLAINs it)."""
    s, pr = _readers()["solution"], _readers()["problem"]
    params: dict[str, Any] = {"project": project.pk, "user": user_id, "now": _at(now), "active": ACTIVE}
    params["overlap"] = project.overlap
    skip = ""
    if rejected:
        names = [f"r{i}" for i in range(len(rejected))]
        params.update(zip(names, rejected, strict=True))
        skip = f" AND NOT (s.id IN ({', '.join(f'%({n})s' for n in names)}))"
    sql = (
        f"SELECT {s.select}, {pr.select} FROM annotate_solution s JOIN annotate_problem pr ON pr.id = s.problem_id "
        "WHERE s.project_id = %(project)s AND s.is_open AND NOT s.is_gold AND NOT s.is_screening"
        f"{skip} AND s.annotation_count + {_LIVE} < s.extra_labels + %(overlap)s "
        "AND NOT EXISTS (SELECT 1 FROM annotate_assignment m WHERE m.solution_id = s.id AND m.annotator_id = %(user)s) "
        f"ORDER BY s.priority DESC, s.id ASC LIMIT 1{lock(of='s', skip_locked=True)}"
    )
    return sql, params


def candidate(*, project: Project, user_id: int, now: datetime, rejected: list[int]) -> Solution | None:
    """The first regular solution the user may take, in queue order, locked (SKIP LOCKED), with its
    problem. Walks solution_queue_idx from the top; per row a count of its live assignments and
    "not mine" (NOT EXISTS), both on the (solution, annotator) index: the statement the ORM built
    for the same filters (Solution.objects.filter(...).alias(load=..., mine=...).select_for_update(
    skip_locked=True, of=("self",)).first()), with the count written as a plain COUNT(*)."""
    row = _one(*candidate_statement(project=project, user_id=user_id, now=now, rejected=rejected))
    if row is None:
        return None
    s, pr = _readers()["solution"], _readers()["problem"]
    solution = s.build(row)
    solution.problem = pr.build(row, s.width)
    return solution


@cache
def _returning() -> str:
    # SQLite's RETURNING takes plain column names (no table alias).
    return ", ".join(connection.ops.quote_name(f.column) for f in Assignment._meta.concrete_fields)


def serve(
    *,
    project: Project,
    solution: Solution,
    user_id: int,
    now: datetime,
    lease_until: datetime,
    status_id: int,
    gold: bool = False,
    always: bool = False,
) -> Assignment | None:
    """Insert the user's assignment on `solution` (row locked by the caller) if the solution still
    has room, checked by this statement's fresh snapshot: gold and screening solutions always have
    room, others while annotations + live leases < overlap + extra_labels (as has_room, then the
    Assignment.objects.create it replaces). Its generation and PRM score are those of the model
    run that queued the solution, and without one the project's round and none: a PRM800K record
    keeps OpenAI's generation and verifier score on its solution, and a label made here on it was
    exported with them, as if OpenAI's round had served it. `always`:
    a pool solution, served without the check. A served task counts on the annotator's status
    (count_served; on PostgreSQL in the same statement). None when the place was taken after the
    candidate query's snapshot."""
    insert = (
        "INSERT INTO annotate_assignment (project_id, solution_id, annotator_id, status, lease_expires_at, draft, "
        "generation, strategy, verifier_score, comparison_id, swapped, created_at, updated_at) "
        "SELECT s.project_id, s.id, %(user)s, %(status)s, %(lease)s, NULL, "
        "CASE WHEN s.model_run_id IS NULL THEN %(round)s ELSE s.generation END, s.strategy, "
        "CASE WHEN s.model_run_id IS NULL THEN NULL ELSE s.verifier_score END, "
        "NULL, %(false)s, %(created)s, %(created)s FROM annotate_solution s "
        f"WHERE s.id = %(solution)s AND (%(always)s OR s.is_gold OR s.is_screening OR s.annotation_count + {_LIVE} "
        f"< s.extra_labels + %(overlap)s) RETURNING {_returning()}"
    )
    merged = connection.vendor == "postgresql"
    if merged:  # the status counter in the same statement, only when a row was inserted
        insert = (
            f"WITH served AS ({insert}), counted AS (UPDATE annotate_annotatorstatus SET tasks_served = "
            "tasks_served + 1, gold_served = gold_served + %(gold)s WHERE id = %(status_id)s "
            "AND EXISTS (SELECT 1 FROM served)) SELECT * FROM served"
        )
    params = {
        "user": user_id,
        "status": ACTIVE,  # a name of its own: server-side binding types each parameter once
        "active": ACTIVE,
        "lease": _at(lease_until),
        "round": project.current_generation,
        "false": False,
        "created": _at(now),
        "now": _at(now),
        "solution": solution.pk,
        "overlap": project.overlap,
        "always": always,
    }
    row = _one(insert, {**params, "gold": int(gold), "status_id": status_id} if merged else params)
    if row is None:
        return None
    if not merged:
        count_served(status_id=status_id, gold=gold)
    assignment = _readers()["assignment"].build(row)
    assignment.project, assignment.solution = project, solution
    return assignment


def count_served(*, status_id: int, gold: bool) -> None:
    """One more task served (and gold). As AnnotatorStatus.objects.filter(pk=...).update(...), which
    leaves updated_at as it is."""
    _count(
        "UPDATE annotate_annotatorstatus SET tasks_served = tasks_served + 1, gold_served = gold_served + %(gold)s "
        "WHERE id = %(id)s",
        {"gold": int(gold), "id": status_id},
    )


def steps(*, solution_id: int) -> list[tuple[int, str, str]]:
    """(index, text, step_type) of a solution's steps in order (the task's steps)."""
    return _all(
        'SELECT st."index", st.text, st.step_type FROM annotate_step st WHERE st.solution_id = %(solution)s '
        'ORDER BY st."index"',
        {"solution": solution_id},
    )


def submit_context(*, solution_id: int, user_id: int) -> tuple[list[tuple[str, str]], str | None]:
    """A submit's reads before it validates, in one statement: (text, step_type) of the solution's
    steps in order, and the user's labeler pseudonym if their profile exists (None: not yet, or a
    solution without steps; annotate.services.members.labeler_uuid_for creates it)."""
    rows = _all(
        "SELECT st.text, st.step_type, (SELECT lp.labeler_uuid FROM annotate_labelerprofile lp "
        'WHERE lp.user_id = %(user)s) FROM annotate_step st WHERE st.solution_id = %(solution)s ORDER BY st."index"',
        {"solution": solution_id, "user": user_id},
    )
    value = rows[0][2] if rows else None  # a UUID on PostgreSQL, 32 hex digits on SQLite
    labeler = None if value is None else str(value if isinstance(value, uuid.UUID) else uuid.UUID(value))
    return [(text, step_type) for text, step_type, _ in rows], labeler


# --- working on an assignment (annotate.services.leases, submit) -------------------------------


def lock_assignment(*, assignment_id: int) -> Assignment | None:
    """The assignment row locked, with its project and solution (as select_for_update(of=("self",))
    .select_related("project", "solution"))."""
    r = _readers()
    a, p, s = r["assignment"], r["project"], r["solution"]
    row = _one(
        f"SELECT {a.select}, {p.select}, {s.select} FROM annotate_assignment a "
        "JOIN annotate_project p ON p.id = a.project_id JOIN annotate_solution s ON s.id = a.solution_id "
        f"WHERE a.id = %(id)s{lock(of='a')}",
        {"id": assignment_id},
    )
    if row is None:
        return None
    assignment = a.build(row)
    assignment.project = p.build(row, a.width)
    assignment.solution = s.build(row, a.width + p.width)
    return assignment


_COUNT_ANNOTATION = (
    "UPDATE annotate_solution SET annotation_count = annotation_count + 1, is_open = CASE "
    "WHEN NOT is_gold AND NOT is_screening AND annotation_count >= extra_labels + %s THEN %s "
    "ELSE is_open END WHERE id = %s"
)
_MARK = "UPDATE annotate_assignment SET status = %s, updated_at = %s WHERE id = %s"


def store_annotation(*, annotation: Annotation, assignment: Assignment, overlap: int) -> None:
    """A submit's writes, the assignment row locked by the caller: one more annotation on the
    solution, closing a regular one at `overlap` (plus the labels a reopen asked for; the UPDATE
    takes the row lock claims on it take too), the annotation stored (core.rows.insert: as
    annotation.save(), signals included), and the assignment submitted (status, updated_at). One
    statement on PostgreSQL (the two UPDATEs as CTEs of the INSERT), three elsewhere."""
    count = (overlap - 1, False, assignment.solution_id)
    now = timezone.now()
    mark = (AssignmentStatus.SUBMITTED.value, _at(now), assignment.pk)
    if connection.vendor == "postgresql":
        with_sql = f"WITH counted AS ({_COUNT_ANNOTATION}), marked AS ({_MARK})"
        rows.insert(annotation, with_sql=with_sql, with_params=(*count, *mark))
    else:
        _count(_COUNT_ANNOTATION, count)
        rows.insert(annotation)
        _count(_MARK, mark)
    assignment.status, assignment.updated_at = AssignmentStatus.SUBMITTED.value, now
