"""Importance weights for choosing the first-error threshold on an actively chosen sample.

A model-driven strategy labels the solutions its model finds most uncertain or most likely wrong,
so the labeled solutions are not the pool, and the P(-1) threshold that is best for them is not
best for the pool (in the simulation, with the threshold chosen on the evaluation set itself,
uncertainty sampling matched random on every set; chosen on its own labeled sample it lost
0.03-0.05 first-error F1). Every such strategy selects on what the model sees, and the one thing
the threshold reads is how high a solution's P(-1) runs, so weighting the labeled solutions by
strata of their largest step P(-1) to the pool's distribution removes the selection on it
(propensity by strata). A random sample gets weights near 1.

Both the simulation (`ml.prm.active_sim`) and the app's trainer (`ml.prm.train`) use this; the
labeled solutions' own scores must be out of bag (else fitting their labels inflates them and even
a random sample looks unlike the pool).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ml.prm.feature_rows import Rows

BINS = 5


@dataclass
class ThresholdPool:
    """The app trainer's view of the pool: feature rows of every step of some solutions laid end
    to end (`lengths` steps each, in solution order), `sample` the positions of a random sample of
    the project's solutions, `labeled` each training solution id's position (the solution its
    annotation labels). Built from the step-id feature store (`ml.services.population`), so a
    retrain reads no step text for it."""

    rows: Rows
    lengths: np.ndarray
    sample: np.ndarray
    labeled: dict[str, int]
    grades: np.ndarray | None = None  # each solution's graded-answer stratum ("wrong", "right", "ungraded")

    def starts(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)


def solution_max(p_negative: np.ndarray, lengths) -> np.ndarray:
    """The largest step P(-1) of each solution, from the steps' P(-1) laid end to end."""
    lengths = np.asarray(lengths, dtype=np.int64)
    out = np.zeros(len(lengths))
    nonempty = lengths > 0
    if nonempty.any():
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])[nonempty]
        out[nonempty] = np.maximum.reduceat(np.asarray(p_negative, dtype=np.float64), starts)
    return out


def population_weights(labeled: np.ndarray, population: np.ndarray, bins: int = BINS) -> np.ndarray:
    """One weight per labeled solution: the population's share of its stratum (quantile bins of
    the population's largest step P(-1)) over the labeled solutions' share of it."""
    labeled = np.asarray(labeled, dtype=np.float64)
    population = np.asarray(population, dtype=np.float64)
    if not len(labeled) or not len(population):
        return np.ones(len(labeled))
    edges = np.unique(np.quantile(population, np.linspace(0, 1, bins + 1)[1:-1]))
    pop_bin, lab_bin = np.searchsorted(edges, population), np.searchsorted(edges, labeled)
    pop_share = np.bincount(pop_bin, minlength=len(edges) + 1) / len(population)
    lab_share = np.bincount(lab_bin, minlength=len(edges) + 1) / len(labeled)
    return pop_share[lab_bin] / lab_share[lab_bin]


def stratified_population_weights(
    labeled: np.ndarray, population: np.ndarray, labeled_strata, population_strata, bins: int = BINS
) -> np.ndarray:
    """`population_weights` within each stratum (the graded answer: a queue may favour wrong
    answers), times the population's share of that stratum over the labeled share: the joint
    propensity on (stratum, largest step P(-1)). A labeled stratum the population lacks gets 0."""
    labeled = np.asarray(labeled, dtype=np.float64)
    population = np.asarray(population, dtype=np.float64)
    if not len(labeled) or not len(population):
        return np.ones(len(labeled))
    lab_s = np.asarray(labeled_strata)
    pop_s = np.asarray(population_strata)
    out = np.zeros(len(labeled))
    for k in np.unique(lab_s):
        mine, theirs = lab_s == k, pop_s == k
        if not theirs.any():
            continue
        share = theirs.mean() / mine.mean()
        out[mine] = population_weights(labeled[mine], population[theirs], bins) * share
    return out
