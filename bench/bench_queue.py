"""Benchmark of the work queue: a real gunicorn server on PostgreSQL, 50 concurrent annotators.

For each queue size (default 10,000 and 1,000,000 solutions of 10 steps) the script loads a project
with server-side generate_series inserts, starts gunicorn, and runs N client threads (split over a
few processes, each thread with its own keep-alive connection and token) that loop
GET tasks/next/ (a real claim) -> POST submit/?next=false (10 rated steps). It reports next-task and
submit latency p50/p95/p99, submits per second, the p99 ratio between the largest and the smallest
queue, and EXPLAIN ANALYZE of the claim query at each size (the database part of a claim).

    .venv/bin/python bench/bench_queue.py                      # 10k and 1M, 50 clients
    .venv/bin/python bench/bench_queue.py --sizes 10000 --seconds 10   # quick run

It drops and recreates its own database (default steplabel_bench_queue). Results go to
bench/results/queue.md and bench/results/queue.json.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import platform
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
PG = "postgres://postgres@127.0.0.1:5432"
SERVER_LOG = Path("/tmp/bench_queue_gunicorn.log")
STEPS_PER_SOLUTION = 10
SOLUTIONS_PER_PROBLEM = 10


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,1000000", help="comma-separated queue sizes")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--client-procs", type=int, default=2, help="processes the client threads are split over")
    parser.add_argument("--seconds", type=float, default=25.0, help="measured seconds per size and mode")
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--direct-claims", type=int, default=300, help="in-process claim_next calls per size")
    parser.add_argument(
        "--think-ms",
        type=float,
        default=5000.0,
        help="pause after each submit in the paced run (mean; 0 skips the paced run)",
    )
    parser.add_argument("--workers", type=int, default=3, help="gunicorn worker processes")
    parser.add_argument(
        "--threads", type=int, default=20, help="gunicorn threads per worker (enough for every keep-alive client)"
    )
    parser.add_argument("--worker-class", default="gthread", help="gthread (keep-alive) or sync")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--db", default="steplabel_bench_queue")
    parser.add_argument("--keep-db", action="store_true", help="do not drop the database at the end")
    return parser.parse_args()


# ---------------------------------------------------------------------------------------------
# Database and data
# ---------------------------------------------------------------------------------------------


def server_env(db: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=f"{PG}/{db}",
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DEBUG="0",  # DEBUG would record every query in memory
        DB_CONN_MAX_AGE="600",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        LOG_LEVEL="WARNING",
        CELERY_BROKER_URL=os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/4"),
        PYTHONPATH=str(ROOT),
    )
    return env


def recreate_database(db: str) -> None:
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{db}"')
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=server_env(db), check=True)


def drop_database(db: str) -> None:
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')


def setup_django(db: str) -> None:
    for key, value in server_env(db).items():
        os.environ[key] = value
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def make_users(n: int) -> list[tuple[int, str]]:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    User = get_user_model()
    users = User.objects.bulk_create([User(username=f"bench{i}") for i in range(n)])
    return [(u.pk, Token.objects.create(user=u).key) for u in users]


def insert_select(cur, model, exprs: dict[str, str], from_sql: str, params: dict) -> None:
    """INSERT INTO model's table SELECT ...: every concrete column, from `exprs` (SQL by field name)
    or else the field's Python default, so columns added to the models later need no edit here."""
    from django.db import connection

    columns, values = [], []
    for f in model._meta.concrete_fields:
        if f.primary_key:
            continue
        columns.append(connection.ops.quote_name(f.column))
        if f.name in exprs:
            values.append(exprs[f.name])
            continue
        default = f.get_default()
        if default is None and not f.null:
            raise RuntimeError(f"bench: no value for {model.__name__}.{f.name}")
        key = f"default_{f.column}"
        params[key] = f.get_db_prep_save(default, connection)
        values.append(f"%({key})s")
    cur.execute(
        f"INSERT INTO {model._meta.db_table} ({', '.join(columns)}) SELECT {', '.join(values)} {from_sql}", params
    )


