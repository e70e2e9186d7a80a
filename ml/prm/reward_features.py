"""Dense solution features for the Bradley-Terry reward model (ml.prm.reward), beside its n-grams.

Hashed n-grams of a whole solution carry little that transfers to an unseen problem: an answer's
tokens are the problem's own. These features describe any solution, each for a reason known before
looking at the data:

- `shape`: length (steps, characters; floundering solutions run long, truncated ones short),
  self-correction words ("wait", "mistake", "recheck": a solution that doubts itself is more often
  wrong), whether a final answer can be read at all, whether it is an integer (most competition
  answers are) and its length (long expressions go wrong more often).
- `prm`: the step-level PRM's view, per solution over its steps' P(not -1): the log product
  (PRM800K's solution score), the log minimum (the weakest step), the mean and the last step (the
  step that states the answer). Needs a PRM; the service passes the one named by `prm_project`.

Values are standardised with the training pairs' mean and spread, stored in the checkpoint.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

import numpy as np

from prm800k.labels import final_answer_from_text

SHAPE = ("log_steps", "log_chars", "log_hedges", "has_answer", "answer_is_integer", "log_answer_chars")
PRM = ("prm_log_product", "prm_log_min", "prm_log_mean", "prm_log_last")
GROUPS = {"shape": SHAPE, "prm": PRM}

_HEDGE = re.compile(
    r"\b(wait|however|mistake|actually|re-?evaluate|re-?check|reconsider|hmm|incorrect|contradiction)\b", re.I
)
_BOXED = re.compile(r"\\boxed\{((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}")
_CHOICE = re.compile(r"Choice_?\s*([A-D])\b")
_INTEGER = re.compile(r"-?\d[\d,]*")

# Per-solution P(-1) of each step, from a PRM: (problem, steps) lists -> one array per solution.
StepRisk = Callable[[Sequence[tuple[str, Sequence[str]]]], list[np.ndarray]]


def final_answer(steps: Sequence[str]) -> str | None:
    """The stated answer: PRM800K's '# Answer', else the last \\boxed{}, else MR-Ben's 'Choice_X'."""
    if not steps:
        return None
    answer = final_answer_from_text(steps[-1])
    if answer:
        return answer
    text = "\n".join(steps[-2:])
    boxed = _BOXED.findall(text)
    if boxed:
        return boxed[-1].strip() or None
    choice = _CHOICE.findall(steps[-1])
    return choice[-1] if choice else None


def shape_features(steps: Sequence[str]) -> list[float]:
    text = "\n".join(steps)
    answer = (final_answer(steps) or "").strip().strip("$")
    return [
        math.log1p(len(steps)),
        math.log1p(len(text)),
        math.log1p(len(_HEDGE.findall(text))),
        float(bool(answer)),
        float(bool(_INTEGER.fullmatch(answer))),
        math.log1p(len(answer)),
    ]


def prm_features(p_negative: np.ndarray) -> list[float]:
    ok = np.log(np.clip(1.0 - np.asarray(p_negative, dtype=np.float64), 1e-6, 1.0))
    if not len(ok):
        return [0.0, 0.0, 0.0, 0.0]
    return [float(ok.sum()), float(ok.min()), float(ok.mean()), float(ok[-1])]


def feature_names(groups: Sequence[str]) -> list[str]:
    return [name for group in groups for name in GROUPS[group]]


def dense_features(
    items: Sequence[tuple[str, Sequence[str]]], groups: Sequence[str], step_risk: StepRisk | None = None
) -> np.ndarray:
    """(n, d) raw features of (problem, steps) items for the named groups, in `feature_names` order."""
    columns: list[np.ndarray] = []
    for group in groups:
        if group == "shape":
            columns.append(np.asarray([shape_features(steps) for _, steps in items], dtype=np.float64))
        elif group == "prm":
            if step_risk is None:
                raise ValueError("the reward model uses PRM features: give it the PRM (prm_project)")
            risks = step_risk(items)
            columns.append(np.asarray([prm_features(r) for r in risks], dtype=np.float64))
        else:
            raise ValueError(f"unknown feature group {group!r}")
    if not columns:
        return np.zeros((len(items), 0))
    return np.concatenate(columns, axis=1).reshape(len(items), -1)


def prm_step_risk(prm) -> StepRisk:
    """A StepRisk from an ml.prm.model.PRM: every step scored in its context, one batch."""

    def risk(items: Sequence[tuple[str, Sequence[str]]]) -> list[np.ndarray]:
        flat = [(problem, tuple(steps[:i]), s) for problem, steps in items for i, s in enumerate(steps)]
        p_negative = prm.score_steps(flat).p_negative if flat else np.zeros(0)
        out, start = [], 0
        for _, steps in items:
            out.append(np.asarray(p_negative[start : start + len(steps)]))
            start += len(steps)
        return out

    return risk
