"""TRL preference rows from pairwise comparisons (no Django).

A row is TRL's implicit-prompt-free preference format, `{"prompt", "chosen", "rejected"}`, each
completion the solution's steps joined by newlines, plus `margin`: TRL's RewardTrainer (trl 1.13)
reads an optional `margin` column and subtracts it inside the Bradley-Terry loss, so a "much
better" answer asks for a wider reward gap than a "slightly better" one. A tie has margin 0 and
its sides in pair order (A as chosen); it is exported only on request.

The prompt is the problem followed by one newline: TRL's RewardTrainer tokenizes `prompt + chosen`
as one text with nothing between them.
"""

from __future__ import annotations

from typing import Any

# strength 1 (slightly), 2 (clearly), 3 (much better) -> margin
MARGINS = {1: 1.0, 2: 2.0, 3: 3.0}


def completion_text(steps: list[str]) -> str:
    return "\n".join(steps)


def preference_row(
    *, prompt: str, steps_a: list[str], steps_b: list[str], preferred: str, strength: int
) -> dict[str, Any]:
    """One row for a preference `A`, `B` or `tie` between the sides a and b."""
    a, b = completion_text(steps_a), completion_text(steps_b)
    if preferred == "B":
        a, b = b, a
    margin = 0.0 if preferred == "tie" else MARGINS[strength]
    return {"prompt": prompt + "\n", "chosen": a, "rejected": b, "margin": margin}
