"""A small ensemble head over dense step features: P(step is -1), the first error's ingredient.

K linear (or one-hidden-layer) logistic heads trained together, full batch, each on a Poisson(1)
bootstrap of *solutions* (a solution's steps share one weight, so a head either saw a solution or
not). That gives (a) disagreement between heads for BALD-style acquisition and (b) out-of-bag
predictions for every labeled step, on which the first-error threshold is chosen (in-sample
probabilities of a head that memorised its labels would pick a threshold that is too high).

Neutral (0) counts as "not -1": first-error metrics only ask where the first -1 is, and a 3-way
entropy would rank honest neutral ambiguity as model uncertainty.

Optional weak supervision (multiple-instance): solutions with a graded final answer but no step
labels add a loss on P(any step is -1) = 1 - prod(1 - p_i): a wrong answer means some step is wrong;
a right one means most likely none is (soft target `weak_correct_error`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from ml.prm.metrics import choose_threshold


@dataclass
class HeadConfig:
    k: int = 8  # ensemble members
    hidden: int = 0  # 0 = linear heads
    l2: float = 3.0  # on standardized features (few hundred labels, thousands of features: strong prior)
    steps: int = 150  # full-batch Adam steps
    lr: float = 0.05
    weak_weight: float = 0.0  # weight of one weakly supervised solution relative to one labeled step
    weak_correct_error: float = 0.15  # P(some step wrong | final answer graded right), the soft MIL target
    seed: int = 0


@dataclass
class WeakSet:
    """Unlabeled solutions with graded answers: feature rows, solution index per row, wrong answer per solution."""

    X: np.ndarray
    solution: np.ndarray  # (n_rows,) solution index 0..m-1
    wrong: np.ndarray  # (m,) bool


class StepHead:
    def __init__(self, config: HeadConfig | None = None):
        self.config = config or HeadConfig()
        self.mean: np.ndarray | None = None
        self.scale: np.ndarray | None = None
        self.W: torch.Tensor | None = None
        self.threshold = 0.5
        self.oob: np.ndarray | None = None

    # -- model ----------------------------------------------------------------------------------
    def _init(self, d: int, gen: torch.Generator) -> list[torch.Tensor]:
        c = self.config
        if c.hidden:
            w1 = (torch.randn(c.k, d, c.hidden, generator=gen) / d**0.5).requires_grad_()
            b1 = torch.zeros(c.k, 1, c.hidden, requires_grad=True)
            w2 = (torch.randn(c.k, c.hidden, generator=gen) / c.hidden**0.5).requires_grad_()
            b2 = torch.zeros(c.k, 1, requires_grad=True)
            return [w1, b1, w2, b2]
        w = torch.zeros(c.k, d, requires_grad=True)
        b = torch.zeros(c.k, 1, requires_grad=True)
        return [w, b]

    def _logits(self, params: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        """(K, n) logits."""
        if len(params) == 4:
            w1, b1, w2, b2 = params
            h = torch.relu(torch.einsum("nd,kdh->knh", x, w1) + b1)
            return torch.einsum("knh,kh->kn", h, w2) + b2
        w, b = params
        return w @ x.T + b

    def _std(self, X: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(((X - self.mean) / self.scale).astype(np.float32))

    # -- training -------------------------------------------------------------------------------
    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        groups: np.ndarray,
        *,
        paths: Sequence[tuple[np.ndarray, int]] = (),
        weak: WeakSet | None = None,
        init: StepHead | None = None,
    ) -> StepHead:
        """X (n, d) rows, y (n,) 1 for a -1 step, groups (n,) solution ids for the bootstrap.

        `paths`: (row indices of a labeled solution's steps in order, its first error or -1) to
        choose the threshold on out-of-bag predictions. `init`: start from another head's weights
        (e.g. the weakly pretrained one) and keep standardization.
        """
        c = self.config
        gen = torch.Generator().manual_seed(c.seed)
        if init is not None and init.mean is not None:
            self.mean, self.scale = init.mean.copy(), init.scale.copy()
            # a column the prior's rows never varied (the graded answer, absent from an ungraded set)
            # carries no prior; dividing by its ~0 spread put a graded answer a million deviations out
            unseen = init.scale < 1e-3
            if unseen.any() and len(X):
                self.mean[unseen] = X[:, unseen].mean(0)
                self.scale[unseen] = X[:, unseen].std(0) + 1e-6
        else:
            ref = X if weak is None or not len(X) else np.concatenate([X, weak.X[:: max(1, len(weak.X) // 5000)]])
            if not len(ref):
                ref = weak.X
            self.mean = ref.mean(0)
            self.scale = ref.std(0) + 1e-6
        params = [p.detach().clone().requires_grad_() for p in init.params] if init is not None else None
        prior = [p.detach().clone() for p in init.params] if init is not None else None
        x = self._std(X) if len(X) else None
        d = (x if x is not None else self._std(weak.X[:1])).shape[1]
        params = params or self._init(d, gen)
        yt = torch.from_numpy(np.asarray(y, dtype=np.float32))
        # solution-level Poisson bootstrap
        _, g_idx = np.unique(np.asarray(groups), return_inverse=True) if len(X) else (None, np.zeros(0, np.int64))
        n_groups = int(g_idx.max()) + 1 if len(g_idx) else 0
        gw = torch.poisson(torch.ones(c.k, max(n_groups, 1)), generator=gen) if c.k > 1 else torch.ones(1, n_groups)
        w = gw[:, torch.from_numpy(g_idx)] if len(X) else None
        if weak is not None and c.weak_weight > 0:
            xw = self._std(weak.X)
            sol = torch.from_numpy(np.asarray(weak.solution, dtype=np.int64))
            m = len(weak.wrong)
            tw = torch.from_numpy(np.where(weak.wrong, 1.0, c.weak_correct_error).astype(np.float32))
        opt = torch.optim.Adam(params, lr=c.lr)
        n = max(len(X), 1)
        for _ in range(c.steps):
            loss = 0.0
            if x is not None:
                z = self._logits(params, x)
                ce = F.binary_cross_entropy_with_logits(z, yt.expand_as(z), reduction="none")
                loss = (ce * w).sum() / n
            if weak is not None and c.weak_weight > 0:
                zw = self._logits(params, xw)  # (K, rows)
                log_ok = torch.zeros(zw.shape[0], m).index_add_(1, sol, -F.softplus(zw))  # log P(no -1 step)
                p_err = (1 - log_ok.exp()).clamp(1e-6, 1 - 1e-6)
                mil = -(tw * p_err.log() + (1 - tw) * (1 - p_err).log())
                loss = loss + c.weak_weight * mil.sum() / n
            # L2 toward the initial weights when warm-started (the weak model is the prior), else toward 0
            reg = sum(((p - (prior[i] if prior else 0)) ** 2).sum() for i, p in enumerate(params) if i % 2 == 0)
            reg = reg * c.l2 / 2
            opt.zero_grad()
            (loss + reg).backward()
            opt.step()
        self.params = [p.detach() for p in params]
        self.boot_weights = gw.numpy()  # (K, groups in np.unique order): 0 = out of bag for that member
        if x is not None and paths:
            with torch.no_grad():
                ph = torch.sigmoid(self._logits(self.params, x)).numpy()
            out = (w == 0).numpy()
            cnt = out.sum(0)
            oob = np.where(cnt > 0, (ph * out).sum(0) / np.maximum(cnt, 1), ph.mean(0))
            self.oob = oob
            self.threshold = choose_threshold([oob[r] for r, _ in paths], np.asarray([fe for _, fe in paths]))
        return self

    # -- scoring --------------------------------------------------------------------------------
    @torch.no_grad()
    def head_probs(self, X: np.ndarray, batch: int = 65536) -> np.ndarray:
        """(K, n) P(-1) per ensemble member."""
        out = [
            torch.sigmoid(self._logits(self.params, self._std(X[i : i + batch]))).numpy()
            for i in range(0, len(X), batch)
        ]
        return np.concatenate(out, axis=1) if out else np.zeros((self.config.k, 0), np.float32)

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.head_probs(X).mean(0)
