"""Acquisition for step labels: which solutions to label next, from an ensemble's per-step P(-1).

Pure numpy. Candidates are solutions; their steps are concatenated, `lengths` gives step counts,
`head_p` is (K, total steps) P(step is -1) per ensemble member.

What a label pass buys: annotators rate steps in order and stop at the first -1, so labeling a
solution reveals exactly where its first error is (or that there is none) and costs first_error + 1
labels (all of them when there is none). Per member k the model implies a distribution over the
first error, q_k(i) = p_k,i * prod_{j<i} (1 - p_k,j), q_k(none) = prod_j (1 - p_k,j). The graded final
answer, known from import, is evidence: a wrong answer rules out "none"; a right one makes an error
less likely (likelihood ratio `correct_given_error`).

- `first_error_bald`: mutual information between the first error and the model (the ensemble's
  disagreement about where it is), not total entropy: disagreement is what labels can remove,
  while noise the model cannot learn keeps entropy high forever.
- `expected_cost`: expected labels the pass will take under the (answer-conditioned) mean q.
- `value_per_label`: BALD / expected cost, the default ranking.
- `diverse_top`: greedy batch picks that trade value against closeness to what is already chosen
  (k-means++-style distance weighting over solution embeddings), so a batch is not 40 near-copies.
"""

from __future__ import annotations

import numpy as np

EPS = 1e-9


