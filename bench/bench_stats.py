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
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
DB = "steplabel_bench_stats"
STEPS_PER_SOLUTION = 10
ANNOTATORS = 50
GOLD = 200
TARGET_MS = 300


def _label_json(ratings: list[int]) -> str:
    return json.dumps(
        [
            {
                "completions": [{"text": f"step {i}", "rating": r, "flagged": False}],
                "human_completion": None,
                "chosen_completion": None if r == -1 else 0,
            }
            for i, r in enumerate(ratings)
        ]
    )


def _psql(sql: str, db: str = "postgres") -> None:
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", db, "-qc", sql], check=True)


def _reset_database(env: dict[str, str]) -> None:
    _psql(f"DROP DATABASE IF EXISTS {DB}")
    _psql(f"CREATE DATABASE {DB}")
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)


def _fill(*, solutions: int, labels: int) -> dict[str, float]:
    """Generate the project in SQL; returns seconds per phase."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from annotate.models import AnnotatorStatus, Membership, Project, Role
    from ml.models import TrainingRun

    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    project = Project.objects.create(slug="bench", name="Stats benchmark", overlap=2, screening_threshold=0.8)
    User = get_user_model()
    lead = User.objects.create_user("lead")
    Membership.objects.create(project=project, user=lead, role=Role.LEAD)
    users = User.objects.bulk_create([User(username=f"ann{i:02d}") for i in range(ANNOTATORS)])
    Membership.objects.bulk_create([Membership(project=project, user=u, role=Role.ANNOTATOR) for u in users])
    AnnotatorStatus.objects.bulk_create(
        [
            AnnotatorStatus(project=project, user=u, screening_status="passed" if i % 10 else "failed")
            for i, u in enumerate(users)
        ]
    )
    first_user = min(u.pk for u in users)
    doubles = min(labels * 2 // 5, (solutions - GOLD) * 2) // 2  # solutions labeled twice
    singles = labels - 2 * doubles
    params = {
        "p": project.pk,
        "n": solutions,
        "gold_from": solutions - GOLD + 1,
        "u0": first_user,
        "nu": ANNOTATORS,
        "doubles": doubles,
        "labels": labels,
    }
    with connection.cursor() as cur:
        cur.execute(
            """
            INSERT INTO annotate_problem (id, project_id, text, ground_truth_answer, subject, level, source_id,
                content_hash, text_hash, is_math500, created_at)
            SELECT g, %(p)s, 'Problem ' || g || ': compute $1 + ' || g || '$.', (g + 1)::text, 'Algebra',
                'Level ' || (g %% 5 + 1), '', md5('p' || g), md5('t' || g), false, now()
            FROM generate_series(1, %(n)s) g
            """,
            params,
        )
        cur.execute(
            """
            INSERT INTO annotate_solution (id, project_id, problem_id, final_answer, answer_correct, is_pregenerated,
                is_quality_control, is_screening, is_gold, content_hash, n_steps, priority, is_open, annotation_count,
                generation, strategy, verifier_score, created_at)
            SELECT g, %(p)s, g, g::text,
                CASE WHEN g %% 10 < 3 THEN true WHEN g %% 10 = 9 THEN NULL ELSE false END,
                true, g >= %(gold_from)s, false, g >= %(gold_from)s, md5('s' || g), 10,
                (g::bigint * 7919 %% 1000) / 1000.0,
                g > %(doubles)s AND g < %(gold_from)s,
                CASE WHEN g >= %(gold_from)s THEN 3 WHEN g <= %(doubles)s THEN 2
                     WHEN g <= %(doubles)s + %(labels)s - 2 * %(doubles)s THEN 1 ELSE 0 END,
                CASE WHEN g >= %(gold_from)s THEN NULL ELSE g %% 4 END,
                CASE WHEN g >= %(gold_from)s THEN '' ELSE
                    (ARRAY['random', 'uncertainty', 'convincing_wrong', 'mix'])[g %% 4 + 1] END,
                (g::bigint * 104729 %% 1000) / 1000.0, now()
            FROM generate_series(1, %(n)s) g
            """,
            params,
        )
        timings["problems_solutions_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        cur.execute(
            f"""
            INSERT INTO annotate_step (id, solution_id, index, text)
            SELECT (s - 1) * {STEPS_PER_SOLUTION} + i + 1, s, i, 'Step ' || i || ' of solution ' || s || ': $x + 1$.'
            FROM generate_series(1, %(n)s) s, generate_series(0, {STEPS_PER_SOLUTION - 1}) i
            """,
            params,
        )
        timings["steps_s"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        # Labels a = 1..labels: the first 2*doubles label solutions 1..doubles twice (two annotators),
        # the rest label the next solutions once. Counters match the label JSON built beside them.
        cur.execute(
            """
            WITH base AS (
                SELECT a,
                    CASE WHEN a <= 2 * %(doubles)s THEN (a + 1) / 2 ELSE a - %(doubles)s END AS sol,
                    3 + (a * 31 %% 8) AS n,
                    (a %% 3 = 0) AS neg, (a %% 5 = 0) AS neu, (a %% 20 = 0) AS flag
                FROM generate_series(1, %(labels)s) a
            ), shaped AS (
                SELECT base.*,
                    %(u0)s + (sol + CASE WHEN a <= 2 * %(doubles)s THEN (a %% 2) * 17 ELSE 0 END) %% %(nu)s AS who
                FROM base
            )
            INSERT INTO annotate_annotation (project_id, solution_id, annotator_id, labeler_uuid, source, submitted_at,
                timestamp_text, generation, is_quality_control, is_screening, is_gold, finish_reason, finish_note,
                total_time_ms, label_steps, n_label_steps, n_positive, n_neutral, n_negative, n_unrated, n_flagged,
                n_alternatives, first_error_index, created_at)
            SELECT %(p)s, sol, who, md5('u' || who), 'app',
                now() - make_interval(secs => (a::bigint * 104729) %% (30 * 86400)), '', sol %% 4, false, false, false,
                CASE WHEN neg THEN 'found_error' WHEN a %% 11 = 0 THEN 'give_up' ELSE 'solution' END, '',
                20000 + (a::bigint * 7907) %% 180000,
                (SELECT '[' || string_agg(format(
                    '{"completions":[{"text":"step %%s","rating":%%s,"flagged":%%s}],'
                    '"human_completion":null,"chosen_completion":%%s}',
                    i,
                    CASE WHEN neg AND i = n - 1 THEN -1 WHEN neu AND i = 1 THEN 0 ELSE 1 END,
                    CASE WHEN flag AND i = 0 THEN 'true' ELSE 'false' END,
                    CASE WHEN neg AND i = n - 1 THEN 'null' ELSE '0' END), ',' ORDER BY i) || ']'
                 FROM generate_series(0, n - 1) i),
                n, n - neg::int - neu::int, neu::int, neg::int, 0, flag::int, 0,
                CASE WHEN neg THEN n - 1 END, now()
            FROM shaped
            """,
            params,
        )
        # Gold: one trusted label per gold question, and two QC answers (the second disagrees at step 2).
        cur.execute(
            """
            INSERT INTO annotate_annotation (project_id, solution_id, annotator_id, labeler_uuid, source, submitted_at,
                timestamp_text, generation, is_quality_control, is_screening, is_gold, finish_reason, finish_note,
                total_time_ms, label_steps, n_label_steps, n_positive, n_neutral, n_negative, n_unrated, n_flagged,
                n_alternatives, first_error_index, created_at)
            SELECT %(p)s, g, CASE WHEN k = 0 THEN NULL ELSE %(u0)s + (g * 3 + k) %% %(nu)s END,
                CASE WHEN k = 0 THEN 'gold' ELSE md5('u' || (%(u0)s + (g * 3 + k) %% %(nu)s)) END,
                CASE WHEN k = 0 THEN 'import' ELSE 'app' END,
                now() - make_interval(secs => (g * 7 + k * 3600) %% (20 * 86400)), '', NULL, true, false, k = 0,
                'found_error', '', CASE WHEN k = 0 THEN NULL ELSE 60000 END,
                CASE WHEN k = 2 THEN %(answer_wrong)s ELSE %(answer_right)s END,
                CASE WHEN k = 2 THEN 2 ELSE 3 END, CASE WHEN k = 2 THEN 1 ELSE 2 END, 0, 1, 0, 0, 0,
                CASE WHEN k = 2 THEN 1 ELSE 2 END, now()
            FROM generate_series(%(gold_from)s, %(n)s) g, generate_series(0, 2) k
            """,
            {**params, "answer_right": _label_json([1, 1, -1]), "answer_wrong": _label_json([1, -1])},
        )
        timings["annotations_s"] = time.perf_counter() - t2
    for i in range(20):
        heldout = {
            "auroc_negative": 0.55 + i * 0.015,
            "accuracy": 0.5 + i * 0.01,
            "first_error_f1": 0.2 + i * 0.012,
            "ece": 0.2 - i * 0.008,
        }
        TrainingRun.objects.create(
            project=project,
            status="succeeded",
            label_count=(i + 1) * 5000,
            is_active=i == 19,
            metrics={"train": heldout, "heldout": heldout},
        )
    t3 = time.perf_counter()
    with connection.cursor() as cur:
        for table in ("annotate_problem", "annotate_solution", "annotate_step", "annotate_annotation"):
            cur.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
    connection.close()
    _psql("VACUUM ANALYZE", DB)
    timings["vacuum_analyze_s"] = time.perf_counter() - t3
    return {k: round(v, 2) for k, v in timings.items()} | {"doubles": doubles, "singles": singles}


NEW_LABELS_PER_CALL = 25
_COPIED = (
    "project_id, solution_id, annotator_id, labeler_uuid, source, timestamp_text, generation, is_quality_control, "
    "is_screening, is_gold, finish_reason, finish_note, total_time_ms, label_steps, n_label_steps, n_positive, "
    "n_neutral, n_negative, n_unrated, n_flagged, n_alternatives, first_error_index"
)


def _arrive(project_id: int, n: int) -> None:
    """n new labels submitted now (copies of random existing ones), committed before the next call."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(
            f"""INSERT INTO annotate_annotation ({_COPIED}, submitted_at, created_at)
                SELECT {_COPIED}, now(), now() FROM annotate_annotation
                WHERE project_id = %s AND NOT is_gold AND id > (random() * 90000)::int LIMIT %s""",
            [project_id, n],
        )