def load_queue(*, size: int, users: list[tuple[int, str]]) -> tuple[str, float]:
    """A project with `size` open solutions of 10 steps, generated inside PostgreSQL."""
    from django.db import connection

    from annotate.models import Membership, Problem, Project, Role, Solution, Step

    slug = f"bench-{size}"
    # retrain_every=0: the queue alone is measured, not the ML app's post-submit retrain check.
    project = Project.objects.create(slug=slug, overlap=1, qc_rate=0.0, lease_minutes=30, retrain_every=0)
    Membership.objects.bulk_create([Membership(project=project, user_id=pk, role=Role.ANNOTATOR) for pk, _ in users])
    n_problems = -(-size // SOLUTIONS_PER_PROBLEM)
    started = time.perf_counter()
    with connection.cursor() as cur:
        insert_select(
            cur,
            Problem,
            {
                "project": "%(project)s",
                "text": "'Problem ' || g || ': what is $' || g || ' + 1$?'",
                "ground_truth_answer": "(g + 1)::text",
                "subject": "'Algebra'",
                "level": "'Level 3'",
                "source_id": "'bench/' || g",
                "content_hash": "md5('problem' || g)",
                "text_hash": "md5('text' || g)",
                "created_at": "now()",
            },
            "FROM generate_series(1, %(n)s) g",
            {"project": project.pk, "n": n_problems},
        )
        cur.execute("SELECT min(id) FROM annotate_problem WHERE project_id = %s", [project.pk])
        first_problem = cur.fetchone()[0]
        insert_select(
            cur,
            Solution,
            {
                "project": "%(project)s",
                "problem": "%(first_problem)s + (g - 1) / %(per_problem)s",
                "final_answer": "(g %% 7)::text",
                "answer_correct": "g %% 3 = 0",
                "content_hash": "md5('solution' || g)",
                "n_steps": "%(steps)s",
                "priority": "random()",
                "generation": "1",
                "strategy": "'uncertainty'",
                "verifier_score": "random()",
                "created_at": "now()",
            },
            "FROM generate_series(1, %(n)s) g",
            {
                "project": project.pk,
                "first_problem": first_problem,
                "per_problem": SOLUTIONS_PER_PROBLEM,
                "steps": STEPS_PER_SOLUTION,
                "n": size,
            },
        )
        insert_select(
            cur,
            Step,
            {
                "solution": "s.id",
                "index": "k",
                "text": "'Step ' || k || ' of solution ' || s.id || ': expand, simplify and check the sum.'",
            },
            "FROM annotate_solution s, LATERAL generate_series(0, %(steps)s - 1) k WHERE s.project_id = %(project)s",
            {"project": project.pk, "steps": STEPS_PER_SOLUTION},
        )
    connection.close()
    load_seconds = time.perf_counter() - started
    import psycopg

    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE annotate_problem, annotate_solution, annotate_step, annotate_assignment")
    return slug, load_seconds


def explain_claim(*, slug: str, user_pk: int, repeat: int = 5) -> dict:
    """EXPLAIN ANALYZE of the claim's candidate query as the ORM builds it (rolled back); the
    median of `repeat` runs, so one cold-cache run after the bulk load does not decide it."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.utils import timezone

    from annotate.models import Project
    from annotate.services import queue

    project = Project.objects.get(slug=slug)
    user = get_user_model().objects.get(pk=user_pk)
    plans = []
    for _ in range(repeat):
        qs = queue.claim_candidates(project=project, user=user, now=timezone.now(), rejected=[])[:1]
        with transaction.atomic(), connection.cursor() as cur:
            sql, params = qs.query.sql_with_params()
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


# ---------------------------------------------------------------------------------------------
# Server and clients
# ---------------------------------------------------------------------------------------------


def start_server(args: argparse.Namespace) -> subprocess.Popen:
    command = [
        str(Path(sys.executable).with_name("gunicorn")),
        "config.wsgi:application",
        "--bind",
        f"127.0.0.1:{args.port}",
        "--workers",
        str(args.workers),
        "--worker-class",
        args.worker_class,
        "--threads",
        str(args.threads),
        "--keep-alive",
        "30",
        "--log-level",
        "warning",
    ]
    log = open(SERVER_LOG, "a")  # noqa: SIM115 - handed to the child process
    server = subprocess.Popen(
        command, cwd=ROOT, env=server_env(args.db), start_new_session=True, stdout=log, stderr=subprocess.STDOUT
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=2)
            conn.request("GET", "/api/v1/projects/")
            conn.getresponse().read()
            return server
        except OSError:
            time.sleep(0.3)
    stop_server(server)
    raise RuntimeError("gunicorn did not start")


def stop_server(server: subprocess.Popen) -> None:
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)


def submit_body(task: dict, n: int) -> bytes:
    steps = [
        {"index": s["index"], "rating": 1, "flagged": False, "alternatives": [], "human_completion": None}
        for s in task["steps"]
    ]
    return json.dumps(
        {
            "idempotency_key": f"bench-{task['id']}-{n}",
            "finish_reason": "solution",
            "total_time_ms": 60000,
            "steps": steps,
        }
    ).encode()


def client_loop(
    port: int, slug: str, token: str, start_at: float, measure_from: float, stop_at: float, think_s: float, out: list
):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json", "Connection": "keep-alive"}
    next_ms: list[float] = []
    submit_ms: list[float] = []
    errors: list[str] = []
    empty = 0
    rng = random.Random(token)
    time.sleep(max(0.0, start_at - time.time()) + rng.uniform(0, think_s))  # paced clients start spread out
    n = 0
    while time.time() < stop_at:
        t0 = time.perf_counter()
        conn.request("GET", f"/api/v1/projects/{slug}/tasks/next/", headers=headers)
        response = conn.getresponse()
        raw = response.read()
        t1 = time.perf_counter()
        measuring = time.time() >= measure_from
        if response.status == 204:
            empty += 1
            time.sleep(0.05)
            continue
        if response.status != 200:
            errors.append(f"next {response.status} {raw[:200]!r}")
            time.sleep(0.05)
            continue
        task = json.loads(raw)
        n += 1
        conn.request(
            "POST", f"/api/v1/assignments/{task['id']}/submit/?next=false", body=submit_body(task, n), headers=headers
        )
        response = conn.getresponse()
        raw = response.read()
        t2 = time.perf_counter()
        if response.status != 201:
            errors.append(f"submit {response.status} {raw[:200]!r}")
            continue
        if measuring and time.time() <= stop_at:
            next_ms.append((t1 - t0) * 1000)
            submit_ms.append((t2 - t1) * 1000)
        if think_s:
            time.sleep(think_s * rng.uniform(0.5, 1.5))  # an annotator reading and rating
    conn.close()
    out.append({"next_ms": next_ms, "submit_ms": submit_ms, "errors": errors, "empty": empty})


def client_process(port, slug, tokens, start_at, measure_from, stop_at, think_s, queue):
    results: list = []
    threads = [
        threading.Thread(
            target=client_loop, args=(port, slug, token, start_at, measure_from, stop_at, think_s, results)
        )
        for token in tokens
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    queue.put(results)


def run_load(args: argparse.Namespace, slug: str, tokens: list[str], think_s: float) -> dict:
    start_at = time.time() + 2.0
    measure_from = start_at + args.warmup
    stop_at = measure_from + args.seconds
    queue: mp.Queue = mp.Queue()
    chunks = [tokens[i :: args.client_procs] for i in range(args.client_procs)]
    procs = [
        mp.Process(
            target=client_process, args=(args.port, slug, chunk, start_at, measure_from, stop_at, think_s, queue)
        )
        for chunk in chunks
        if chunk
    ]
    for proc in procs:
        proc.start()
    results = [r for _ in procs for r in queue.get()]
    for proc in procs:
        proc.join()
    next_ms = [x for r in results for x in r["next_ms"]]
    submit_ms = [x for r in results for x in r["submit_ms"]]
    errors = [e for r in results for e in r["errors"]]
    return {
        "next": percentiles(next_ms),
        "submit": percentiles(submit_ms),
        "submits": len(submit_ms),
        "submits_per_s": round(len(submit_ms) / args.seconds, 1),
        "errors": len(errors),
        "error_samples": errors[:5],
        "empty_responses": sum(r["empty"] for r in results),
    }


def percentiles(values: list[float]) -> dict:
    if not values:
        return {"n": 0, "p50": None, "p95": None, "p99": None, "mean": None}
    values = sorted(values)

    def pick(q: float) -> float:
        return round(values[min(len(values) - 1, int(q * len(values)))], 2)

    return {
        "n": len(values),
        "p50": pick(0.50),
        "p95": pick(0.95),
        "p99": pick(0.99),
        "mean": round(statistics.fmean(values), 2),
    }


def settle_database() -> None:
    """Flush the bulk load (checkpoint) so its write-back does not land in a measured run."""
    import psycopg

    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
        conn.execute("CHECKPOINT")


def direct_claims(*, slug: str, users: list[tuple[int, str]], count: int) -> dict:
    """claim_next() called in this process, one at a time (no HTTP, no concurrency): the queue's own
    cost at this size. Each claim is submitted so the next one walks past it as in real use."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from annotate.models import Project
    from annotate.services.queue import claim_next
    from labeling_api.serializers_submit import submit_payload as submit

    project = Project.objects.get(slug=slug)
    people = list(get_user_model().objects.filter(pk__in=[pk for pk, _ in users]))
    timings = []
    for i in range(count):
        user = people[i % len(people)]
        started = time.perf_counter()
        assignment = claim_next(project=project, user=user)
        timings.append((time.perf_counter() - started) * 1000)
        steps = [
            {"index": k, "rating": 1, "flagged": False, "alternatives": [], "human_completion": None}
            for k in range(STEPS_PER_SOLUTION)
        ]
        body = {"idempotency_key": f"direct-{assignment.pk}", "finish_reason": "solution", "total_time_ms": 1}
        submit(assignment=assignment, user=user, payload={**body, "steps": steps})
    connection.close()
    return percentiles(timings)


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


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


def write_report(report: dict) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "queue.json").write_text(json.dumps(report, indent=2) + "\n")
    lines = [
        "# Work-queue benchmark",
        "",
        f"{report['clients']} concurrent clients (threads over {report['client_procs']} processes, one keep-alive "
        f"connection and token each) against gunicorn ({report['workers']} workers x {report['threads']} threads, "
        f"{report['worker_class']}) on PostgreSQL. Each client loops GET tasks/next/ (a real claim) then "
        f"POST submit/?next=false with 10 rated steps. {report['seconds']:.0f} s measured after "
        f"{report['warmup']:.0f} s warm-up, per queue size and mode. Overlap 1, QC rate 0, automatic "
        "retraining off (its post-submit check belongs to the ML app). "
        "Latencies are measured by the clients (full HTTP round trip).",
        "",
        "- **saturation**: no pause between tasks: the server is flooded by 50 closed-loop clients; this gives "
        "the throughput (submits/s), and latencies that are mostly waiting for a CPU behind the other 49 clients.",
        f"- **paced**: each client pauses about {report['think_ms']:.0f} ms (0.5x-1.5x, random) after each submit, "
        "like an annotator reading the next solution; latencies are closer to the cost of one request.",
        "",
        f"Machine: {report['machine']}; load average before the run {report['loadavg_before']} (other engineers' "
        "jobs share these 2 cores with the clients, the server and PostgreSQL).",
        "",
        "| queue size | mode | next p50 | next p95 | next p99 | submit p50 | submit p95 | submit p99 | submits/s | "
        "errors | integrity |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for run in report["runs"]:
        for mode, res in run["modes"].items():
            n, s = res["next"], res["submit"]
            lines.append(
                f"| {run['size']:,} | {mode} | {n['p50']} ms | {n['p95']} ms | {n['p99']} ms | {s['p50']} ms | "
                f"{s['p95']} ms | {s['p99']} ms | {res['submits_per_s']} | {res['errors']} | {run['integrity']} |"
            )
    lines += [
        "",
        "The queue's own cost at each size: EXPLAIN ANALYZE of the claim's candidate query, as the ORM builds "
        "it, for an annotator with an empty history (median of 5 runs); and claim_next() timed in process:",
        "",
        "| queue size | generated in | claim query | planning | indexes used | claim_next() p50 | p95 | p99 |",
        "|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for run in report["runs"]:
        ex, direct = run["explain"], run["direct"]
        lines.append(
            f"| {run['size']:,} | {run['load_seconds']:.0f} s | {ex['execution_ms']} ms | {ex['planning_ms']} ms | "
            f"{', '.join(ex['indexes'])} | {direct['p50']} ms | {direct['p95']} ms | {direct['p99']} ms |"
        )
    lines += [
        "",
        "claim_next(): the whole claim service (all its queries and the commit, no HTTP), called "
        f"{report['direct_claims']} times one after another in the benchmark process, each claim then submitted.",
    ]
    lines += ["", "| target | measured | met |", "|---|---|---|"]
    for label, value, met in report["targets"]:
        lines.append(f"| {label} | {value} | {'yes' if met else 'no'} |")
    lines += [
        "",
        f"Total benchmark time {report['total_seconds']:.0f} s. Reproduce: `.venv/bin/python bench/bench_queue.py` "
        "(see --help; it creates and drops its own database).",
        "",
    ]
    (RESULTS / "queue.md").write_text("\n".join(lines))


def main() -> None:
    args = parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    modes = {"saturation": 0.0}
    if args.think_ms:
        modes["paced"] = args.think_ms / 1000
    began = time.perf_counter()
    loadavg = os.getloadavg()
    SERVER_LOG.write_text("")
    print(f"recreating database {args.db} ...", flush=True)
    recreate_database(args.db)
    setup_django(args.db)
    users = make_users(args.clients)
    tokens = [token for _, token in users]
    runs = []
    try:
        # Every queue is loaded first, then flushed to disk, so each size is measured in the same
        # database state (the smaller project shares its tables and indexes with the larger one).
        loaded = []
        for size in sizes:
            print(f"loading {size:,} solutions ...", flush=True)
            slug, load_seconds = load_queue(size=size, users=users)
            print(f"  loaded in {load_seconds:.1f} s", flush=True)
            loaded.append((size, slug, load_seconds))
        settle_database()
        for size, slug, load_seconds in loaded:
            explain = explain_claim(slug=slug, user_pk=users[0][0])
            direct = direct_claims(slug=slug, users=users, count=args.direct_claims)
            print(f"{size:,}: claim query {explain}; in-process claim_next {direct}", flush=True)
            run = {
                "size": size,
                "load_seconds": round(load_seconds, 1),
                "explain": explain,
                "direct": direct,
                "modes": {},
            }
            server = start_server(args)
            try:
                for mode, think_s in modes.items():
                    print(f"  {mode}: {args.clients} clients for {args.warmup + args.seconds:.0f} s ...", flush=True)
                    run["modes"][mode] = run_load(args, slug, tokens, think_s)
                    print("   ", json.dumps(run["modes"][mode]), flush=True)
                    if run["modes"][mode]["errors"]:
                        print(f"    server errors: see {SERVER_LOG}", flush=True)
            finally:
                stop_server(server)
            check = check_counts(slug)
            run["check"] = check
            run["integrity"] = (
                f"ok: {check['annotations']} annotations, {check['distinct_solutions']} distinct solutions"
                if check["annotations"] == check["distinct_solutions"]
                else f"DUPLICATES: {check}"
            )
            runs.append(run)
    finally:
        if not args.keep_db:
            from django.db import connections

            connections.close_all()
            drop_database(args.db)

    first, last = runs[0], runs[-1]
    paced = "paced" if "paced" in modes else "saturation"

    def p99(run: dict, mode: str) -> float:
        return run["modes"][mode]["next"]["p99"] or float("nan")  # nan when every request failed

    ratios = {mode: round(p99(last, mode) / p99(first, mode), 2) for mode in modes} if len(runs) > 1 else {}
    best_rate = max(run["modes"]["saturation"]["submits_per_s"] for run in runs)
    targets = [
        (
            f"next-task p99 < 50 ms at {last['size']:,} ({mode})",
            f"{p99(last, mode)} ms",
            p99(last, mode) < 50,
        )
        for mode in modes
    ]
    targets += [
        (f"next-task p99 growth {first['size']:,} -> {last['size']:,} < 1.5x ({mode})", f"{ratio}x", ratio < 1.5)
        for mode, ratio in ratios.items()
    ]
    targets.append(("submits/s >= 200 (saturation)", f"{best_rate}", best_rate >= 200))
    report = {
        "clients": args.clients,
        "client_procs": args.client_procs,
        "workers": args.workers,
        "worker_class": args.worker_class,
        "threads": args.threads,
        "seconds": args.seconds,
        "warmup": args.warmup,
        "direct_claims": args.direct_claims,
        "think_ms": args.think_ms,
        "machine": f"{os.cpu_count()} CPUs, {platform.platform()}, Python {platform.python_version()}",
        "loadavg_before": [round(x, 2) for x in loadavg],
        "runs": runs,
        "next_p99_ratio_largest_vs_smallest": ratios,
        "paced_mode": paced,
        "targets": targets,
        "total_seconds": round(time.perf_counter() - began, 1),
    }
    write_report(report)
    print(f"next-task p99 ratio {last['size']:,} vs {first['size']:,}: {ratios}")
    print(f"wrote {RESULTS / 'queue.md'} in {report['total_seconds']} s total")


if __name__ == "__main__":
    main()
