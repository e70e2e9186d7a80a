"""The solutions a training run's first-error threshold is weighted toward (`ml.prm.reweight`): a
random sample of the project's queue and every step of the solutions it trains on, read from the
Step rows as unrated examples."""

from __future__ import annotations

import random

from annotate.models import Annotation, Project, Solution, Step
from ml.prm.examples import StepExample

SAMPLE_SOLUTIONS = 2000  # enough for 5 quantile strata; featurized in a second or two


def _steps_by_solution(solution_ids: list[int]) -> dict[int, list[StepExample]]:
    problems = dict(Solution.objects.filter(pk__in=solution_ids).values_list("id", "problem__text"))
    out: dict[int, list[StepExample]] = {sid: [] for sid in solution_ids}
    rows = Step.objects.filter(solution_id__in=solution_ids).order_by("solution_id", "index")
    previous: tuple[str, ...] = ()
    for solution_id, index, text in rows.values_list("solution_id", "index", "text").iterator(chunk_size=5000):
        steps = out[solution_id]
        if not steps:
            previous = ()  # rows come ordered by solution: a new one starts
        steps.append(StepExample(problems[solution_id], previous, text, None, str(solution_id), "", index))
        previous = (*previous, text)
    return out


def threshold_population(*, project: Project, examples: list[StepExample], seed: int = 0) -> dict:
    """`train_prm`'s `population` (a random sample of the project's solutions, gold and screening
    questions aside) and `solution_steps` (every step of each solution the examples label, by
    their `solution_id`, "a<annotation id>")."""
    training_solution_ids = {e.solution_id for e in examples}
    ids = list(Solution.objects.filter(project=project, is_gold=False, is_screening=False).values_list("id", flat=True))
    sample = random.Random(seed).sample(ids, min(SAMPLE_SOLUTIONS, len(ids)))
    annotation_ids = [int(sid[1:]) for sid in training_solution_ids if sid.startswith("a") and sid[1:].isdigit()]
    solution_of = dict(Annotation.objects.filter(pk__in=annotation_ids).values_list("id", "solution_id"))
    steps = _steps_by_solution(sorted(set(sample) | set(solution_of.values())))
    population = [steps[sid] for sid in sample if steps[sid]]
    labeled = {f"a{aid}": steps[sid] for aid, sid in solution_of.items() if steps.get(sid)}
    return {"population": population, "solution_steps": labeled}
