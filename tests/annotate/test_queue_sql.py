"""The queue's raw statements (annotate/queue_sql.py): the claim's candidate query still walks the
queue's partial index, and serve() refuses a solution that filled up after the candidate query."""

from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from annotate import queue_sql
from annotate.models import Assignment, AssignmentStatus
from tests.factories import make_project, make_solutions, make_user

pytestmark = pytest.mark.django_db


def test_the_candidate_query_walks_the_queue_index():
    project = make_project("plan")
    make_solutions(project, 5)
    user = make_user("ann", project=project)
    sql, params = queue_sql.candidate_statement(project=project, user_id=user.pk, now=timezone.now(), rejected=[1])
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # a 5-row table: the plan a large queue gets
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "solution_queue_idx" in plan, plan


def test_serve_refuses_a_solution_whose_place_was_taken():
    project = make_project("full", overlap=1, lease_minutes=30)
    solution = make_solutions(project, 1)[0]
    first, second = make_user("a", project=project), make_user("b", project=project)
    now = timezone.now()
    Assignment.objects.create(
        project=project,
        solution=solution,
        annotator=first,
        status=AssignmentStatus.ACTIVE,
        lease_expires_at=now + timedelta(minutes=30),
    )
    status = second.annotator_statuses.create(project=project)
    with transaction.atomic():
        served = queue_sql.serve(
            project=project, solution=solution, user_id=second.pk, now=now, lease_until=now, status_id=status.pk
        )
    assert served is None
    status.refresh_from_db()
    assert status.tasks_served == 0  # counted only with a served task
