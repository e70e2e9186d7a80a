"""Quality of a compare project's preferences (a read; the dashboard's pair section).

- position bias: of the decided answers (not ties), the share that chose the candidate shown on
  the left; 0.5 is no bias (candidate order is drawn per assignment, so it is measurable);
- agreement: over pairs answered by two or more annotators, the share of annotator pairs giving
  the same answer (A, B or tie, in pair terms);
- agreement with the graded answers: of decided answers on pairs where one candidate is graded
  right and the other wrong, the share that preferred the right one;
- gold: of answers on gold pairs, the share equal to the lead's gold answer.
Each share comes with its count and a 95% Wilson interval.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

from annotate.models import Preference, Project


def _wilson(k: int, n: int, z: float = 1.96) -> list[float] | None:
    if n == 0:
        return None
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return [round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)]


def _share(k: int, n: int) -> dict:
    return {"share": round(k / n, 4) if n else None, "n": n, "ci95": _wilson(k, n)}


def compare_stats(*, project: Project) -> dict:
    rows = list(
        Preference.objects.filter(project=project).values_list(
            "comparison_id",
            "preferred",
            "shown",
            "annotator_id",
            "comparison__is_gold",
            "comparison__gold_preference",
            "comparison__solution_a__answer_correct",
            "comparison__solution_b__answer_correct",
        )
    )
    decided = [r for r in rows if r[2] != "tie"]
    left = sum(1 for r in decided if r[2] == "A")
    by_pair: dict[int, list[str]] = defaultdict(list)
    for r in rows:
        by_pair[r[0]].append(r[1])
    same = total = 0
    for answers in by_pair.values():
        for x, y in itertools.combinations(answers, 2):
            total += 1
            same += x == y
    graded = [r for r in decided if r[6] is not None and r[7] is not None and r[6] != r[7]]
    right = sum(1 for r in graded if (r[1] == "A") == bool(r[6]))
    gold = [r for r in rows if r[4] and r[5]]
    gold_right = sum(1 for r in gold if r[1] == r[5])
    return {
        "preferences": len(rows),
        "ties": len(rows) - len(decided),
        "pairs_answered": len(by_pair),
        "position_bias_left": _share(left, len(decided)),
        "agreement": _share(same, total),
        "agreement_with_grading": _share(right, len(graded)),
        "gold_accuracy": _share(gold_right, len(gold)),
    }