def _backend_cpu_s(pid: int) -> float:
    """user + system CPU seconds of a local process (the PostgreSQL backend serving this connection)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


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
        _reset_database({**os.environ, **env})
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from annotate.models import Annotation, Project, Step

    fill = {} if args.reuse else _fill(solutions=solutions, labels=args.labels)
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
        _arrive(project.pk, NEW_LABELS_PER_CALL)  # labels keep arriving: each call has new ones to add
        t, c, b = time.perf_counter(), time.process_time(), _backend_cpu_s(backend)
        response = client.get(url)
        times.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c + _backend_cpu_s(backend) - b) * 1000)
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
        "p95_ms": round(_percentile(times, 0.95), 1),
        "max_ms": round(max(times), 1),
        "min_ms": round(min(times), 1),
        "target_ms": TARGET_MS,
        "meets_target": _percentile(times, 0.95) < TARGET_MS,
        "queries_per_call": len(captured),
        "cpu_ms_per_call_mean": round(statistics.mean(cpu), 1),
        "cpu_ms_per_call_p95": round(_percentile(cpu, 0.95), 1),
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
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "stats.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        "# /stats/ on a big project",
        "",
        "`.venv/bin/python bench/bench_stats.py` (bench/bench_stats.py): PostgreSQL "
        f"{result['postgres']}, {result['cpus']} CPUs, Django test client in process with a persistent "
        f"connection, {args.calls} calls after 2 warm-ups, {NEW_LABELS_PER_CALL} new labels committed before each "
        f"call. Machine load average (1/5/15 min) at the end: "
        f"{result['load_average_1_5_15']} (the machine is shared; other engineers' tests run at the same time).",
        "",
        "| data | value |",
        "|---|---|",
        *(f"| {k} | {v:,} |" for k, v in counts.items()),
        "",
        "| GET /api/v1/projects/bench/stats/ (steady state: label snapshot cached, new labels scanned) | ms |",
        "|---|---|",
        f"| p50 | {result['p50_ms']} |",
        f"| p95 | {result['p95_ms']} |",
        f"| max | {result['max_ms']} |",
        f"| target (p95) | < {TARGET_MS} ({'met' if result['meets_target'] else 'NOT met'}) |",
        f"| CPU per call, Django process + PostgreSQL backend (mean / p95) | {result['cpu_ms_per_call_mean']} / "
        f"{result['cpu_ms_per_call_p95']} |",
        f"| queries of a cold computation | {result['queries_per_call']} |",
        f"| cold calls (snapshot rebuilt: full aggregation), 3 tries | {', '.join(map(str, result['cold_ms']))} |",
        f"| annotators.csv (one call) | {result['annotators_csv_ms']} |",
        "",
        "Slowest queries of a cold computation:",
        "",
        "| ms | query |",
        "|---|---|",
        *(f"| {q['ms']} | `{q['sql'][:110].replace('|', '/')}…` |" for q in slowest),
        "",
        f"Data generation (SQL generate_series): {fill}",
        "",
    ]
    (RESULTS / "stats.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
