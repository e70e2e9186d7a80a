"""The PRM head: an ensemble of K small MLPs over step features -> P(-1), P(0), P(+1).

All K heads run in one module: the first layer is one EmbeddingBag (sparse features) or Linear
(dense features) with K*hidden outputs, the second a batched matmul. Class order everywhere:
index 0 = rating -1, 1 = rating 0, 2 = rating +1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ml.prm.feature_rows import FeatureCache, Rows

RATINGS = (-1, 0, 1)
NEG, NEU, POS = 0, 1, 2


class _SparseLinear(torch.autograd.Function):
    """x @ weight for a CSR batch x, with the weight's gradient as x^T @ grad (x^T given, CSR)."""

    @staticmethod
    def forward(ctx, weight: torch.Tensor, x: torch.Tensor, x_t: torch.Tensor) -> torch.Tensor:
        ctx.x_t = x_t
        return x @ weight

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        return ctx.x_t @ grad, None, None


class EnsembleHead(nn.Module):
    def __init__(self, input_dim: int, *, hidden: int, k: int, sparse: bool, dropout: float = 0.0, side_dim: int = 0):
        super().__init__()
        self.input_dim, self.hidden, self.k, self.sparse = input_dim, hidden, k, sparse
        self.side_dim = side_dim
        # one first layer for all heads: K*hidden units for the MLPs plus K*3 "wide" linear logits
        # (a linear path learns n-gram indicators from few labels; the MLP adds interactions)
        width = (hidden + 3) * k
        if sparse:
            self.first = nn.EmbeddingBag(input_dim, width, mode="sum")
            nn.init.normal_(self.first.weight, std=0.3)  # rows are ~unit norm per block, 3-4 blocks
            with torch.no_grad():
                self.first.weight[:, hidden * k :].mul_(0.1)
        else:
            self.first = nn.Linear(input_dim, width, bias=False)
        # dense side columns (the graded answer, ml.prm.answer_input) into the same first layer:
        # as if they were feature columns, without copying every sparse row to append them
        # zeros, drawn from no random stream: an ungraded start (the labels teach what a grade
        # means), and a head on ungraded data trains exactly as one without side columns
        self.side_weight = nn.Parameter(torch.zeros(side_dim, width)) if side_dim else None
        self.bias1 = nn.Parameter(torch.zeros(hidden * k))
        self.drop = nn.Dropout(dropout)
        self.w2 = nn.Parameter(torch.randn(k, hidden, 3) / hidden**0.5)
        self.b2 = nn.Parameter(torch.zeros(k, 1, 3))

    def forward(
        self, *, indices=None, offsets=None, weights=None, dense=None, csr=None, csr_t=None, side=None
    ) -> torch.Tensor:
        """Logits of shape (K, batch, 3). Sparse rows come as EmbeddingBag inputs (scoring) or as a
        CSR batch with its transpose (training: see `Rows.training_inputs`). `side`: the rows'
        side columns; missing (rows without a grade) counts as all zeros."""
        if csr is not None:
            h = _SparseLinear.apply(self.first.weight, csr, csr_t)
        elif self.sparse:
            h = self.first(indices, offsets, per_sample_weights=weights)
        else:
            h = self.first(dense)
        if self.side_weight is not None and side is not None:
            h = h + side @ self.side_weight
        n = h.shape[0]
        hk = self.hidden * self.k
        wide = h[:, hk:].reshape(n, self.k, 3).transpose(0, 1)  # (K, n, 3)
        h = _dropout(torch.relu(h[:, :hk] + self.bias1), self.drop.p, self.training)
        h = h.reshape(n, self.k, self.hidden).transpose(0, 1)  # (K, n, hidden)
        return torch.baddbmm(self.b2, h, self.w2) + wide


