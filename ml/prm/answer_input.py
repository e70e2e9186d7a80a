"""The solution's graded final answer as a PRM input (`PRMConfig.answer_input`).

Every imported solution's final answer is graded against the problem's reference answer, and
whether a solution holds an error at all is half of first-error F1 (the error-free solutions).
A multiple-instance loss on the grade taught the head what wrong solutions look like overall
instead of where their error is (bench/results/simulation_notes.md), so the grade goes in as
four side columns instead: answer wrong, answer right, and each times the step's relative
position (capped at POSITION_CAP steps), so a wrong answer can raise P(-1) later in a solution
more than at its start. An ungraded solution (no reference answer, a best-of-N candidate, a
PRM800K record) has all four at zero, so the head's own features decide alone there.

The columns are not stored with the step features (`ml.prm.feature_store`): a step's text never
changes, its solution's grade may be re-run, and four numbers are computed in microseconds.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

ANSWER_DIM = 4
POSITION_CAP = 16
# the graded-answer strata that get a first-error threshold each (`ml.prm.train`, `thresholds_by_grade`):
# the grade says most of whether a solution holds an error, so how high its first error runs differs too
GRADE_STRATA = {False: "wrong", True: "right", None: "ungraded"}


def grade_codes(answer_correct: Sequence[bool | None]) -> np.ndarray:
    """0 wrong, 1 right, -1 ungraded, as int8."""
    return np.fromiter(
        (-1 if a is None else int(bool(a)) for a in answer_correct), dtype=np.int8, count=len(answer_correct)
    )


def answer_block(codes: np.ndarray, step_index: np.ndarray) -> np.ndarray:
    """(n, ANSWER_DIM) float32 side columns for steps with grade `codes` at `step_index`."""
    codes = np.asarray(codes)
    rel = np.minimum(np.asarray(step_index, dtype=np.float32), POSITION_CAP) / POSITION_CAP
    wrong, right = (codes == 0).astype(np.float32), (codes == 1).astype(np.float32)
    return np.stack([wrong, right, wrong * rel, right * rel], axis=1)


def answer_block_for_examples(examples) -> np.ndarray:
    """Side columns of StepExamples (their `answer_correct` and `step_index`)."""
    return answer_block(
        grade_codes([e.answer_correct for e in examples]),
        np.fromiter((e.step_index for e in examples), dtype=np.float32, count=len(examples)),
    )


def positions_within(solution_id: np.ndarray) -> np.ndarray:
    """Each step's position in its solution, for steps laid out solution by solution in order."""
    solution_id = np.asarray(solution_id)
    n = len(solution_id)
    if not n:
        return np.zeros(0, np.int64)
    starts = np.flatnonzero(np.r_[True, solution_id[1:] != solution_id[:-1]])
    first = np.repeat(starts, np.diff(np.r_[starts, n]))
    return np.arange(n) - first
