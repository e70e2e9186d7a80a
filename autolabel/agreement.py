"""How automatic step labels agree with a person's (pure Python: the dashboard and the bench share it).

Compared over the steps a person rated up to their first error (steps after it were not rated,
as in PRM800K phase 2): a true positive is an automatic `-` on the person's first -1 step, a false
positive an automatic `-` on a step they rated +1, a false negative an automatic `+` on their first
-1 step; neutral and unrated steps are left out. First-error agreement: the same first `-` step,
or none in both.
"""

from __future__ import annotations


def first_negative(labels: list[int]) -> int | None:
    return next((i for i, value in enumerate(labels) if value < 0), None)


def compare(auto: list[int], human: list[int | None]) -> dict[str, int]:
    """Counts for one (automatic labels, human main-line ratings) pair."""
    counts = {"tp": 0, "fp": 0, "fn": 0, "first_error_agree": 0}
    human_first = next((i for i, r in enumerate(human) if r == -1), None)
    for index, rating in enumerate(human):
        if index >= len(auto):
            break
        if rating == -1:
            counts["tp" if auto[index] < 0 else "fn"] += 1
            break
        if rating == 1 and auto[index] < 0:
            counts["fp"] += 1
    counts["first_error_agree"] = int(first_negative(auto) == human_first)
    return counts
