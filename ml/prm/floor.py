"""A first-error reader with no PRM: the floor a learned PRM has to clear.

Every imported solution's final answer is graded, and the grade alone says most of whether a
solution holds an error (a graded-wrong answer holds one in every shipped set). A reader that
knows only the grade and answers one constant per graded-answer stratum ("no error", or "first
error at step k") therefore scores a first-error F1 of its own, without a model and with one
number per stratum. The simulation reports it beside the PRM's learning curves
(`bench/results/simulation.md`) so a reader can see how much of the curves' height the PRM earns,
and so how much room active learning has to earn anything.

In the simulation the constants are chosen for the F1 of *every* pool solution's truth, as if the
whole pool were labeled: the best such reader, not one a few labels would give. In the app
(`ml.prm.train`) they are chosen on a run's training solutions and scored on its held-out ones
(`grade_only_f1`), so the dashboard can say how much the PRM reads beyond the grade.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import product

import numpy as np

from ml.prm.metrics import first_error_f1, harmonic_f1

# candidates per stratum: "no error" and a first error at steps 0..MAX_STEP (clipped to a solution's
# last step); first errors in the shipped sets sit at steps 0-4 most of the time
MAX_STEP = 9


def _plain(strata: Sequence[Hashable]) -> list:
    """Stratum keys as Python values (numpy scalars from a grade-code array compare and hash alike,
    but a rule keyed by them would not serialise)."""
    return [s.item() if isinstance(s, np.generic) else s for s in strata]


def _read(constant: int, lengths: np.ndarray) -> np.ndarray:
    """One constant first error (-1 = no error) for solutions of these lengths, clipped to each
    one's last step."""
    if constant < 0:
        return np.full(len(lengths), -1, dtype=np.int64)
    return np.minimum(constant, np.maximum(np.asarray(lengths) - 1, 0))


def _in_stratum(strata: list, code: Hashable) -> np.ndarray:
    return np.fromiter((x == code for x in strata), dtype=bool, count=len(strata))


def _predict(strata: list, lengths: np.ndarray, rule: dict) -> np.ndarray:
    pred = np.full(len(strata), -1, dtype=np.int64)
    for code, constant in rule.items():
        mine = _in_stratum(strata, code)
        pred[mine] = _read(constant, lengths[mine])
    return pred


def fit_floor(strata: Sequence[Hashable], lengths: Sequence[int], first_error: Sequence[int]) -> dict:
    """Per stratum (a grade code of `answer_input.grade_codes`, or a `GRADE_STRATA` name), the
    constant first error (-1 = no error) that, taken jointly, maximises these solutions' F1.
    `lengths`: each solution's whole step count (a path cut at its labeled first error would let a
    late constant hit every error)."""
    strata = _plain(strata)
    lengths, truth = np.asarray(lengths), np.asarray(first_error)
    codes = sorted(set(strata), key=str)
    candidates = range(-1, MAX_STEP + 1)
    err, n_err, n_ok = truth >= 0, int((truth >= 0).sum()), int((truth < 0).sum())
    # per stratum and candidate: erroneous solutions read exactly, error-free ones read "no error"
    hits = {}
    for code in codes:
        mine = _in_stratum(strata, code)
        for c in candidates:
            pred = _read(c, lengths[mine])
            hits[code, c] = (int((pred == truth[mine])[err[mine]].sum()), int((pred == -1)[~err[mine]].sum()))
    best, best_f1 = {}, -1.0
    # F1 couples the strata (a harmonic mean over all solutions), so they are chosen jointly; at
    # most three strata x 11 candidates, each combination summed from the counts above
    for combo in product(candidates, repeat=len(codes)):
        e = sum(hits[code, c][0] for code, c in zip(codes, combo, strict=True))
        o = sum(hits[code, c][1] for code, c in zip(codes, combo, strict=True))
        f1 = harmonic_f1(e / n_err if n_err else None, o / n_ok if n_ok else None) or 0.0
        if f1 > best_f1:
            best, best_f1 = dict(zip(codes, combo, strict=True)), f1
    return best


def floor_f1(strata: Sequence[Hashable], lengths: Sequence[int], first_error: Sequence[int], rule: dict) -> float:
    """First-error F1 of the constant reader `rule` on these solutions."""
    pred = _predict(_plain(strata), np.asarray(lengths), rule)
    return float(first_error_f1(pred, np.asarray(first_error))["first_error_f1"] or 0.0)
