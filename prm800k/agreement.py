"""Agreement between labels of one solution: with gold labels, between annotators, Krippendorff's alpha.

Comparisons read the main line of each step (prm800k.labels.main_line_ratings):

- step accuracy against gold: among step indexes both rated, the share with equal ratings;
- first-error match: both put the first Negative step at the same index (both none matches);
- pairwise agreement: share of (pair of annotators, step) where both rated and agree;
- Krippendorff's alpha, ordinal, over the main-line ratings of solutions with overlap.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations

from prm800k.labels import first_error_index, main_line_ratings


@dataclass(frozen=True, slots=True)
class GoldComparison:
    steps_compared: int
    steps_matched: int
    first_error_match: bool

    @property
    def accuracy(self) -> float | None:
        return self.steps_matched / self.steps_compared if self.steps_compared else None


def compare_with_gold(*, steps: list[dict], gold_steps: list[dict]) -> GoldComparison:
    """Compare one annotation's `label.steps` with one gold annotation's `label.steps`."""
    mine = main_line_ratings(steps)
    gold = main_line_ratings(gold_steps)
    compared = matched = 0
    for rating, gold_rating in zip(mine, gold, strict=False):
        if rating is None or gold_rating is None:
            continue
        compared += 1
        matched += rating == gold_rating
    return GoldComparison(
        steps_compared=compared,
        steps_matched=matched,
        first_error_match=first_error_index(mine) == first_error_index(gold),
    )


@dataclass(frozen=True, slots=True)
class AgreementSummary:
    solutions_compared: int
    steps_compared: int
    steps_matched: int
    first_error_matches: int

    @property
    def accuracy(self) -> float | None:
        return self.steps_matched / self.steps_compared if self.steps_compared else None

    @property
    def first_error_rate(self) -> float | None:
        return self.first_error_matches / self.solutions_compared if self.solutions_compared else None


def summarize(comparisons: Iterable[GoldComparison]) -> AgreementSummary:
    solutions = steps = matched = first = 0
    for comparison in comparisons:
        solutions += 1
        steps += comparison.steps_compared
        matched += comparison.steps_matched
        first += comparison.first_error_match
    return AgreementSummary(solutions, steps, matched, first)


def pairwise_agreement(ratings: list[list[int | None]]) -> float | None:
    """Share of (pair of annotators, step) where both rated the step and agree; None if no overlap."""
    agree = total = 0
    for a, b in combinations(ratings, 2):
        for x, y in zip(a, b, strict=False):
            if x is not None and y is not None:
                total += 1
                agree += x == y
    return agree / total if total else None


ORDINAL_VALUES = (-1, 0, 1)


def krippendorff_alpha_ordinal(units: Iterable[list[int]]) -> float | None:
    """Krippendorff's alpha with the ordinal metric over rating values -1 < 0 < 1.

    `units`: for each rated item (one step of one solution) the ratings its annotators gave.
    Units with fewer than two ratings are not pairable and are ignored. None when no pairable
    unit exists or every rating has the same value (expected disagreement 0).
    Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", coincidence-matrix form.
    """
    index = {value: i for i, value in enumerate(ORDINAL_VALUES)}
    k = len(ORDINAL_VALUES)
    coincidences = [[0.0] * k for _ in range(k)]
    for ratings in units:
        values = [index[r] for r in ratings if r in index]
        m = len(values)
        if m < 2:
            continue
        for a in range(m):
            for b in range(m):
                if a != b:
                    coincidences[values[a]][values[b]] += 1 / (m - 1)
    totals = [sum(row) for row in coincidences]
    n = sum(totals)
    if n <= 1:
        return None

    def delta2(c: int, d: int) -> float:
        low, high = min(c, d), max(c, d)
        return (sum(totals[low : high + 1]) - (totals[low] + totals[high]) / 2) ** 2

    observed = sum(coincidences[c][d] * delta2(c, d) for c in range(k) for d in range(k)) / n
    expected = sum(totals[c] * totals[d] * delta2(c, d) for c in range(k) for d in range(k)) / (n * (n - 1))
    if expected == 0:
        return None
    return 1 - observed / expected
