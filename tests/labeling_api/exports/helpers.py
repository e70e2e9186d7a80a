"""Helpers of the export and import API tests (PostgreSQL; app labels through the real queue and
submit services)."""

import json
import uuid
from pathlib import Path

from annotate.models import Annotation, Problem, Project, Solution, Step
from annotate.services import queue
from labeling_api.serializers_submit import submit_payload

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
    return submit_payload(assignment=assignment, user=user, payload=payload).annotation


def _rated(text: str, rating: int) -> dict:
    return {"text": text, "rating": rating, "flagged": False}


# A record rated a(+1) b(0) c(-1) with an alternative c2(+1): the TRL export and its consumers read it.
NEUTRAL_THEN_ERROR = {
    "labeler": "44444444-4444-4444-8444-444444444444",
    "timestamp": "2023-01-02T03:04:05",
    "generation": 1,
    "is_quality_control_question": False,
    "is_initial_screening_question": False,
    "question": {
        "problem": "What is $2+2$?",
        "ground_truth_solution": "$2+2=\\boxed{4}$",
        "ground_truth_answer": "4",
        "pre_generated_steps": ["a", "b", "c", "# Answer\n\n5"],
        "pre_generated_answer": "5",
        "pre_generated_verifier_score": 0.4,
    },
    "label": {
        "steps": [
            {"completions": [_rated("a", 1)], "human_completion": None, "chosen_completion": 0},
            {"completions": [_rated("b", 0)], "human_completion": None, "chosen_completion": 0},
            {"completions": [_rated("c", -1), _rated("c2", 1)], "human_completion": None, "chosen_completion": None},
        ],
        "total_time": 1000,
        "finish_reason": "found_error",
    },
}
