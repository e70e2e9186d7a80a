"""The benchmark's results: bench/results/stats.json and a table in bench/results/stats.md."""

from __future__ import annotations

import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results"


def write_report(result: dict) -> str:
    """Write stats.json and stats.md; returns the markdown."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "stats.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        "# /stats/ on a big project",
        "",
        "`.venv/bin/python bench/bench_stats.py` (bench/bench_stats.py): PostgreSQL "
        f"{result['postgres']}, {result['cpus']} CPUs, Django test client in process with a persistent "
        f"connection, {result['calls']} calls after 2 warm-ups, {result['new_labels_per_call']} new labels "
        "committed before each call. Machine load average (1/5/15 min) at the end: "
        f"{result['load_average_1_5_15']} (the machine is shared; other engineers' tests run at the same time).",
        "",
        "| data | value |",
        "|---|---|",
        *(f"| {k} | {v:,} |" for k, v in result["data"].items()),
        "",
        "| GET /api/v1/projects/bench/stats/ (steady state: label snapshot cached, new labels scanned) | ms |",
        "|---|---|",
        f"| p50 | {result['p50_ms']} |",
        f"| p95 | {result['p95_ms']} |",
        f"| max | {result['max_ms']} |",
        f"| target (p95) | < {result['target_ms']} ({'met' if result['meets_target'] else 'NOT met'}) |",
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
        *(f"| {q['ms']} | `{q['sql'][:110].replace('|', '/')}…` |" for q in result["slowest_queries"]),
        "",
        f"Data generation (SQL generate_series): {result['fill_seconds']}",
        "",
    ]
    (RESULTS / "stats.md").write_text("\n".join(lines))
    return "\n".join(lines)
