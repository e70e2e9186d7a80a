"""Planted preference data of the reward-model tests: pure pair examples, and a compare project whose
pairs carry one annotator's preferences."""

from __future__ import annotations

import random
import uuid

from annotate.models import Comparison, Preference, Problem, Project, Solution, Step
from ml.prm.reward import PairExample
from ml.prm.synthetic import planted_pairs
from tests.factories import make_user


def planted_pair_examples(n: int, seed: int) -> list[PairExample]:
    """`n` planted preference pairs (ml.prm.synthetic), the preferred side drawn at random."""
    rng = random.Random(seed)
    out = []
    for problem, good, bad, prefers_good in planted_pairs(n, seed=seed, n_steps=2):
        good_first = rng.random() < 0.5
        a, b = (good, bad) if good_first else (bad, good)
        out.append(PairExample(problem, a, b, "A" if good_first == prefers_good else "B"))
    return out


def planted_compare_project(slug: str, n_pairs: int, *, labeled: int) -> Project:
    """A compare project with `n_pairs` planted pairs; the first `labeled` carry one annotator's preference."""
    project = Project.objects.create(slug=slug, task_kind="compare")
    user = make_user(f"{slug}-ann")
    rng = random.Random(7)
    for i, (problem_text, good, bad, prefers_good) in enumerate(planted_pairs(n_pairs, seed=3, n_steps=2)):
        problem = Problem.objects.create(project=project, text=problem_text, content_hash=uuid.uuid4().hex)
        ids = []
        for steps in (good, bad):
            solution = Solution.objects.create(
                project=project, problem=problem, content_hash=uuid.uuid4().hex, n_steps=len(steps)
            )
            Step.objects.bulk_create(Step(solution=solution, index=j, text=t) for j, t in enumerate(steps))
            ids.append(solution.pk)
        comparison = Comparison.objects.create(
            project=project, problem=problem, solution_a_id=ids[0], solution_b_id=ids[1], is_open=i >= labeled
        )
        if i < labeled:
            swapped = rng.random() < 0.5
            shown = "A" if prefers_good != swapped else "B"
            Preference.objects.create(
                project=project,
                comparison=comparison,
                annotator=user,
                labeler_uuid="x",
                preferred="A" if prefers_good else "B",
                shown=shown,
                swapped=swapped,
                strength=2,
                idempotency_key=f"k{i}",
                submitted_at=comparison.created_at,
            )
    return project
