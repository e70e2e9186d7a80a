"""A first-error reader with no PRM: the floor a learned PRM has to clear in the simulation.

Every imported solution's final answer is graded, and the grade alone says most of whether a
solution holds an error (a graded-wrong answer holds one in every shipped set). A reader that
knows only the grade and answers one constant per graded-answer stratum ("no error", or "first
error at step k") therefore scores a first-error F1 of its own, without a model and with one
number per stratum. The simulation reports it beside the PRM's learning curves
(`bench/results/simulation.md`) so a reader can see how much of the curves' height the PRM earns,
and so how much room active learning has to earn anything.

The constants are chosen for the F1 of *every* pool solution's truth, as if the whole pool were
labeled: the best such reader, not one a few labels would give.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product

import numpy as np

from ml.prm.metrics import first_error_f1

# candidates per stratum: "no error" and a first error at steps 0..MAX_STEP (clipped to a solution's
# last step); first errors in the shipped sets sit at steps 0-4 most of the time
MAX_STEP = 9


def _predict(strata: np.ndarray, lengths: np.ndarray, rule: dict) -> np.ndarray:
    const = np.fromiter((rule.get(int(s), -1) for s in strata), dtype=np.int64, count=len(strata))
    return np.where(const < 0, -1, np.minimum(const, np.maximum(lengths - 1, 0)))


def fit_floor(strata: Sequence[int], lengths: Sequence[int], first_error: Sequence[int]) -> dict[int, int]:
    """Per stratum code (`answer_input.grade_codes`: 0 wrong, 1 right, -1 ungraded), the constant
    first error (-1 = no error) that, taken jointly, maximises these solutions' first-error F1."""
    strata, lengths, truth = np.asarray(strata), np.asarray(lengths), np.asarray(first_error)
    codes = sorted(int(c) for c in np.unique(strata))
    best, best_f1 = {}, -1.0
    # F1 couples the strata (a harmonic mean over all solutions), so they are chosen jointly; at
    # most three strata x 11 candidates
    for combo in product(range(-1, MAX_STEP + 1), repeat=len(codes)):
        rule = dict(zip(codes, combo, strict=True))
        f1 = first_error_f1(_predict(strata, lengths, rule), truth)["first_error_f1"] or 0.0
        if f1 > best_f1:
            best, best_f1 = rule, f1
    return best


def floor_f1(strata: Sequence[int], lengths: Sequence[int], first_error: Sequence[int], rule: dict[int, int]) -> float:
    """First-error F1 of the constant reader `rule` on these solutions."""
    pred = _predict(np.asarray(strata), np.asarray(lengths), rule)
    return float(first_error_f1(pred, np.asarray(first_error))["first_error_f1"] or 0.0)
