"""The solutions a training run's first-error threshold is weighted toward (`ml.prm.reweight`): a
random sample of the project's queue and every step of the solutions it trains on, as feature rows
from the step-id store (`ml.services.step_features`): no step text is read where the store has
them."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import numpy as np

from annotate.models import Annotation, Project, Solution
from ml.prm.answer_input import GRADE_STRATA
from ml.prm.examples import StepExample
from ml.prm.reweight import ThresholdPool
from ml.services.step_features import answer_columns, features_for_steps, solution_grades, step_rows

if TYPE_CHECKING:
    from ml.prm.featurizers import Featurizer  # torch: only the worker that trains loads it

SAMPLE_SOLUTIONS = 2000  # enough for 5 quantile strata; read from the store in well under a second


def threshold_pool(
    *, project: Project, examples: list[StepExample], featurizer: Featurizer, answers: bool = False, seed: int = 0
) -> ThresholdPool | None:
    """`train_prm`'s `threshold_pool`: a random sample of the project's solutions (gold and
    screening questions aside) and every solution the examples label (by their `solution_id`,
    "a<annotation id>"), solutions without steps left out; None when no solution has steps.
    `answers`: with the graded-answer side columns (a PRM with `answer_input`)."""
    training_solution_ids = {e.solution_id for e in examples}
    ids = list(Solution.objects.filter(project=project, is_gold=False, is_screening=False).values_list("id", flat=True))
    sample = random.Random(seed).sample(ids, min(SAMPLE_SOLUTIONS, len(ids)))
    annotation_ids = [int(sid[1:]) for sid in training_solution_ids if sid.startswith("a") and sid[1:].isdigit()]
    solution_of = dict(Annotation.objects.filter(pk__in=annotation_ids).values_list("id", "solution_id"))
    rows = step_rows(sorted(set(sample) | set(solution_of.values())))  # ordered by solution, then index
    if not len(rows):
        return None
    solutions, lengths = np.unique(rows.solution_id, return_counts=True)
    position = {int(sid): i for i, sid in enumerate(solutions.tolist())}
    feats = features_for_steps(project=project, featurizer=featurizer, rows=rows)
    graded = solution_grades(solutions.tolist())  # read once: the side columns and the strata
    return ThresholdPool(
        rows=feats.with_side(answer_columns(rows, graded)) if answers else feats,
        lengths=lengths.astype(np.int64),
        sample=np.asarray([position[sid] for sid in sample if sid in position], dtype=np.int64),
        labeled={f"a{aid}": position[sid] for aid, sid in solution_of.items() if sid in position},
        grades=np.asarray([GRADE_STRATA[graded.get(int(sid))] for sid in solutions.tolist()]),
    )
