"""Turn labeled solutions into step examples (TRL `tokenize_row` in spirit: one function, one solution).

A `StepExample` is one rated step in its context: the problem and the main-line steps before it.
Ratings follow PRM800K: +1 good, 0 neutral (fine but no progress), -1 bad.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from prm800k.labels import main_line_completion


@dataclass(frozen=True, slots=True)
class StepExample:
    problem: str
    previous: tuple[str, ...]  # main-line steps before this one
    step: str
    target: int | None  # -1, 0, +1; None for an unlabeled step that is only scored
    solution_id: str = ""
    problem_id: str = ""
    step_index: int = 0  # position in the solution (== len(previous))
    # True for the step that the solution itself contains at this position (the chosen completion,
    # or the first completion where the labeler stopped); False for rated alternatives. First-error
    # metrics read the path; training uses every rated completion.
    on_path: bool = True
    # Automatic (Monte Carlo) labels: used for training only, never held out, so held-out metrics
    # stay measured on human labels (see split_by_problem).
    train_only: bool = False
    # The solution's final answer as graded on import (None: ungraded); a PRM input when
    # PRMConfig.answer_input is on (ml.prm.answer_input).
    answer_correct: bool | None = None

    @property
    def key(self) -> str:
        return step_key(self.problem, self.previous, self.step)


def step_key(problem: str, previous: Sequence[str], step: str) -> str:
    """Stable identity of a step in context; features are cached under it (steps never change)."""
    h = hashlib.sha1(problem.encode("utf-8"))
    for p in previous:
        h.update(b"\x1e")
        h.update(p.encode("utf-8"))
    h.update(b"\x1f")
    h.update(step.encode("utf-8"))
    return h.hexdigest()


def _problem_text(record: dict) -> str:
    return (record.get("question") or {}).get("problem") or ""


def examples_from_record(
    record: dict, *, solution_id: str = "", problem_id: str = "", answer_correct: bool | None = None
) -> list[StepExample]:
    """Every rated completion of one PRM800K record becomes an example (as PRM800K trains its PRM).

    Context of step i = problem + the main line before it: at each earlier step the chosen
    completion's text, or the human completion's text when `chosen_completion` is null. The main
    line ends at a step with neither (found_error / give_up). Null ratings are skipped; a rated
    human completion is an example too (PRM800K leaves them unrated, so usually none).
    """
    problem = _problem_text(record)
    problem_id = problem_id or hashlib.sha1(problem.encode("utf-8")).hexdigest()[:16]
    if not solution_id:
        solution_id = f"{record.get('labeler', '')}:{record.get('timestamp', '')}:{problem_id}"
    out: list[StepExample] = []
    previous: list[str] = []
    path_open = True
    for i, step in enumerate((record.get("label") or {}).get("steps") or []):
        completions = step.get("completions") or []
        chosen = step.get("chosen_completion")
        human = step.get("human_completion")
        prev = tuple(previous)
        # The solution's own step here: the chosen one, else the first completion (the pre-generated
        # step in phase 2, rated where the labeler stopped), as the app reads it (prm800k.labels).
        main = main_line_completion(step)
        for c in completions:
            if c.get("rating") is None:
                continue
            out.append(
                StepExample(
                    problem=problem,
                    previous=prev,
                    step=c.get("text") or "",
                    target=int(c["rating"]),
                    solution_id=solution_id,
                    problem_id=problem_id,
                    step_index=i,
                    on_path=path_open and c is main,
                    answer_correct=answer_correct,
                )
            )
        if human is not None and human.get("rating") is not None:
            out.append(
                StepExample(
                    problem=problem,
                    previous=prev,
                    step=human.get("text") or "",
                    target=int(human["rating"]),
                    solution_id=solution_id,
                    problem_id=problem_id,
                    step_index=i,
                    on_path=False,
                    answer_correct=answer_correct,
                )
            )
        if chosen is not None and 0 <= chosen < len(completions):
            previous.append(completions[chosen].get("text") or "")
        elif human is not None:
            previous.append(human.get("text") or "")
            path_open = False  # the model's own solution was replaced here
        else:
            break  # the main line ends (found_error, give_up)
    return out


def examples_from_steps(
    problem: str,
    steps: Sequence[str],
    first_error_index: int,
    *,
    solution_id: str = "",
    problem_id: str = "",
    answer_correct: bool | None = None,
) -> list[StepExample]:
    """Oracle labels from a first-error index (ProcessBench, MR-Ben).

    Steps before the error are +1, the error is -1, later steps are not rated (PRM800K phase 2
    stops at the first -1). `first_error_index == -1` means no error: every step is +1.
    """
    if first_error_index >= len(steps):
        raise ValueError(f"first_error_index {first_error_index} out of range for {len(steps)} steps")
    problem_id = problem_id or hashlib.sha1(problem.encode("utf-8")).hexdigest()[:16]
    last = len(steps) - 1 if first_error_index < 0 else first_error_index
    return [
        StepExample(
            problem=problem,
            previous=tuple(steps[:i]),
            step=steps[i],
            target=-1 if i == first_error_index else 1,
            solution_id=solution_id,
            problem_id=problem_id,
            step_index=i,
            on_path=True,
            answer_correct=answer_correct,
        )
        for i in range(last + 1)
    ]


def unlabeled_steps(
    problem: str,
    steps: Sequence[str],
    *,
    solution_id: str = "",
    problem_id: str = "",
    answer_correct: bool | None = None,
) -> list[StepExample]:
    """All steps of a solution, unrated, for scoring."""
    return [
        StepExample(problem, tuple(steps[:i]), s, None, solution_id, problem_id, i, True, answer_correct=answer_correct)
        for i, s in enumerate(steps)
    ]


def path_first_error(examples: Sequence[StepExample]) -> dict[str, tuple[list[StepExample], int]]:
    """Group path examples by solution: (ordered path steps up to the first -1, first error position
    in that path or -1). A step without a rated example (a trace's observation, shown but not rated)
    leaves a gap the path steps over; `path[fe].step_index` is the error's index in the solution."""
    by_sol: dict[str, list[StepExample]] = {}
    for e in examples:
        if e.on_path and e.target is not None:
            by_sol.setdefault(e.solution_id, []).append(e)
    out = {}
    for sid, exs in by_sol.items():
        exs.sort(key=lambda e: e.step_index)
        path, fe = [], -1
        for pos, e in enumerate(exs):
            if pos and e.step_index == exs[pos - 1].step_index:
                break  # two rated main-line completions at one step: not a single path
            path.append(e)
            if e.target == -1:
                fe = pos
                break
        if path:
            out[sid] = (path, fe)
    return out
