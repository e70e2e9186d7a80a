"""Dense step features from stored sentence embeddings (see `embeddings.EmbeddingStore`).

A step in context is described by three stored text vectors, the step e_s, the problem e_p and the
previous step e_q (zeros for the first step), combined as

    [e_s, e_s * e_p, e_s * e_q, cos(e_s, e_p), cos(e_s, e_q), position features]

The products let a linear head ask "does this step fit this problem / follow that step"; MiniLM
vectors are unit norm, so the cosines are sums of the product blocks, kept explicit for a small
head. Position matters (ProcessBench errors cluster early), so a few buckets of the step index are
added. Nothing here is learned: a step's row is a pure function of stored vectors.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

N_POS = 8  # one-hot step index buckets 0..6, 7+


def position_features(index: np.ndarray) -> np.ndarray:
    idx = np.minimum(np.asarray(index, dtype=np.int64), N_POS - 1)
    out = np.zeros((len(idx), N_POS + 1), dtype=np.float32)
    out[np.arange(len(idx)), idx] = 1.0
    out[:, N_POS] = np.log1p(np.asarray(index, dtype=np.float32)) / 3.0
    return out


def combine(e_step: np.ndarray, e_problem: np.ndarray, e_prev: np.ndarray, index) -> np.ndarray:
    """Feature rows from aligned (n, d) embedding blocks and step indices."""
    cos_p = (e_step * e_problem).sum(1, keepdims=True)
    cos_q = (e_step * e_prev).sum(1, keepdims=True)
    return np.concatenate(
        [e_step, e_step * e_problem, e_step * e_prev, cos_p, cos_q, position_features(np.asarray(index))], axis=1
    ).astype(np.float32)


def feature_dim(embedding_dim: int) -> int:
    return 3 * embedding_dim + 2 + N_POS + 1


def step_rows(store, items: Sequence[tuple[str, str | None, str, int]]) -> np.ndarray:
    """items: (problem, previous step or None, step, index) -> (n, feature_dim) rows from `store`."""
    if not items:
        return np.zeros((0, feature_dim(store.dim)), dtype=np.float32)
    e_s = store.get([it[2] for it in items])
    e_p = store.get([it[0] for it in items])
    has_prev = np.asarray([it[1] is not None for it in items])
    e_q = np.zeros_like(e_s)
    if has_prev.any():
        e_q[has_prev] = store.get([it[1] for it in items if it[1] is not None])
    return combine(e_s, e_p, e_q, [it[3] for it in items])


def texts_for(items: Sequence[tuple[str, str | None, str, int]]) -> list[str]:
    """Every text `step_rows` will look up (to embed the missing ones first)."""
    out = []
    for problem, prev, step, _ in items:
        out.append(problem)
        out.append(step)
        if prev is not None:
            out.append(prev)
    return out
