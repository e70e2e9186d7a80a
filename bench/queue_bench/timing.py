"""Latency percentiles of a list of timings (ms)."""

from __future__ import annotations

import statistics


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
