"""Helpers of the export and import API tests (PostgreSQL; app labels through the real queue and
submit services)."""

import json
import uuid
from pathlib import Path

from annotate.models import Annotation, Problem, Project, Solution, Step
from annotate.services import queue, submit

FIXTURES = Path(__file__).resolve().parents[2] / "annotate" / "fixtures"


def lines_of(response) -> list[dict]:
    body = b"".join(response.streaming_content).decode()
    return [json.loads(line) for line in body.splitlines()]


def add_solution(project: Project, steps: list[str], problem_text: str = "What is $1+1$?") -> Solution:
    problem, _ = Problem.objects.get_or_create(
        project=project, content_hash=uuid.uuid4().hex, defaults={"text": problem_text, "ground_truth_answer": "2"}
    )
    solution = Solution.objects.create(
        project=project,
        problem=problem,
        content_hash=uuid.uuid4().hex,
        n_steps=len(steps),
        final_answer="2",
        priority=10.0,
    )
    Step.objects.bulk_create(Step(solution=solution, index=i, text=t) for i, t in enumerate(steps))
    return solution


def label_in_app(project: Project, user, ratings: list[int], finish: str) -> Annotation:
    assignment = queue.claim_next(project=project, user=user)
    assert assignment is not None
    payload = {
        "idempotency_key": uuid.uuid4().hex,
        "finish_reason": finish,
        "total_time_ms": 4200,
        "steps": [{"index": i, "rating": r, "flagged": False, "alternatives": []} for i, r in enumerate(ratings)],
    }
    return submit.submit(assignment=assignment, user=user, payload=payload).annotation
