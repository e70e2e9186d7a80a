"""Train/test split by problem: MATH-500 problems are always test (as in PRM800K)."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

MATH500_HASHES = Path(__file__).resolve().parent / "data" / "math500_problem_sha256.txt"


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@lru_cache(maxsize=1)
def math500_hashes() -> frozenset[str]:
    lines = MATH500_HASHES.read_text().splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def math500_flag(text_hash: str) -> bool:
    return text_hash in math500_hashes()
