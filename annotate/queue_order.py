"""Queue order before and beside the model: cold start, and the random control share.

Pure ordering policy (no writes), so the model loop uses it too (ml.services.scoring); it lives
beside the models rather than in annotate.services, which ml may not import.

Cold start: before any model has scored a project, the queue still uses what is known. Answers are
graded on import, and a graded-wrong answer means the solution has at least one wrong step, so it
is what the labels are most needed for (and, since annotators stop at the first -1, the cheapest
solution to label). Graded-wrong solutions come first, then ungraded, then graded-right ones, in
random order within each tier (never file order). The `random` strategy is random throughout, and
`answer_stratified` (model-free) uses its own order from the first claim, so a project's first
labels, and the first model's threshold, are not all from wrong answers.

Control share: a random `share` of solutions is queued as a control. Each control takes the
priority found at a uniformly random rank of the queue, so controls reach the head of the queue
(where claims are served) at the share's rate, and the controls that get labeled are a random
sample of the solutions. Their labels measure what random selection would have found
(`annotate.services.savings`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from annotate.models import QueueOrigin, Strategy
from prm800k.stratified import answer_stratified_priority

MODEL_FREE = frozenset({Strategy.RANDOM, Strategy.ANSWER_STRATIFIED})


def cold_start_priority(answer_correct: bool | None, strategy: str, rng: random.Random) -> float:
    u = rng.random()
    if strategy == Strategy.RANDOM:
        return u
    tier = 2.0 if answer_correct is False else 1.0 if answer_correct is None else 0.0
    return tier + u


def route_controls(priorities: Sequence[float], share: float, rng: random.Random) -> tuple[list[float], list[bool]]:
    """(priorities with a random `share` of them replaced by a randomly ranked value, is_control)."""
    pri = list(priorities)
    if share <= 0 or not pri:
        return pri, [False] * len(pri)
    ranked = sorted(pri)
    is_control = [rng.random() < share for _ in pri]
    for i, c in enumerate(is_control):
        if c:
            pri[i] = ranked[rng.randrange(len(ranked))]
    return pri, is_control


def cold_start_queue(
    answers: Sequence[bool | None],
    *,
    strategy: str,
    control_share: float,
    lengths: Sequence[int] | None = None,
    rng: random.Random | None = None,
) -> list[tuple[float, str]]:
    """(priority, Solution.strategy) for newly imported solutions of a project with no model yet
    (`lengths`: their step counts, which the answer-stratified order weighs by)."""
    rng = rng or random.SystemRandom()
    if strategy == Strategy.ANSWER_STRATIFIED:
        steps = lengths if lengths is not None else [1] * len(answers)
        generator = np.random.default_rng(rng.getrandbits(64))
        pri = [float(p) for p in answer_stratified_priority(list(answers), steps, generator)]
    else:
        pri = [cold_start_priority(a, strategy, rng) for a in answers]
    share = 0.0 if strategy == Strategy.RANDOM else control_share
    pri, ctrl = route_controls(pri, share, rng)
    # a model-free strategy's order is already its own: the queue says so, not "cold start"
    origin = strategy if strategy in MODEL_FREE else QueueOrigin.COLD_START
    return [(p, QueueOrigin.CONTROL if c else origin) for p, c in zip(pri, ctrl, strict=True)]
