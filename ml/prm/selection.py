"""Selection strategies: per-solution PRM outputs -> queue priorities (higher = labeled sooner).

Pure functions over numpy arrays, one entry per candidate solution. `answer_correct` is the graded
final answer: True, False, or NaN/None when unknown (no ground truth to grade against).
"""

from __future__ import annotations

import math

import numpy as np

from prm800k.stratified import answer_stratified_priority

STRATEGIES = ("uncertainty", "convincing_wrong", "random", "mix", "answer_stratified")


def _wrong_mask(answer_correct) -> tuple[np.ndarray, np.ndarray]:
    """(is graded wrong, is graded at all) from a list of True/False/None."""
    a = np.asarray([np.nan if v is None else float(v) for v in answer_correct], dtype=np.float64)
    known = ~np.isnan(a)
    return known & (a == 0.0), known


def uncertainty_priority(solution_uncertainty) -> np.ndarray:
    """Most uncertain first. Roll step uncertainty up per solution with `model.roll_up` (max or mean)."""
    return np.asarray(solution_uncertainty, dtype=np.float64).copy()


def convincing_wrong_priority(scores, answer_correct) -> np.ndarray:
    """PRM800K phase 2: solutions the PRM rates highly although their final answer is graded wrong.

    Graded-wrong solutions come first, ordered by score (in [1, 2]); ungraded ones next ([0, 1]);
    graded-correct ones last ([-1, 0]). Scores are solution scores in [0, 1] (e.g. the product).
    """
    s = np.clip(np.asarray(scores, dtype=np.float64), 0.0, 1.0)
    wrong, known = _wrong_mask(answer_correct)
    return np.where(wrong, 1.0 + s, np.where(known, s - 1.0, s))


def random_priority(n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.random(n)


def mix_priority(scores, answer_correct, *, wrong_share: float = 0.8) -> np.ndarray:
    """PRM800K's mix: 80% convincing wrong-answer solutions, 20% the most convincing overall.

    The queue interleaves the two rankings (per 5 slots: 4 from convincing-wrong, 1 from the
    overall score ranking, skipping solutions already placed), so any top-B cut has the mix.
    Returned priorities are descending in that queue order.
    """
    s = np.asarray(scores, dtype=np.float64)
    n = len(s)
    cw_order = list(np.argsort(-convincing_wrong_priority(s, answer_correct), kind="stable"))
    top_order = list(np.argsort(-s, kind="stable"))
    placed = np.zeros(n, dtype=bool)
    queue: list[int] = []
    ci = ti = 0
    while len(queue) < n:
        q = len(queue)
        # slot q is convincing-wrong when the running quota ceil(q * share) steps up (share 0.8: CCCCT)
        take_cw = math.ceil(round((q + 1) * wrong_share, 9)) > math.ceil(round(q * wrong_share, 9))
        src, pos = (cw_order, ci) if take_cw else (top_order, ti)
        while pos < n and placed[src[pos]]:
            pos += 1
        if pos >= n:  # this ranking is exhausted: take from the other one
            src, pos = (top_order, ti) if take_cw else (cw_order, ci)
            while placed[src[pos]]:
                pos += 1
            take_cw = not take_cw
        j = src[pos]
        placed[j] = True
        queue.append(j)
        if take_cw:
            ci = pos + 1
        else:
            ti = pos + 1
    pri = np.empty(n, dtype=np.float64)
    pri[np.asarray(queue, dtype=np.int64)] = np.arange(n, 0, -1, dtype=np.float64) / max(n, 1)
    return pri


def priorities(
    strategy: str,
    *,
    scores=None,
    answer_correct=None,
    solution_uncertainty=None,
    rng: np.random.Generator | None = None,
    n: int | None = None,
    lengths=None,
) -> np.ndarray:
    """Dispatch by strategy name (`lengths`: step counts per solution, for answer_stratified)."""
    if strategy == "uncertainty":
        return uncertainty_priority(solution_uncertainty)
    if strategy == "convincing_wrong":
        return convincing_wrong_priority(scores, answer_correct)
    if strategy == "random":
        size = n if n is not None else len(scores if scores is not None else solution_uncertainty)
        return random_priority(size, rng or np.random.default_rng())
    if strategy == "mix":
        return mix_priority(scores, answer_correct)
    if strategy == "answer_stratified":
        return answer_stratified_priority(answer_correct, lengths, rng or np.random.default_rng())
    raise ValueError(f"unknown strategy {strategy!r}; choose from {STRATEGIES}")


def auto_disagreement(p_negative, auto_labels) -> float:
    """How far the PRM is from a solution's automatic labels: the largest |P(-1) - [label is -]| over
    the steps up to and including the first automatic `-` (the span a labeler would rate); NaN
    when the solution has no automatic labels."""
    if auto_labels is None or len(auto_labels) == 0:
        return math.nan
    p = np.asarray(p_negative, dtype=np.float64)
    labels = np.asarray(auto_labels[: len(p)])
    minus = np.flatnonzero(labels < 0)
    end = int(minus[0]) + 1 if len(minus) else len(labels)
    return float(np.max(np.abs(p[:end] - (labels[:end] < 0))))


def disagreement_first(priority, disagreement, *, threshold: float = 0.5) -> np.ndarray:
    """Put solutions whose automatic labels the PRM contradicts (disagreement >= threshold) ahead of
    every other, most contradicted first; the rest keep the order of `priority` below them."""
    p = np.asarray(priority, dtype=np.float64)
    d = np.asarray(disagreement, dtype=np.float64)
    top = float(np.max(p)) if len(p) else 0.0
    boosted = ~np.isnan(d) & (d >= threshold)
    return np.where(boosted, top + 1.0 + np.nan_to_num(d), p)


def top_k(priority, k: int) -> np.ndarray:
    """Indices of the k highest priorities, highest first (ties: lower index first)."""
    p = np.asarray(priority, dtype=np.float64)
    order = np.argsort(-p, kind="stable")
    return order[: max(0, k)]
