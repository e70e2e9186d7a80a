"""How fast `GET /api/v1/projects/{slug}/stats/` answers on a big project.

    .venv/bin/python bench/bench_stats.py [--steps 1000000] [--labels 100000] [--calls 40]

Builds a fresh PostgreSQL database (steplabel_bench_stats) and fills it in SQL with INSERT ...
SELECT generate_series: solutions of 10 steps each (1,000,000 steps = 100,000 solutions over 4
generations and 4 strategies), `labels` annotations by 50 annotators over the last 30 days with
consistent counters and label JSON (two fifths of the labeled solutions labeled twice, so
agreement has work to do), 200 gold questions with gold labels and two QC answers each, and 20
training runs with held-out metrics. Then calls the endpoint as a lead through Django's test
client (in process, persistent connection as in production), after two warm-up calls, and reports
p50/p95/max and the slowest queries of one call. Target: p95 < 300 ms.
Writes bench/results/stats.md and .json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from stats_bench.fill import DB, ROOT, STEPS_PER_SOLUTION, fill_project, reset_database
from stats_bench.measure import NEW_LABELS_PER_CALL, arrive, backend_cpu_s, percentile
from stats_bench.report import write_report

TARGET_MS = 300


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--labels", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--reuse", action="store_true", help="Keep the database from the last run.")
    args = parser.parse_args()
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{DB}",
        "DEBUG": "false",
        "LOG_LEVEL": "WARNING",
    }
    os.environ.update(env)
    solutions = args.steps // STEPS_PER_SOLUTION
    if not args.reuse:
        reset_database({**os.environ, **env})
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from annotate.models import Annotation, Project, Step

    fill = {} if args.reuse else fill_project(solutions=solutions, labels=args.labels)
    project = Project.objects.get(slug="bench")
    counts = {
        "steps": Step.objects.filter(solution__project=project).count(),
        "solutions": project.solutions.count(),
        "labels": Annotation.objects.filter(project=project, is_gold=False).count(),
        "gold_labels": Annotation.objects.filter(project=project, is_gold=True).count(),
    }
    print(f"data: {counts} {fill}")
    client = Client()
    client.force_login(get_user_model().objects.get(username="lead"))
    url = "/api/v1/projects/bench/stats/"
    from django.core.cache import cache

    # Cold: the label snapshot rebuilt (once per SNAPSHOT_SECONDS per cache), full aggregation.
    cold = []
    for _ in range(3):
        cache.clear()
        t = time.perf_counter()
        assert client.get(url).status_code == 200
        cold.append((time.perf_counter() - t) * 1000)
    # Steady state: the snapshot in the cache, labels since it scanned by id range.
    for _ in range(2):
        assert client.get(url).status_code == 200
    # All of a call's database work in this one backend (no parallel workers), so its CPU time can be read.
    with connection.cursor() as cur:
        cur.execute("SET max_parallel_workers_per_gather = 0")
    backend = connection.connection.info.backend_pid
    times, cpu = [], []
    for _ in range(args.calls):
        arrive(project.pk, NEW_LABELS_PER_CALL)  # labels keep arriving: each call has new ones to add
        t, c, b = time.perf_counter(), time.process_time(), backend_cpu_s(backend)
        response = client.get(url)
        times.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c + backend_cpu_s(backend) - b) * 1000)
        assert response.status_code == 200, response.status_code
    body = response.json()
    load_during = os.getloadavg()
    # Query breakdown of one computation (the test client's request_started resets query logs).
    from annotate.selectors.stats import project_stats

    cache.clear()
    with CaptureQueriesContext(connection) as queries:
        project_stats(project=project)  # a cold computation: every query it makes
    captured = list(queries.captured_queries)
    reset_queries()
    slowest = sorted(
        ({"ms": round(float(q["time"]) * 1000, 1), "sql": q["sql"][:160]} for q in captured),
        key=lambda q: -q["ms"],
    )[:6]
    t = time.perf_counter()
    assert client.get("/api/v1/projects/bench/stats/annotators.csv").status_code == 200
    csv_ms = (time.perf_counter() - t) * 1000
    result = {
        "data": counts,
        "fill_seconds": fill,
        "calls": args.calls,
        "new_labels_per_call": NEW_LABELS_PER_CALL,
        "cold_ms": [round(x, 1) for x in cold],
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(percentile(times, 0.95), 1),
        "max_ms": round(max(times), 1),
        "min_ms": round(min(times), 1),
        "target_ms": TARGET_MS,
        "meets_target": percentile(times, 0.95) < TARGET_MS,
        "queries_per_call": len(captured),
        "cpu_ms_per_call_mean": round(statistics.mean(cpu), 1),
        "cpu_ms_per_call_p95": round(percentile(cpu, 0.95), 1),
        "slowest_queries": slowest,
        "annotators_csv_ms": round(csv_ms, 1),
        "response_bytes": len(response.content),
        "sample": {
            "solutions_labeled": body["progress"]["solutions_labeled"],
            "steps_labeled": body["progress"]["steps_labeled"],
            "eta_hours": body["progress"]["eta_hours"],
            "median_seconds_per_step": body["throughput"]["median_seconds_per_step"],
            "alpha": body["quality"]["agreement"]["alpha"],
            "agreement_solutions": body["quality"]["agreement"]["solutions_compared"],
            "annotators": len(body["quality"]["annotators"]),
        },
        "load_average_1_5_15": [round(x, 2) for x in load_during],
        "postgres": connection.cursor().connection.info.server_version,
        "cpus": os.cpu_count(),
    }
    print(write_report(result))


if __name__ == "__main__":
    main()
