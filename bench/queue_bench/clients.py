"""The load-generating clients: threads over a few processes, each with its own keep-alive connection
and token, looping GET tasks/next/ then POST submit/?next=false; their timings gathered per run."""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import random
import threading
import time

from queue_bench.cpu import WindowSampler
from queue_bench.timing import percentiles


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
    port: int,
    slug: str,
    token: str,
    start_at: float,
    measure_from: float,
    stop_at: float,
    think_s: float,
    out: list,
    flow: str = "claim",
):
    """One annotator. flow "claim": GET tasks/next/ then POST submit/?next=false, two requests per
    label. flow "browser": what the workspace does, one POST submit/ that answers with the next
    task (GET tasks/next/ only when holding none), so "next" and "submit" time the same request."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json", "Connection": "keep-alive"}
    next_ms: list[float] = []
    submit_ms: list[float] = []
    errors: list[str] = []
    empty = 0
    rng = random.Random(token)
    time.sleep(max(0.0, start_at - time.time()) + rng.uniform(0, think_s))  # paced clients start spread out
    n = 0
    task = None
    while time.time() < stop_at:
        t0 = time.perf_counter()
        if task is None:
            conn.request("GET", f"/api/v1/projects/{slug}/tasks/next/", headers=headers)
            response = conn.getresponse()
            raw = response.read()
            if response.status == 204:
                empty += 1
                time.sleep(0.05)
                continue
            if response.status != 200:
                errors.append(f"next {response.status} {raw[:200]!r}")
                time.sleep(0.05)
                continue
            task = json.loads(raw)
        t1 = time.perf_counter()
        measuring = time.time() >= measure_from
        n += 1
        query = "" if flow == "browser" else "?next=false"
        conn.request(
            "POST", f"/api/v1/assignments/{task['id']}/submit/{query}", body=submit_body(task, n), headers=headers
        )
        response = conn.getresponse()
        raw = response.read()
        t2 = time.perf_counter()
        task = None
        if response.status != 201:
            errors.append(f"submit {response.status} {raw[:200]!r}")
            continue
        if flow == "browser":
            task = json.loads(raw).get("next")
        if measuring and time.time() <= stop_at:
            next_ms.append((t2 - t1 if flow == "browser" else t1 - t0) * 1000)
            submit_ms.append((t2 - t1) * 1000)
        if think_s:
            time.sleep(think_s * rng.uniform(0.5, 1.5))  # an annotator reading and rating
    conn.close()
    out.append({"next_ms": next_ms, "submit_ms": submit_ms, "errors": errors, "empty": empty})


def client_process(port, slug, tokens, start_at, measure_from, stop_at, think_s, queue, flow="claim"):
    results: list = []
    threads = [
        threading.Thread(
            target=client_loop, args=(port, slug, token, start_at, measure_from, stop_at, think_s, results, flow)
        )
        for token in tokens
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    queue.put(results)


def run_load(
    args: argparse.Namespace, slug: str, tokens: list[str], think_s: float, *, server_pid: int, flow: str = "claim"
) -> dict:
    start_at = time.time() + 2.0
    measure_from = start_at + args.warmup
    # a paced run serves ~10 requests/s: measure it longer, so its p99 is not the 3rd-worst of ~250
    seconds = args.seconds * (args.paced_factor if think_s else 1)
    stop_at = measure_from + seconds
    queue: mp.Queue = mp.Queue()
    chunks = [tokens[i :: args.client_procs] for i in range(args.client_procs)]
    procs = [
        mp.Process(
            target=client_process,
            args=(args.port, slug, chunk, start_at, measure_from, stop_at, think_s, queue, flow),
        )
        for chunk in chunks
        if chunk
    ]
    for proc in procs:
        proc.start()
    sampler = WindowSampler(
        start=measure_from, stop=stop_at, server_pid=server_pid, client_pids={p.pid for p in procs if p.pid}
    )
    sampler.start()
    results = [r for _ in procs for r in queue.get()]
    sampler.join()
    for proc in procs:
        proc.join()
    next_ms = [x for r in results for x in r["next_ms"]]
    submit_ms = [x for r in results for x in r["submit_ms"]]
    errors = [e for r in results for e in r["errors"]]
    return {
        "next": percentiles(next_ms),
        "submit": percentiles(submit_ms),
        "submits": len(submit_ms),
        "seconds": seconds,
        "submits_per_s": round(len(submit_ms) / seconds, 1),
        # CPU ms per submit (a claim + a submit) by role, measured over the same window
        "cpu_ms_per_submit": {
            role: round(1000 * cpu / max(len(submit_ms), 1), 2) for role, cpu in sampler.used.items()
        },
        "errors": len(errors),
        "error_samples": errors[:5],
        "empty_responses": sum(r["empty"] for r in results),
    }