def _segments(lengths) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.asarray(lengths, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if len(lengths) else np.zeros(0, np.int64)
    return lengths, starts


def first_error_distribution(head_p: np.ndarray, lengths) -> tuple[np.ndarray, np.ndarray]:
    """Per member: q over steps (K, total) and q(none) (K, n_solutions)."""
    p = np.clip(np.atleast_2d(np.asarray(head_p, dtype=np.float64)), EPS, 1 - EPS)
    lengths, starts = _segments(lengths)
    log_ok = np.log1p(-p)
    csum = np.cumsum(log_ok, axis=1)
    # exclusive prefix sum within each solution
    sol = np.repeat(np.arange(len(lengths)), lengths)
    base = np.zeros((p.shape[0], len(lengths)))
    nz = lengths > 0
    base[:, nz] = np.where(starts[nz] > 0, csum[:, np.maximum(starts[nz] - 1, 0)], 0.0)
    incl = csum - base[:, sol]
    excl = incl - log_ok
    q = p * np.exp(excl)
    q_none = np.ones((p.shape[0], len(lengths)))
    ends = starts + lengths - 1
    q_none[:, nz] = np.exp(incl[:, ends[nz]])
    return q, q_none


def condition_on_answer(q, q_none, answer_correct, lengths, *, correct_given_error: float = 0.2):
    """Posterior first-error distributions given graded answers (True / False / None per solution)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    a = np.asarray([np.nan if v is None else float(v) for v in answer_correct])
    like_err = np.where(np.isnan(a), 1.0, np.where(a == 1.0, correct_given_error, 1.0))
    like_none = np.where(np.isnan(a), 1.0, np.where(a == 1.0, 1.0, 0.0))
    q = q * np.repeat(like_err, lengths)[None, :]
    q_none = q_none * like_none[None, :]
    sol = np.repeat(np.arange(len(lengths)), lengths)
    z = np.zeros_like(q_none)
    for k in range(q.shape[0]):
        z[k] = np.bincount(sol, weights=q[k], minlength=len(lengths))
    z += q_none
    z = np.maximum(z, EPS)
    return q / z[:, sol], q_none / z


def _entropy(q, q_none, lengths) -> np.ndarray:
    """(K, n) entropy of each first-error distribution (nats)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    sol = np.repeat(np.arange(len(lengths)), lengths)
    h = np.zeros_like(q_none)
    t = -q * np.log(np.maximum(q, EPS))
    for k in range(q.shape[0]):
        h[k] = np.bincount(sol, weights=t[k], minlength=len(lengths))
    return h - q_none * np.log(np.maximum(q_none, EPS))


def first_error_bald(q, q_none, lengths) -> tuple[np.ndarray, np.ndarray]:
    """(total entropy of the mean distribution, mutual information = total - mean member entropy)."""
    qm, qnm = q.mean(0, keepdims=True), q_none.mean(0, keepdims=True)
    total = _entropy(qm, qnm, lengths)[0]
    mi = total - _entropy(q, q_none, lengths).mean(0)
    return total, np.maximum(mi, 0.0)


def expected_cost(q, q_none, lengths) -> np.ndarray:
    """Expected labels for one pass under the mean distribution: first error + 1, or every step."""
    lengths, starts = _segments(lengths)
    qm, qnm = q.mean(0), q_none.mean(0)
    sol = np.repeat(np.arange(len(lengths)), lengths)
    pos = np.arange(len(sol)) - starts[sol] + 1
    return np.bincount(sol, weights=qm * pos, minlength=len(lengths)) + qnm * lengths


def step_entropy(head_p: np.ndarray) -> np.ndarray:
    """Binary entropy of the mean P(-1) per step (plain uncertainty sampling)."""
    p = np.clip(np.asarray(head_p, dtype=np.float64).mean(0), EPS, 1 - EPS)
    return -(p * np.log(p) + (1 - p) * np.log(1 - p))


def roll_max(values: np.ndarray, lengths) -> np.ndarray:
    lengths = np.asarray(lengths, dtype=np.int64)
    sol = np.repeat(np.arange(len(lengths)), lengths)
    out = np.zeros(len(lengths))
    if len(values):
        np.maximum.at(out, sol, values)
    return out


def value_per_label(head_p, lengths, answer_correct, *, correct_given_error: float = 0.2) -> dict[str, np.ndarray]:
    """Per solution: `bald`, `entropy` (of the first error), `cost` (expected labels) and `value` = bald / cost."""
    q, qn = first_error_distribution(head_p, lengths)
    if answer_correct is not None:
        q, qn = condition_on_answer(q, qn, answer_correct, lengths, correct_given_error=correct_given_error)
    total, mi = first_error_bald(q, qn, lengths)
    cost = np.maximum(expected_cost(q, qn, lengths), 1.0)
    return {"bald": mi, "entropy": total, "cost": cost, "value": mi / cost}


def greedy_diverse_order(value: np.ndarray, embeddings: np.ndarray) -> np.ndarray:
    """Order candidates greedily: each next pick maximises value * min(1, d / d0), d = distance to
    the nearest earlier pick, d0 = half the median distance between candidates (k-means++'s
    distance weighting made deterministic): a near-copy of a pick waits its turn. (The median
    nearest-neighbour distance would not do: where near-copies abound, it is itself tiny.)"""
    v = np.asarray(value, dtype=np.float64)
    m = len(v)
    if m <= 1:
        return np.arange(m)
    E = np.asarray(embeddings, dtype=np.float64)
    sq = (E**2).sum(1)
    D = np.sqrt(np.maximum(sq[:, None] + sq[None, :] - 2 * E @ E.T, 0.0))
    iu = np.triu_indices(m, 1)
    d0 = 0.5 * float(np.median(D[iu]))
    d0 = d0 if np.isfinite(d0) and d0 > 0 else 1.0
    nearest = np.full(m, np.inf)
    alive = np.ones(m, dtype=bool)
    order = np.empty(m, dtype=np.int64)
    for t in range(m):
        score = np.where(alive, v * np.minimum(1.0, nearest / d0), -np.inf)
        j = int(np.argmax(score))
        order[t] = j
        alive[j] = False
        nearest = np.minimum(nearest, D[j])
    return order


def diverse_priority(value: np.ndarray, embeddings: np.ndarray, top: int = 2000) -> np.ndarray:
    """Queue priorities: the `top` most valuable solutions in greedy diverse order (above 1), the
    rest by value (in [0, 1))."""
    value = np.asarray(value, dtype=np.float64)
    n = len(value)
    pri = np.zeros(n)
    if n == 0:
        return pri
    by_value = np.argsort(-value, kind="stable")
    head = by_value[: min(top, n)]
    order = head[greedy_diverse_order(value[head], np.asarray(embeddings)[head])]
    pri[order] = 1.0 + np.arange(len(order), 0, -1) / len(order)
    rest = by_value[len(head) :]
    pri[rest] = np.arange(len(rest), 0, -1) / (len(rest) + 1)
    return pri


def _bucket(cols: np.ndarray, dim: int) -> np.ndarray:
    """Feature column -> sketch bucket (multiplicative hashing) and a +-1 sign from another bit."""
    h = (np.asarray(cols, dtype=np.uint64) * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)
    return (h % np.uint64(dim)).astype(np.int64), np.where((h >> np.uint64(16)) & np.uint64(1), 1.0, -1.0)


def solution_sketch(indptr, indices, values, lengths, dim: int = 64) -> np.ndarray:
    """Per solution, a feature-hashing sketch (signed buckets) of the mean of its steps' sparse
    feature rows (CSR arrays): one bincount over the nonzeros, O(nnz), so a million steps cost
    seconds; distances between sketches stand in for distances between the rows."""
    indptr = np.asarray(indptr, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    step_sol = np.repeat(np.arange(len(lengths)), lengths)
    nnz_sol = np.repeat(step_sol, np.diff(indptr))
    bucket, sign = _bucket(indices, dim)
    flat = np.bincount(
        nnz_sol * dim + bucket, weights=sign * np.asarray(values, dtype=np.float64), minlength=len(lengths) * dim
    )
    return (flat.reshape(len(lengths), dim) / np.maximum(lengths, 1)[:, None]).astype(np.float32)


def dense_sketch(dense: np.ndarray, lengths, dim: int = 64) -> np.ndarray:
    """`solution_sketch` for dense feature rows (the same buckets and signs per column)."""
    X = np.asarray(dense, dtype=np.float64)
    bucket, sign = _bucket(np.arange(X.shape[1]), dim)
    P = np.zeros((X.shape[1], dim))
    P[np.arange(X.shape[1]), bucket] = sign
    lengths = np.asarray(lengths, dtype=np.int64)
    sol = np.repeat(np.arange(len(lengths)), lengths)
    out = np.zeros((len(lengths), dim))
    np.add.at(out, sol, X @ P)
    return (out / np.maximum(lengths, 1)[:, None]).astype(np.float32)


def diverse_top(
    value: np.ndarray,
    embeddings: np.ndarray,
    costs: np.ndarray,
    budget: float,
    *,
    spend: np.ndarray | None = None,
    pool_factor: int = 5,
) -> list[int]:
    """Picks in `greedy_diverse_order` over the most valuable candidates (enough to fill the budget
    `pool_factor` times over) until the summed cost reaches `budget`. `spend`: what each pick costs
    against the budget (default `costs`; the simulation passes the labels the pick really took, as
    a live queue counts labels as they come in)."""
    value = np.asarray(value, dtype=np.float64)
    spend = np.asarray(costs if spend is None else spend, dtype=np.float64)
    n = len(value)
    if n == 0:
        return []
    order = np.argsort(-value, kind="stable")
    m = min(n, max(8, int(pool_factor * budget / max(float(np.mean(costs)), 1.0)) + 1))
    cand = order[:m]
    seq = list(cand[greedy_diverse_order(value[cand], np.asarray(embeddings)[cand])]) + list(order[m:])
    picked: list[int] = []
    spent = 0.0
    for i in seq:
        if spent >= budget:
            break
        picked.append(int(i))
        spent += float(spend[i])
    return picked
