"""The queue's own cost, in this process: EXPLAIN ANALYZE of the claim query, claim_next() timed
one call at a time, and the integrity check after a run (no solution labeled twice)."""

from __future__ import annotations

import json
import statistics
import time

from queue_bench.timing import percentiles


def explain_claim(*, slug: str, user_pk: int, repeat: int = 5) -> dict:
    """EXPLAIN ANALYZE of the claim's candidate query (annotate.queue_sql, rolled back); the
    median of `repeat` runs, so one cold-cache run after the bulk load does not decide it."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.utils import timezone

    from annotate import queue_sql
    from annotate.models import Project

    project = Project.objects.get(slug=slug)
    user = get_user_model().objects.get(pk=user_pk)
    plans = []
    for _ in range(repeat):
        sql, params = queue_sql.candidate_statement(project=project, user_id=user.pk, now=timezone.now(), rejected=[])
        with transaction.atomic(), connection.cursor() as cur:
            cur.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, params)
            plan = cur.fetchone()[0]
            transaction.set_rollback(True)
        plans.append((json.loads(plan) if isinstance(plan, str) else plan)[0])
    index_names = []
    stack = [plans[0]["Plan"]]
    while stack:
        current = stack.pop()
        if "Index Name" in current:
            index_names.append(current["Index Name"])
        stack.extend(current.get("Plans", []))
    connection.close()
    return {
        "execution_ms": round(statistics.median(p["Execution Time"] for p in plans), 3),
        "planning_ms": round(statistics.median(p["Planning Time"] for p in plans), 3),
        "first_run_ms": round(plans[0]["Execution Time"], 3),
        "indexes": sorted(set(index_names)),
    }


def timed_claims(*, project, users: list, count: int, key_prefix: str) -> dict:
    """claim_next() for `users` in turn, `count` times, each claim timed and then submitted (every
    step +1) so the next claim walks past it as in real use; percentiles of the claims (ms)."""
    from annotate.services.queue import claim_next
    from labeling_api.serializers_submit import submit_payload as submit

    timings = []
    for i in range(count):
        user = users[i % len(users)]
        started = time.perf_counter()
        assignment = claim_next(project=project, user=user)
        timings.append((time.perf_counter() - started) * 1000)
        steps = [{"index": k, "rating": 1, "flagged": False} for k in range(assignment.solution.n_steps)]
        body = {"idempotency_key": f"{key_prefix}-{i}", "finish_reason": "solution", "total_time_ms": 1}
        submit(assignment=assignment, user=user, payload={**body, "steps": steps})
    return percentiles(timings)


def direct_claims(*, slug: str, users: list[tuple[int, str]], count: int) -> dict:
    """claim_next() called in this process, one at a time (no HTTP, no concurrency): the queue's own
    cost at this size."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from annotate.models import Project

    project = Project.objects.get(slug=slug)
    people = list(get_user_model().objects.filter(pk__in=[pk for pk, _ in users]))
    # one key space per queue: the same people claim at every size, and a key names one submit
    result = timed_claims(project=project, users=people, count=count, key_prefix=f"direct-{slug}")
    connection.close()
    return result


def check_counts(slug: str) -> dict:
    """After the run: no solution labeled twice (overlap 1), every submit stored once."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(
            """
            SELECT count(*), count(DISTINCT a.solution_id)
            FROM annotate_annotation a JOIN annotate_project p ON p.id = a.project_id WHERE p.slug = %s
            """,
            [slug],
        )
        annotations, distinct_solutions = cur.fetchone()
    connection.close()
    return {"annotations": annotations, "distinct_solutions": distinct_solutions}
