"""Test data for the work-queue tests: projects, members and solutions created directly."""

from __future__ import annotations

import hashlib
import itertools
import json

from django.contrib.auth import get_user_model

from annotate.models import Annotation, Membership, Problem, Project, Role, Solution, Step
from prm800k.labels import label_counters
from prm800k.records import dumps_label_steps

_seq = itertools.count()


def _hash(*parts: object) -> str:
    return hashlib.sha256(json.dumps([str(p) for p in parts]).encode()).hexdigest()


def make_project(slug: str | None = None, **fields) -> Project:
    return Project.objects.create(slug=slug or f"p{next(_seq)}", **fields)


def make_user(name: str | None = None, *, project: Project | None = None, role: str = Role.ANNOTATOR):
    user = get_user_model().objects.create_user(name or f"u{next(_seq)}", password="pw-steplabel-test")
    if project is not None:
        Membership.objects.create(project=project, user=user, role=role)
    return user


def make_solutions(project: Project, count: int, *, n_steps: int = 3, priority_from: float = 0.0, **fields):
    """`count` solutions of one problem each, priorities descending from priority_from + count."""
    tag = next(_seq)
    problems = Problem.objects.bulk_create(
        [
            Problem(
                project=project,
                text=f"Problem {tag}-{i}: compute $1+{i}$.",
                ground_truth_answer=str(1 + i),
                content_hash=_hash("problem", tag, i),
                text_hash=_hash("text", tag, i),
            )
            for i in range(count)
        ]
    )
    solutions = Solution.objects.bulk_create(
        [
            Solution(
                project=project,
                problem=problem,
                content_hash=_hash("solution", tag, i),
                n_steps=n_steps,
                priority=priority_from + count - i,
                **fields,
            )
            for i, problem in enumerate(problems)
        ]
    )
    Step.objects.bulk_create(
        [Step(solution=s, index=k, text=f"Step {k} of solution {s.pk}.") for s in solutions for k in range(n_steps)]
    )
    return solutions


def gold_label_steps(ratings: list[int]) -> list[dict]:
    """PRM800K label steps with the given main-line ratings (phase 2 shape at a final -1)."""
    steps = []
    for i, rating in enumerate(ratings):
        last_error = rating == -1 and i == len(ratings) - 1
        steps.append(
            {
                "completions": [{"text": f"step {i}", "rating": rating, "flagged": False}],
                "human_completion": None,
                "chosen_completion": None if last_error else 0,
            }
        )
    return steps


def make_gold_annotation(solution: Solution, ratings: list[int]) -> Annotation:
    steps = gold_label_steps(ratings)
    counters = label_counters(steps)
    return Annotation.objects.create(
        project=solution.project,
        solution=solution,
        labeler_uuid="gold",
        source="import",
        submitted_at="2023-01-01T00:00:00Z",
        is_gold=True,
        finish_reason="found_error" if counters["first_error_index"] is not None else "solution",
        label_steps=dumps_label_steps(steps),
        **counters,
    )


def payload(ratings: list[int | None], *, key: str = "k", finish_reason: str | None = None, **extra) -> dict:
    """A submit payload with one main-line rating per step and no alternatives."""
    if finish_reason is None:
        finish_reason = "found_error" if -1 in ratings else "solution"
    return {
        "idempotency_key": key,
        "finish_reason": finish_reason,
        "total_time_ms": 1234,
        "steps": [
            {"index": i, "rating": r, "flagged": False, "alternatives": [], "human_completion": None}
            for i, r in enumerate(ratings)
        ],
        **extra,
    }
