"""The model-free answer-stratified queue order (the default strategy), in plain Python so the app's
cold start (annotate.queue_order) and the PRM loop (ml.prm.selection, the simulation) order a queue
the same way: before and after a model, the queue is stratified by the graded answer.
"""

from __future__ import annotations

import math

import numpy as np


def stratified_order(wrong: np.ndarray, costs: np.ndarray, budget: float, share: float, rng) -> list[int]:
    """Random picks from two strata (graded-wrong answers, the rest) until `budget` labels, keeping the
    wrong stratum's part of the labels spent at `share`. A graded-wrong solution always holds an error
    and costs about half the labels of a right one (the pass stops at the first -1); drawing at random
    *within* each stratum keeps both classes representative, so the first-error threshold, chosen on
    per-class accuracies, is not biased by the choice."""
    wrong = np.asarray(wrong, dtype=bool)
    perm = rng.permutation(len(wrong))
    a = [int(j) for j in perm if wrong[j]][::-1]
    b = [int(j) for j in perm if not wrong[j]][::-1]
    out: list[int] = []
    sa = sb = 0.0
    while sa + sb < budget and (a or b):
        take_a = bool(a) and (not b or sa <= share * (sa + sb))
        j = a.pop() if take_a else b.pop()
        out.append(j)
        if take_a:
            sa += float(costs[j])
        else:
            sb += float(costs[j])
    return out


def answer_stratified_priority(answer_correct, lengths, rng: np.random.Generator, *, wrong_share: float = 0.5):
    """Random order within two strata, graded-wrong answers and the rest, interleaved so that the
    wrong stratum takes `wrong_share` of the *expected step labels* of any head of the queue. A pass
    over a wrong answer stops at its first error, about half-way on average, so its expected cost
    is (steps + 1) / 2; a right or ungraded one costs all its steps. Model-free by design: the
    simulation found no model-ranked order that beat random within a stratum."""
    # graded wrong: False (or 0); None and NaN are "not graded"
    wrong = np.asarray([v is not None and v == v and float(v) == 0.0 for v in answer_correct], dtype=bool)
    steps = np.maximum(np.asarray(lengths, dtype=np.float64), 1.0)
    costs = np.where(wrong, (steps + 1) / 2, steps)
    order = stratified_order(wrong, costs, math.inf, wrong_share, rng)
    n = len(order)
    pri = np.empty(n, dtype=np.float64)
    pri[np.asarray(order, dtype=np.int64)] = np.arange(n, 0, -1, dtype=np.float64) / max(n, 1)
    return pri
