"""The pure parts of automatic labeling: the prefix search, answer extraction, agreement counts."""

import math

import pytest

from autolabel.agreement import compare
from autolabel.rollouts import extract_answer, search


def _run(n: int, first_error: int | None, answer_correct: bool | None, mode: str) -> tuple[int | None, list[int]]:
    measured = {} if answer_correct is None else {n - 1: 1.0 if answer_correct else 0.0}
    probes = []
    while True:
        index, first_zero = search(n_steps=n, measured=measured, answer_correct=answer_correct, mode=mode)
        if index is None:
            return first_zero, probes
        assert index not in measured, "a prefix is never rolled out twice"
        probes.append(index)
        measured[index] = 0.0 if first_error is not None and index >= first_error else 0.5


@pytest.mark.parametrize("n", range(1, 14))
def test_binary_search_finds_the_same_first_zero_as_rolling_out_every_step(n: int) -> None:
    for first_error in [None, *range(n)]:
        for graded in (True, None) if first_error is None else (False, None):
            full, full_probes = _run(n, first_error, graded, "full")
            binary, binary_probes = _run(n, first_error, graded, "binary")
            assert binary == full == first_error
            assert len(full_probes) == n - (graded is not None)
            assert len(binary_probes) <= math.ceil(math.log2(n + 1))
            if graded is True:
                assert binary_probes == []  # a right final answer vouches for every prefix


def test_final_answers_are_read_from_the_usual_markers() -> None:
    assert extract_answer("so 6.\n# Answer\n\n6") == "6"
    assert extract_answer("Thus 2+3=5. The answer is: 5") == "5"
    assert extract_answer("The final answer is $\\frac{1}{2}$.") == "\\frac{1}{2}"
    assert extract_answer("hence \\boxed{x^{2}+1} and \\boxed{\\frac{3}{4}}") == "\\frac{3}{4}"
    assert extract_answer("no answer here") is None
    # an agent's trace ends with a ReAct "Final Answer:" line (was: no answer, so every rollout was wrong)
    assert extract_answer("Thought: I know it now.\nFinal Answer: 42") == "42"
    assert extract_answer("Observation: [3, 4]\nAnswer: $7$.") == "7"
    assert extract_answer("**Final Answer:** 12\n") == "12"
    assert extract_answer("My answer: maybe 3, or the answer: later") is None  # not a line of its own


def test_agreement_counts_against_the_human_first_error() -> None:
    # Same first error: a true positive; automatic `-` before it on a +1 step: a false positive.
    assert compare([1, 1, -1, -1], [1, 1, -1, None]) == {"tp": 1, "fp": 0, "fn": 0, "first_error_agree": 1}
    assert compare([1, -1, -1, -1], [1, 1, -1, None]) == {"tp": 1, "fp": 1, "fn": 0, "first_error_agree": 0}
    # Automatic `+` where the person found the error: a false negative.
    assert compare([1, 1, 1, -1], [1, 1, -1, None]) == {"tp": 0, "fp": 0, "fn": 1, "first_error_agree": 0}
    # No error for either: agreement; neutral human steps are left out.
    assert compare([1, 1], [1, 0]) == {"tp": 0, "fp": 0, "fn": 0, "first_error_agree": 1}
    assert compare([1, -1], [1, 0]) == {"tp": 0, "fp": 0, "fn": 0, "first_error_agree": 0}
