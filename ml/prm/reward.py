"""A Bradley-Terry reward model (an outcome reward model) from pairwise preferences, pure torch.

P(a preferred over b) = sigmoid(r(a) - r(b)), r(x) = w . phi(x) + v . z(x): phi the PRM's featurizer
(ml.prm.featurizers) applied to the whole solution as one "step" (problem as context), z dense
solution features (ml.prm.reward_features: its shape and, given a PRM, the PRM's step scores),
standardised on the training pairs. `features` picks the parts ("ngrams", "shape", "prm"). Ties are
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
from ml.prm.reward_features import GROUPS, StepRisk, dense_features, feature_names

FEATURE_PARTS = ("ngrams", *GROUPS)


@dataclass
class RewardConfig:
    # Hash buckets for the solution's text and for the problem (ml.prm.featurizers.HashedNgramFeaturizer).
    step_hash_dim: int = 2**15
    context_hash_dim: int = 2**12
    # Word n-grams only by default: over a whole solution, char n-grams add thousands of noisy features.
    char_ngrams: tuple[int, ...] = ()
    # Parts of r(x): hashed n-grams of the text, the solution's shape, the PRM's step scores ("prm"
    # needs a PRM: prm_project, a steps project in the same instance whose active PRM scores the steps).
    features: tuple[str, ...] = ("ngrams", "shape")
    prm_project: str = ""
    lr: float = 2.0  # full-batch SGD with momentum on the mean pair loss (n-gram weights)
    dense_lr: float = 0.1  # the same for the few standardised dense weights (a plain logistic regression)
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
        if (
            not isinstance(self.features, tuple | list)
            or not self.features
            or not all(f in FEATURE_PARTS for f in self.features)
        ):
            raise ConfigError("features", f"must be a non-empty list of {list(FEATURE_PARTS)}, got {self.features!r}")
        self.features = tuple(dict.fromkeys(self.features))
        if (
            not isinstance(self.dense_lr, int | float)
            or isinstance(self.dense_lr, bool)
            or not 1e-6 <= self.dense_lr <= 10
        ):
            raise ConfigError("dense_lr", f"must be a number from 1e-06 to 10, got {self.dense_lr!r}")
        if not isinstance(self.prm_project, str):
            raise ConfigError("prm_project", f"must be a project slug, got {self.prm_project!r}")
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
    """r(x) = w . phi(x) (sparse n-grams, when used) + v . z(x) (dense standardised features)."""

    def __init__(self, dim: int, dense_dim: int = 0, *, ngrams: bool = True) -> None:
        super().__init__()
        self.weights = nn.EmbeddingBag(dim, 1, mode="sum") if ngrams else None
        self.dense = nn.Linear(dense_dim, 1, bias=False) if dense_dim else None
        for module in (self.weights, self.dense):
            if module is not None:
                nn.init.zeros_(module.weight)

    def forward(self, rows: Rows | None, dense: torch.Tensor | None = None) -> torch.Tensor:
        out = None
        if self.weights is not None:
            inputs = rows.torch_inputs()
            out = self.weights(inputs["indices"], inputs["offsets"], per_sample_weights=inputs["weights"]).squeeze(-1)
        if self.dense is not None:
            part = self.dense(dense).squeeze(-1)
            out = part if out is None else out + part
        return out


class SolutionInputs:
    """What the model reads of a list of solutions: n-gram rows and standardised dense features."""

    def __init__(self, rows: Rows | None, dense: torch.Tensor | None) -> None:
        self.rows, self.dense = rows, dense

    def take(self, idx) -> SolutionInputs:
        rows = self.rows.take(idx) if self.rows is not None else None
        dense = self.dense[torch.as_tensor(np.asarray(idx, dtype=np.int64))] if self.dense is not None else None
        return SolutionInputs(rows, dense)


def _dense_groups(features: Sequence[str]) -> list[str]:
    return [f for f in features if f in GROUPS]


def solution_inputs(
    featurizer,
    features: Sequence[str],
    items: Sequence[tuple[str, Sequence[str]]],
    scaling: tuple[np.ndarray, np.ndarray] | None,
    step_risk: StepRisk | None,
    raw: np.ndarray | None = None,
) -> SolutionInputs:
    """Inputs for the model; `raw` dense features when already computed."""
    rows = solution_rows(featurizer, items) if "ngrams" in features else None
    groups = _dense_groups(features)
    dense = None
    if groups:
        raw = dense_features(items, groups, step_risk) if raw is None else raw
        mean, std = scaling if scaling is not None else (raw.mean(0), raw.std(0))
        dense = torch.from_numpy(((raw - mean) / np.where(std > 1e-9, std, 1.0)).astype(np.float32))
    return SolutionInputs(rows, dense)


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
    pairs: Sequence[PairExample],
    config: RewardConfig,
    *,
    log: Callable[[str], None] | None = None,
    step_risk: StepRisk | None = None,
) -> dict:
    """Fit the reward model; returns a checkpoint dict {state, config, featurizer, metrics, ...}.
    `step_risk` (ml.prm.reward_features.prm_step_risk) is needed when `features` has "prm"."""
    if len(pairs) < 2:
        raise ValueError(f"need at least 2 preferences to train a reward model, got {len(pairs)}")
    torch.manual_seed(config.seed)
    featurizer = _featurizer(config)
    train, heldout = split_pairs(pairs, config.heldout_fraction, config.seed)
    items = [(p.problem, p.steps_a) for p in pairs] + [(p.problem, p.steps_b) for p in pairs]
    groups = _dense_groups(config.features)
    scaling, raw = None, None
    if groups:  # standardise with the training pairs' solutions only
        raw = dense_features(items, groups, step_risk)
        fit = raw[np.r_[train, np.asarray(train, dtype=np.int64) + len(pairs)]] if train else raw
        scaling = (fit.mean(0), fit.std(0))
    inputs = solution_inputs(featurizer, config.features, items, scaling, step_risk, raw)
    inputs_a, inputs_b = inputs.take(range(len(pairs))), inputs.take(range(len(pairs), 2 * len(pairs)))
    target = torch.tensor([TARGET[p.preferred] for p in pairs], dtype=torch.float32)
    model = LinearReward(featurizer.dim, len(feature_names(groups)), ngrams="ngrams" in config.features)
    # Plain gradient descent, not Adam: Adam's per-coordinate scaling moves an n-gram seen in one pair
    # as fast as one shared by many, which memorises pairs; SGD moves shared (signal) n-grams fastest.
    param_groups = []
    if model.weights is not None:
        param_groups.append({"params": model.weights.parameters(), "lr": config.lr})
    if model.dense is not None:
        param_groups.append({"params": model.dense.parameters(), "lr": config.dense_lr})
    optimizer = torch.optim.SGD(param_groups, lr=config.lr, momentum=0.9, weight_decay=config.weight_decay)
    loss_fn = nn.BCEWithLogitsLoss()
    ta, tb, tt = inputs_a.take(train), inputs_b.take(train), target[train]
    ha, hb, ht = inputs_a.take(heldout), inputs_b.take(heldout), target[heldout]
    best, best_state, best_epoch, waited = float("inf"), None, 0, 0
    for epoch in range(config.max_epochs):
        model.train()
        optimizer.zero_grad()
        loss = loss_fn(model(ta.rows, ta.dense) - model(tb.rows, tb.dense), tt)
        loss.backward()
        optimizer.step()
        if heldout:
            with torch.no_grad():
                held_loss = float(loss_fn(model(ha.rows, ha.dense) - model(hb.rows, hb.dense), ht))
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
        reward_a = model(inputs_a.rows, inputs_a.dense).numpy()
        reward_b = model(inputs_b.rows, inputs_b.dense).numpy()
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
        "dense": {
            "groups": groups,
            "names": feature_names(groups),
            "mean": scaling[0].tolist() if scaling else [],
            "std": scaling[1].tolist() if scaling else [],
            "weights": model.dense.weight.detach().squeeze(0).tolist() if model.dense is not None else [],
        },
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
        # checkpoints from before dense features: n-grams alone
        self.features = tuple(checkpoint["config"].get("features", ("ngrams",)))
        dense = checkpoint.get("dense") or {"groups": [], "mean": [], "std": []}
        self.scaling = (np.asarray(dense["mean"]), np.asarray(dense["std"])) if dense["groups"] else None
        self.prm_project = checkpoint["config"].get("prm_project", "")
        # The PRM whose step scores the "prm" features read, as an artifact path (set by the service).
        self.prm_artifact = checkpoint.get("prm_artifact")
        self.step_risk: StepRisk | None = None  # set by whoever loads the PRM (ml.services.reward)
        self.model = LinearReward(
            self.featurizer.dim, len(feature_names(dense["groups"])), ngrams="ngrams" in self.features
        )
        self.model.load_state_dict(checkpoint["state"])
        self.model.eval()

    @property
    def needs_prm(self) -> bool:
        return "prm" in self.features

    def rewards(self, items: Sequence[tuple[str, Sequence[str]]], *, step_risk: StepRisk | None = None) -> np.ndarray:
        if not items:
            return np.zeros(0, dtype=np.float32)
        risk = step_risk or self.step_risk
        if self.needs_prm and risk is None:
            raise ValueError("this reward model reads PRM step scores: load it with its PRM")
        inputs = solution_inputs(self.featurizer, self.features, items, self.scaling, risk)
        with torch.no_grad():
            return self.model(inputs.rows, inputs.dense).numpy()


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