def _dropout(h: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """nn.Dropout's function with a mask from torch.rand: its CPU bernoulli path was 1.4 ms of a
    2,048 x 128 batch, this 0.8 ms."""
    if not training or p <= 0:
        return h
    return h * (torch.rand_like(h) >= p) * (1.0 / (1.0 - p))


@dataclass
class StepScores:
    """Per-step outputs, numpy arrays of length n (probs: n x 3 in class order -1, 0, +1)."""

    probs: np.ndarray
    entropy: np.ndarray  # entropy of the mean distribution (total uncertainty), nats
    margin: np.ndarray  # top-1 minus top-2 probability (small = uncertain)
    disagreement: np.ndarray  # mean KL(head || mean): the ensemble's epistemic part (BALD)
    var_negative: np.ndarray  # variance of P(-1) across heads

    @property
    def p_negative(self) -> np.ndarray:
        return self.probs[:, NEG]

    def uncertainty(self, kind: str = "entropy") -> np.ndarray:
        if kind == "entropy":
            return self.entropy
        if kind == "margin":
            return 1.0 - self.margin
        if kind == "disagreement":
            return self.disagreement
        raise ValueError(f"unknown uncertainty {kind!r}")


def scores_from_head_probs(p: torch.Tensor) -> StepScores:
    """p: (K, n, 3) per-head probabilities."""
    mean = p.mean(0)
    eps = 1e-12
    ent = -(mean * (mean + eps).log()).sum(-1)
    top2 = mean.topk(2, dim=-1).values
    kl = (p * ((p + eps).log() - (mean + eps).log())).sum(-1).mean(0)
    return StepScores(
        probs=mean.numpy(),
        entropy=ent.numpy(),
        margin=(top2[:, 0] - top2[:, 1]).numpy(),
        disagreement=kl.clamp(min=0).numpy(),
        var_negative=p[:, :, NEG].var(0, unbiased=False).numpy(),
    )


def solution_scores(p_negative: np.ndarray, lengths) -> tuple[np.ndarray, np.ndarray]:
    """Per solution: product of P(not -1) over its steps (PRM800K) and the minimum.

    `p_negative` is the concatenation of the solutions' steps; `lengths` their step counts. A
    solution with no steps scores 1.0 on both.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    ok = np.clip(1.0 - np.asarray(p_negative, dtype=np.float64), 1e-12, 1.0)
    sol = np.repeat(np.arange(len(lengths)), lengths)
    prod = np.exp(np.bincount(sol, weights=np.log(ok), minlength=len(lengths)))
    mins = np.ones(len(lengths))
    if len(ok):
        np.minimum.at(mins, sol, ok)
    return prod, mins


def roll_up(values: np.ndarray, lengths, how: str = "max") -> np.ndarray:
    """Per-solution max or mean of per-step values (solutions concatenated, `lengths` step counts)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    sol = np.repeat(np.arange(len(lengths)), lengths)
    if how == "mean":
        return np.bincount(sol, weights=values, minlength=len(lengths)) / np.maximum(lengths, 1)
    if how == "max":
        out = np.zeros(len(lengths))
        if len(values):
            np.maximum.at(out, sol, values)
        return out
    raise ValueError(f"unknown roll-up {how!r}")


class PRM:
    """A trained PRM: featurizer + ensemble head + temperature. Scores steps and solutions."""

    def __init__(
        self,
        *,
        featurizer,
        head: EnsembleHead,
        temperature: float = 1.0,
        threshold: float = 0.5,
        thresholds_by_grade: dict[str, float | str] | None = None,
        config=None,
    ):
        self.featurizer = featurizer
        self.head = head.eval()
        self.temperature = float(temperature)
        self.threshold = float(threshold)  # P(-1) above which a step is called the first error
        # the same per graded-answer stratum ("wrong", "right", "ungraded"), where the run chose them;
        # `metrics.MOST_PROBABLE` for a stratum read at its most probable first error (graded wrong)
        self.thresholds_by_grade = dict(thresholds_by_grade or {})
        self.config = config
        self.cache = FeatureCache(featurizer)

    @torch.no_grad()
    def head_probs(self, rows: Rows, batch_size: int = 8192) -> torch.Tensor:
        """(K, n, 3) per-head probabilities for precomputed feature rows."""
        self.head.eval()
        out = []
        for i in range(0, len(rows), batch_size):
            idx = np.arange(i, min(i + batch_size, len(rows)))
            logits = self.head(**rows.take(idx).torch_inputs())
            out.append(torch.softmax(logits / self.temperature, dim=-1))
        if not out:
            return torch.zeros((self.head.k, 0, 3))
        return torch.cat(out, dim=1)

    def score_rows(self, rows: Rows, batch_size: int = 8192) -> StepScores:
        return scores_from_head_probs(self.head_probs(rows, batch_size))

    def score_steps(self, items, keys=None) -> StepScores:
        """items: StepExamples or (problem, previous steps, step) tuples; features are cached by key.
        StepExamples bring their graded answer (`answer_correct`) to a head that reads it; tuples
        are scored as ungraded."""
        rows = self.cache.get(items, keys)
        if self.head.side_dim and items and not isinstance(items[0], tuple):
            from ml.prm.answer_input import answer_block_for_examples

            rows = rows.with_side(answer_block_for_examples(items))
        return self.score_rows(rows)

    def score_solution(self, problem: str, steps: list[str]) -> dict:
        """Per-step probabilities and both solution scores for one candidate solution."""
        items = [(problem, tuple(steps[:i]), s) for i, s in enumerate(steps)]
        sc = self.score_steps(items)
        prod, mins = solution_scores(sc.p_negative, [len(steps)])
        return {
            "steps": [
                {
                    "p_negative": float(p[NEG]),
                    "p_neutral": float(p[NEU]),
                    "p_positive": float(p[POS]),
                    "uncertainty": float(u),
                }
                for p, u in zip(sc.probs, sc.entropy, strict=True)
            ],
            "score_product": float(prod[0]),
            "score_min": float(mins[0]),
        }
