"""Grading a final answer against the ground truth with PRM800K's rules (openai/prm800k grader.py).

Our own implementation of that grader's documented behaviour:

1. Correct when both answers are equal after MATH's string normalisation, or after PRM800K's
   (units, `\\text`, `\\dfrac`, thousands separators, LaTeX read as plain text, case).
2. Tuples and intervals are compared element by element; brackets must match (`[2,5)` is not
   `[2,5]`) and so must the number of elements.
3. Two plain fractions must be written the same: `28/6` is wrong for `14/3`, on purpose (PRM800K
   rejects unreduced fractions). An integer only matches an integer, strictly (no simplifying).
4. Otherwise sympy decides, only for simple expressions: at most two distinct letters, no `^{`,
   `^(`, stacked or multi-digit exponents. Anything else is wrong. So `x^{3000}+1` against
   `(x+1)^{3000}` is wrong without running sympy, and `\\frac{1}{\\sin x\\cos x}-\\tan x` is wrong
   for `\\cot x` (too many letters) although it simplifies to it.

sympy runs in a child process (sympy_worker.py) that is killed after SYMBOLIC_TIMEOUT_S, so the
limit holds in any thread or worker; a timeout or crash leaves the answer ungraded (None), never
wrong and never an exception. Verdicts are cached per pair: solutions repeat their answers.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from functools import lru_cache

from prm800k.answer_normalize import (
    is_integral,
    is_plain_fraction,
    mathd_normalize,
    prm800k_normalize,
    strip_formatted_commas,
)
from prm800k.sympy_process import SympyProcess, Undecided

_BAD_SUBSTRINGS = ("^{", "^(")
_BAD_REGEXES = (re.compile(r"\^[0-9]+\^"), re.compile(r"\^[0-9][0-9]+"))
_TUPLE_CHARS = "()[]"


def grade_answer(ground_truth: str | None, answer: str | None, *, symbolic: bool = True) -> bool | None:
    """True or False by PRM800K's rules; None when either side is missing or sympy did not answer.

    symbolic=False decides by the rules alone: an answer that would need sympy stays None.
    """
    if not ground_truth or not answer or not ground_truth.strip() or not answer.strip():
        return None
    return _grade_cached(ground_truth, answer, symbolic)


@lru_cache(maxsize=200_000)
def _grade_cached(ground_truth: str, answer: str, symbolic: bool) -> bool | None:
    try:
        return grade_with(ground_truth, answer, sympy_equal=_default_checker().equal if symbolic else _no_sympy)
    except Undecided:
        return None
    except Exception:  # never fail an import because of one exotic answer
        return None


def _no_sympy(a: str, b: str) -> bool:
    raise Undecided("symbolic checking is off")


def grade_with(ground_truth: str, answer: str, *, sympy_equal: Callable[[str, str], bool]) -> bool:
    """PRM800K's decision; `sympy_equal` is only called for simple expressions (see should_allow_sympy)."""
    if mathd_normalize(ground_truth) == mathd_normalize(answer):
        return True
    truth, given = prm800k_normalize(ground_truth), prm800k_normalize(answer)
    if truth == given:
        return True
    if not given:
        return False
    truth_elements, given_elements = split_tuple(truth), split_tuple(given)
    if len(truth_elements) > 1 and (truth[0] != given[0] or truth[-1] != given[-1]):
        return False  # an interval's brackets differ
    if len(truth_elements) != len(given_elements):
        return False
    for a, b in zip(truth_elements, given_elements, strict=True):
        if is_plain_fraction(a) and is_plain_fraction(b):
            equal = a == b  # unreduced fractions are wrong: no simplifying here
        elif is_integral(a) != is_integral(b):
            equal = False  # an integer answer is matched strictly
        else:
            expression = f"({a})-({b})"
            equal = should_allow_sympy(expression) and sympy_equal(a, b)
        if not equal:
            return False
    return True


def split_tuple(expr: str) -> list[str]:
    """The elements of `(a,b)` / `[a,b)`; a single element otherwise (thousands separators kept whole)."""
    expr = strip_formatted_commas(expr)
    if not expr:
        return []
    inner = expr[1:-1]
    bracketed = len(expr) > 2 and expr[0] in _TUPLE_CHARS and expr[-1] in _TUPLE_CHARS
    if bracketed and not any(c in inner for c in _TUPLE_CHARS):
        return [element.strip() for element in inner.split(",")]
    return [expr]


def should_allow_sympy(expression: str) -> bool:
    """PRM800K's size check before sympy: few unknowns, no exponent that could explode."""
    letters = {ch for ch in expression.replace("sqrt", "").replace("frac", "") if ch.isalpha()}
    if len(letters) > 2:
        return False
    if any(bad in expression for bad in _BAD_SUBSTRINGS):
        return False
    return not any(pattern.search(expression) for pattern in _BAD_REGEXES)


_checker: SympyProcess | None = None
_checker_lock = threading.Lock()


def _default_checker() -> SympyProcess:
    global _checker
    with _checker_lock:
        if _checker is None:
            _checker = SympyProcess()
        return _checker
