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
import json
import os
import platform
import time

from queue_bench.claims import check_counts, direct_claims, explain_claim
from queue_bench.clients import run_load
from queue_bench.database import drop_database, make_users, recreate_database, settle_database, setup_django
from queue_bench.loading import load_queue
from queue_bench.report import RESULTS, ratios_and_targets, write_report
from queue_bench.server import SERVER_LOG, start_server, stop_server

# the workspace's own flow: each submit answers with the next task (one request per label)
BROWSER_MODE = "saturation, browser flow"


def cpu_reference_seconds() -> float:
    """CPU seconds of a fixed pure-Python loop (10M additions), best of 3: this shared machine's cores
    run at different speeds on different days, so runs are compared by it, not by the date."""
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        total = 0
        for i in range(10_000_000):
            total += i
        best = min(best, time.process_time() - started)
    return round(best, 3)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,1000000", help="comma-separated queue sizes")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--client-procs", type=int, default=2, help="processes the client threads are split over")
    parser.add_argument("--seconds", type=float, default=25.0, help="measured seconds per size and mode")
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--paced-factor", type=float, default=3.0, help="the paced run is measured this much longer")
    parser.add_argument("--direct-claims", type=int, default=300, help="in-process claim_next calls per size")
    parser.add_argument(
        "--think-ms",
        type=float,
        default=5000.0,
        help="pause after each submit in the paced run (mean; 0 skips the paced run)",
    )
    parser.add_argument(
        "--browser-flow",
        action="store_true",
        help="also measure saturation as the workspace submits: one POST that answers with the next task",
    )
    parser.add_argument("--workers", type=int, default=3, help="gunicorn worker processes")
    parser.add_argument(
        "--threads", type=int, default=20, help="gunicorn threads per worker (enough for every keep-alive client)"
    )
    parser.add_argument("--worker-class", default="gthread", help="gthread (keep-alive) or sync")
    parser.add_argument(
        "--queue-per-mode-max",
        type=int,
        default=200_000,
        help="sizes up to this get a fresh queue per mode (one saturated mode can empty a small queue)",
    )
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--db", default="steplabel_bench_queue")
    parser.add_argument("--keep-db", action="store_true", help="do not drop the database at the end")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    modes = {"saturation": 0.0}
    if args.think_ms:
        modes["paced"] = args.think_ms / 1000
    if args.browser_flow:
        modes[BROWSER_MODE] = 0.0
    began = time.perf_counter()
    loadavg = os.getloadavg()
    cpu_reference = cpu_reference_seconds()
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
            copies = len(modes) if size <= args.queue_per_mode_max else 1
            slugs = [load_queue(size=size, users=users, slug=f"bench-{size}-{i}")[0] for i in range(1, copies)]
            slug, load_seconds = load_queue(size=size, users=users)
            print(f"  loaded in {load_seconds:.1f} s", flush=True)
            loaded.append((size, [slug, *slugs], load_seconds))
        settle_database()
        for size, slugs, load_seconds in loaded:
            slug = slugs[0]
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
                for i, (mode, think_s) in enumerate(modes.items()):
                    measured = args.seconds * (args.paced_factor if think_s else 1)
                    print(f"  {mode}: {args.clients} clients for {args.warmup + measured:.0f} s ...", flush=True)
                    flow = "browser" if mode == BROWSER_MODE else "claim"
                    run["modes"][mode] = run_load(
                        args, slugs[i % len(slugs)], tokens, think_s, server_pid=server.pid, flow=flow
                    )
                    print("   ", json.dumps(run["modes"][mode]), flush=True)
                    if run["modes"][mode]["errors"]:
                        print(f"    server errors: see {SERVER_LOG}", flush=True)
            finally:
                stop_server(server)
            counts = [check_counts(s) for s in slugs]
            check = {key: sum(c[key] for c in counts) for key in counts[0]}
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
    ratios, targets = ratios_and_targets(runs, modes)
    report = {
        "clients": args.clients,
        "client_procs": args.client_procs,
        "workers": args.workers,
        "worker_class": args.worker_class,
        "threads": args.threads,
        "seconds": args.seconds,
        "paced_factor": args.paced_factor,
        "warmup": args.warmup,
        "direct_claims": args.direct_claims,
        "queue_per_mode_max": args.queue_per_mode_max,
        "think_ms": args.think_ms,
        "machine": f"{os.cpu_count()} CPUs, {platform.platform()}, Python {platform.python_version()}",
        "loadavg_before": [round(x, 2) for x in loadavg],
        "cpu_reference_s": cpu_reference,
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
