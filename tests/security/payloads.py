"""Request bodies the fault tests send: a submit of `n_steps` positive steps under one idempotency key."""

from __future__ import annotations


def submit_payload(key: str, n_steps: int = 3) -> dict:
    return {
        "idempotency_key": key,
        "finish_reason": "solution",
        "total_time_ms": 1234,
        "steps": [{"index": i, "rating": 1, "flagged": False} for i in range(n_steps)],
    }
