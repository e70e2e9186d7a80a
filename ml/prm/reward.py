"""A Bradley-Terry reward model (an outcome reward model) from pairwise preferences, pure torch.

P(a preferred over b) = sigmoid(r(a) - r(b)), r(x) = w . phi(x) with phi the PRM's featurizer
(ml.prm.featurizers) applied to the whole solution as one "step" (problem as context). Ties are
targets of 0.5. Trained by a plain loop (Adam, full batches of pairs, early stopping on the
held-out loss); pairs are split into train and held-out by problem, so a problem's pairs never
sit on both sides. Held-out pairwise accuracy is the share of decided held-out pairs whose
preferred side gets the higher reward (ties left out of it).
"""

from __future__ import annotations

import io
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from torch import nn

from ml.prm.config import ConfigError
from ml.prm.feature_rows import Rows, featurize
from ml.prm.featurizers import HashedNgramFeaturizer
from ml.prm.metrics import wilson_interval


@dataclass
class RewardConfig:
    # Hash buckets for the solution's text and for the problem (ml.prm.featurizers.HashedNgramFeaturizer).
    step_hash_dim: int = 2**15
    context_hash_dim: int = 2**12
    # Word n-grams only by default: over a whole solution, char n-grams add thousands of noisy features.
    char_ngrams: tuple[int, ...] = ()
    lr: float = 2.0  # full-batch SGD with momentum on the mean pair loss
    weight_decay: float = 1e-4  # L2: keeps rare n-grams from memorising single pairs
    max_epochs: int = 100
    patience: int = 20  # epochs without held-out loss improvement before stopping
    heldout_fraction: float = 0.2  # share of *problems* held out
    seed: int = 0
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("step_hash_dim", "context_hash_dim"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 2**6 <= value <= 2**22:
                raise ConfigError(name, f"must be an integer from 64 to {2**22}, got {value!r}")
        for name, low, high in (("lr", 1e-6, 100.0), ("weight_decay", 0.0, 1.0), ("heldout_fraction", 0.0, 0.9)):
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool) or not low <= value <= high:
                raise ConfigError(name, f"must be a number from {low} to {high}, got {value!r}")
        if not isinstance(self.char_ngrams, tuple | list) or not all(n in (2, 3, 4, 5) for n in self.char_ngrams):
            raise ConfigError("char_ngrams", f"must be a list of orders from 2 to 5, got {self.char_ngrams!r}")
        self.char_ngrams = tuple(self.char_ngrams)
        for name, low, high in (("max_epochs", 1, 10_000), ("patience", 1, 10_000), ("seed", 0, 2**31)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise ConfigError(name, f"must be an integer from {low} to {high}, got {value!r}")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class PairExample:
    problem: str
    steps_a: Sequence[str]
    steps_b: Sequence[str]
    preferred: str  # "A", "B" or "tie"
    strength: int = 1


TARGET = {"A": 1.0, "B": 0.0, "tie": 0.5}


def _featurizer(config: RewardConfig) -> HashedNgramFeaturizer:
    return HashedNgramFeaturizer(
        step_hash_dim=config.step_hash_dim, context_hash_dim=config.context_hash_dim, char_ngrams=config.char_ngrams
    )


def solution_rows(featurizer, items: Sequence[tuple[str, Sequence[str]]]) -> Rows:
    """Feature rows of whole solutions: (problem, steps) -> the steps joined as one text."""
    return featurize(featurizer, [(problem, [], "\n".join(steps)) for problem, steps in items])


class LinearReward(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weights = nn.EmbeddingBag(dim, 1, mode="sum")
        nn.init.zeros_(self.weights.weight)

    def forward(self, rows: Rows) -> torch.Tensor:
        inputs = rows.torch_inputs()
        return self.weights(inputs["indices"], inputs["offsets"], per_sample_weights=inputs["weights"]).squeeze(-1)


def split_pairs(pairs: Sequence[PairExample], fraction: float, seed: int) -> tuple[list[int], list[int]]:
    """Train and held-out indices, split by problem."""
    problems = sorted({p.problem for p in pairs})
    random.Random(seed).shuffle(problems)
    n_held = int(round(len(problems) * fraction)) if len(problems) > 1 else 0
    held = set(problems[:n_held])
    train = [i for i, p in enumerate(pairs) if p.problem not in held]
    heldout = [i for i, p in enumerate(pairs) if p.problem in held]
    return train, heldout


def pairwise_metrics(reward_a: np.ndarray, reward_b: np.ndarray, preferred: Sequence[str]) -> dict:
    decided = [i for i, p in enumerate(preferred) if p != "tie"]
    right = sum(1 for i in decided if (reward_a[i] > reward_b[i]) == (preferred[i] == "A"))
    n = len(decided)
    return {
        "pairwise_accuracy": right / n if n else None,
        "pairwise_accuracy_ci": wilson_interval(right, n) if n else None,
        "n_pairs": n,
    }


def train_reward_model(
    pairs: Sequence[PairExample], config: RewardConfig, *, log: Callable[[str], None] | None = None
) -> dict:
    """Fit the reward model; returns a checkpoint dict {state, config, featurizer, metrics, ...}."""
    if len(pairs) < 2:
        raise ValueError(f"need at least 2 preferences to train a reward model, got {len(pairs)}")
    torch.manual_seed(config.seed)
    featurizer = _featurizer(config)
    rows_a = solution_rows(featurizer, [(p.problem, p.steps_a) for p in pairs])
    rows_b = solution_rows(featurizer, [(p.problem, p.steps_b) for p in pairs])
    target = torch.tensor([TARGET[p.preferred] for p in pairs], dtype=torch.float32)
    train, heldout = split_pairs(pairs, config.heldout_fraction, config.seed)
    model = LinearReward(featurizer.dim)
    # Plain gradient descent, not Adam: Adam's per-coordinate scaling moves an n-gram seen in one pair
    # as fast as one shared by many, which memorises pairs; SGD moves shared (signal) n-grams fastest.
    optimizer = torch.optim.SGD(model.parameters(), lr=config.lr, momentum=0.9, weight_decay=config.weight_decay)
    loss_fn = nn.BCEWithLogitsLoss()
    ta, tb, tt = rows_a.take(train), rows_b.take(train), target[train]
    ha, hb, ht = rows_a.take(heldout), rows_b.take(heldout), target[heldout]
    best, best_state, best_epoch, waited = float("inf"), None, 0, 0
    for epoch in range(config.max_epochs):
        model.train()
        optimizer.zero_grad()
        loss = loss_fn(model(ta) - model(tb), tt)
        loss.backward()
        optimizer.step()
        if heldout:
            with torch.no_grad():
                held_loss = float(loss_fn(model(ha) - model(hb), ht))
        else:
            held_loss = float(loss)
        if held_loss < best - 1e-5:
            best, best_epoch, waited = held_loss, epoch, 0
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
        else:
            waited += 1
            if waited >= config.patience:
                break
    model.load_state_dict(best_state)
    with torch.no_grad():
        reward_a, reward_b = model(rows_a).numpy(), model(rows_b).numpy()
    preferred = [p.preferred for p in pairs]
    metrics = {
        "train": pairwise_metrics(reward_a[train], reward_b[train], [preferred[i] for i in train]),
        "heldout": pairwise_metrics(reward_a[heldout], reward_b[heldout], [preferred[i] for i in heldout]),
    }
    if log:
        log(f"reward model: {len(train)} train / {len(heldout)} held-out pairs, best epoch {best_epoch}, {metrics}")
    return {
        "kind": "bradley_terry",
        "state": model.state_dict(),
        "config": config.to_dict(),
        "featurizer": featurizer.spec(),
        "metrics": metrics,
        "best_epoch": best_epoch,
        "n_train": len(train),
        "n_heldout": len(heldout),
        "n_problems": len({p.problem for p in pairs}),
    }


class RewardModel:
    """A trained reward model: a scalar reward per (problem, steps)."""

    def __init__(self, checkpoint: dict) -> None:
        spec = checkpoint["featurizer"]
        self.featurizer = HashedNgramFeaturizer(
            step_hash_dim=spec["step_hash_dim"],
            context_hash_dim=spec["context_hash_dim"],
            word_ngrams=spec["word_ngrams"],
            char_ngrams=spec["char_ngrams"],
        )
        self.model = LinearReward(self.featurizer.dim)
        self.model.load_state_dict(checkpoint["state"])
        self.model.eval()

    def rewards(self, items: Sequence[tuple[str, Sequence[str]]]) -> np.ndarray:
        if not items:
            return np.zeros(0, dtype=np.float32)
        with torch.no_grad():
            return self.model(solution_rows(self.featurizer, items)).numpy()


def save_reward_checkpoint(checkpoint: dict, path: str | os.PathLike) -> None:
    """Write beside the target, then rename: a crash never leaves a half file under its name."""
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    os.makedirs(os.path.dirname(os.fspath(path)) or ".", exist_ok=True)
    tmp = f"{os.fspath(path)}.partial"
    with open(tmp, "wb") as handle:
        handle.write(buffer.getvalue())
    os.replace(tmp, path)


def load_reward_model(path: str | os.PathLike) -> RewardModel:
    return RewardModel(torch.load(path, map_location="cpu", weights_only=False))
