"""Query budgets of the hot path: claiming a task and submitting it (upper bounds that fail when a
change adds queries). Counted through the API with token auth, as an annotator's client calls it,
in the steady state (the annotator's status and labeler profile exist)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import Annotation
from tests.factories import make_project, make_solutions, make_user, payload

pytestmark = pytest.mark.django_db(transaction=True)  # on_commit hooks (the auto-retrain check) run

# Before issue 13 a submit also paid 4 queries for the auto-retrain check (now 1: a counter on the
# project): submit alone 14 -> 11, submit answering with the next task 24 -> 21. Then the hot path's
# statements were written once (annotate/queue_sql.py) and merged: claim 12 -> 9, submit 11 -> 8,
# submit with the next task 21 -> 15.
# claim: token, roles, BEGIN, status lock (+ relaxed commit), held lease, candidate,
#   insert if room (+ status counter), COMMIT, steps
# submit: token, assignment and roles, steps and labeler id, BEGIN, assignment lock,
#   counter + annotation + submitted status, COMMIT, auto-retrain counter
CLAIM_BUDGET = 9
SUBMIT_BUDGET = 8
SUBMIT_AND_CLAIM_BUDGET = 15


def _client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def _counted(call) -> tuple[object, list[str]]:
    with CaptureQueriesContext(connection) as queries:
        response = call()
    return response, [q["sql"] for q in queries.captured_queries]


def test_claim_and_submit_stay_within_their_query_budgets():
    project = make_project("budget", lease_minutes=30, retrain_every=500)
    make_solutions(project, 6)
    client = _client(make_user("ann", project=project))
    next_url = "/api/v1/projects/budget/tasks/next/"

    def submit_url(task: dict, *, next_task: bool) -> str:
        return f"/api/v1/assignments/{task['id']}/submit/" + ("" if next_task else "?next=false")

    first = client.get(next_url).json()  # warm: creates the annotator's status and labeler profile
    assert (
        client.post(submit_url(first, next_task=False), payload([1, 1, -1], key="a"), format="json").status_code == 201
    )

    claimed, claim_sql = _counted(lambda: client.get(next_url))
    assert claimed.status_code == 200
    task = claimed.json()
    submitted, submit_sql = _counted(
        lambda: client.post(submit_url(task, next_task=False), payload([1, 0, 1], key="b"), format="json")
    )
    assert submitted.status_code == 201, submitted.content
    task = client.get(next_url).json()
    both, both_sql = _counted(
        lambda: client.post(submit_url(task, next_task=True), payload([1, 1, 1], key="c"), format="json")
    )
    assert both.status_code == 201 and both.json()["next"]["id"] != task["id"]

    assert Annotation.objects.count() == 3
    assert len(claim_sql) <= CLAIM_BUDGET, claim_sql
    assert len(submit_sql) <= SUBMIT_BUDGET, submit_sql
    assert len(both_sql) <= SUBMIT_AND_CLAIM_BUDGET, both_sql
    print(f"\nqueries: claim {len(claim_sql)}, submit {len(submit_sql)}, submit+next {len(both_sql)}")
