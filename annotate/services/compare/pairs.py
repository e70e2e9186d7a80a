"""Pairing the solutions of each problem into Comparison rows, informative pairs first.

Order of preference within a problem (PairReason): one candidate graded right and the other wrong
(the pair teaches the most and checks the annotator against the grader), then different final
answers, then the closest model scores (the model is least sure between them), then the rest.
At most `per_problem` pairs per problem, each solution in as few pairs as possible, so the
budget spreads over the problem's solutions instead of repeating one.
"""

from __future__ import annotations

import itertools
from collections import defaultdict

from django.db import transaction

from annotate.models import Comparison, PairReason, Project, Solution

DEFAULT_PAIRS_PER_PROBLEM = 3  # Project.pairs_per_problem's default
MAX_PAIRS_PER_PROBLEM = 1000
# Queue priority by reason: the claim serves informative pairs first.
REASON_PRIORITY = {
    PairReason.ANSWERS_DIFFER: 3.0,
    PairReason.FINAL_DIFFERS: 2.0,
    PairReason.CLOSE_SCORES: 1.0,
    PairReason.OTHER: 0.0,
}


def _reason(a: dict, b: dict) -> str:
    if (
        a["answer_correct"] is not None
        and b["answer_correct"] is not None
        and a["answer_correct"] != b["answer_correct"]
    ):
        return PairReason.ANSWERS_DIFFER
    if (a["final_answer"] or "").strip() != (b["final_answer"] or "").strip():
        return PairReason.FINAL_DIFFERS
    if a["verifier_score"] is not None and b["verifier_score"] is not None:
        return PairReason.CLOSE_SCORES
    return PairReason.OTHER


def _gap(a: dict, b: dict) -> float:
    if a["verifier_score"] is None or b["verifier_score"] is None:
        return 1.0
    return abs(a["verifier_score"] - b["verifier_score"])


def choose_pairs(solutions: list[dict], *, per_problem: int) -> list[tuple[dict, dict, str]]:
    """Pure: the pairs to make among one problem's solutions (dicts with id, answer_correct,
    final_answer, verifier_score), best first."""
    candidates = []
    for a, b in itertools.combinations(sorted(solutions, key=lambda s: s["id"]), 2):
        reason = _reason(a, b)
        candidates.append((-REASON_PRIORITY[reason], _gap(a, b), a["id"], b["id"], a, b, reason))
    candidates.sort(key=lambda c: c[:4])
    chosen: list[tuple[dict, dict, str]] = []
    uses: dict[int, int] = defaultdict(int)
    # Passes with a growing cap on how often one solution may appear: spread before repeating.
    for cap in range(1, len(solutions) + 1):
        for *_, a, b, reason in candidates:
            if len(chosen) >= per_problem:
                return chosen
            if uses[a["id"]] < cap and uses[b["id"]] < cap and (a, b, reason) not in chosen:
                chosen.append((a, b, reason))
                uses[a["id"]] += 1
                uses[b["id"]] += 1
    return chosen


@transaction.atomic
def build_pairs(*, project: Project, per_problem: int = DEFAULT_PAIRS_PER_PROBLEM) -> int:
    """Make the pairs of every problem that has fewer than `per_problem`; returns how many were made.

    Idempotent: existing pairs count toward the budget and are never made twice."""
    by_problem: dict[int, list[dict]] = defaultdict(list)
    fields = ("id", "problem_id", "answer_correct", "final_answer", "verifier_score")
    for row in Solution.objects.filter(project=project, is_screening=False).values(*fields):
        by_problem[row["problem_id"]].append(row)
    existing: dict[int, set[tuple[int, int]]] = defaultdict(set)
    for problem_id, a_id, b_id in Comparison.objects.filter(project=project).values_list(
        "problem_id", "solution_a_id", "solution_b_id"
    ):
        existing[problem_id].add((a_id, b_id))
    new = []
    for problem_id, solutions in by_problem.items():
        budget = per_problem - len(existing[problem_id])
        if budget <= 0 or len(solutions) < 2:
            continue
        for a, b, reason in choose_pairs(solutions, per_problem=per_problem + len(existing[problem_id])):
            if (a["id"], b["id"]) in existing[problem_id]:
                continue
            if budget <= 0:
                break
            budget -= 1
            new.append(
                Comparison(
                    project=project,
                    problem_id=problem_id,
                    solution_a_id=a["id"],
                    solution_b_id=b["id"],
                    reason=reason,
                    priority=REASON_PRIORITY[reason] - _gap(a, b) / 10,
                )
            )
    Comparison.objects.bulk_create(new, ignore_conflicts=True)
    return len(new)
