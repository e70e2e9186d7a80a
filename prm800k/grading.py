"""Grading a solution's final answer against the problem's ground truth.

Most MATH answers are integers, decimals or simple fractions, so a normalizing fast path (in the
spirit of PRM800K's grader: strip LaTeX decoration, compare strings, then compare exact numbers)
decides them in microseconds. Everything else goes to math-verify, a maintained symbolic checker,
and verdicts are cached per (ground truth, answer) pair because solutions repeat answers.
"""

from __future__ import annotations

import logging
import re
import threading
from fractions import Fraction
from functools import lru_cache

SYMBOLIC_TIMEOUT_S = 5
# math-verify warns on every call without a timeout (worker threads); the verdict is what matters.
logging.getLogger("math_verify").setLevel(logging.ERROR)

_REMOVE = (
    r"\left",
    r"\right",
    r"\!",
    r"\,",
    r"\;",
    r"\:",
    r"\displaystyle",
    "^\\circ",
    "^{\\circ}",
    r"\%",
    "%",
    "$",
)
_TEXT_RE = re.compile(r"\\(?:text|textbf|mbox|mathrm)\{([^{}]*)\}")
_BOXED_RE = re.compile(r"\\boxed\{(.*)\}")
_FRAC_RE = re.compile(r"^(-?)\\[dt]?frac\{(-?\d+)\}\{(-?\d+)\}$")
_SHORT_FRAC_RE = re.compile(r"^(-?)\\[dt]?frac(\d)(\d)$")
_NUMBER_RE = re.compile(r"^-?(\d+(\.\d*)?|\.\d+)$")
_SLASH_RE = re.compile(r"^(-?\d+)/(-?\d+)$")
_THOUSANDS_RE = re.compile(r"^-?\d{1,3}(,\d{3})+(\.\d+)?$")


def normalize_answer(text: str) -> str:
    """A canonical string: no LaTeX spacing, units in \\text{}, dollar signs, or trailing dots."""
    answer = text.strip()
    boxed = _BOXED_RE.search(answer)
    if boxed:
        answer = boxed.group(1)
    for token in _REMOVE:
        answer = answer.replace(token, "")
    answer = _TEXT_RE.sub(r"\1", answer)
    answer = answer.replace("dfrac", "frac").replace("tfrac", "frac")
    answer = answer.replace(" ", "").rstrip(".")
    if answer.startswith("x=") or answer.startswith("y=") or answer.startswith("n="):
        answer = answer[2:]
    if _THOUSANDS_RE.match(answer):
        answer = answer.replace(",", "")
    return answer


def as_exact_number(answer: str) -> Fraction | None:
    """An exact rational for plain numbers and simple fractions, else None."""
    if _NUMBER_RE.match(answer):
        return Fraction(answer)
    for pattern in (_FRAC_RE, _SHORT_FRAC_RE):
        match = pattern.match(answer)
        if match:
            sign, num, den = match.groups()
            if int(den) == 0:
                return None
            value = Fraction(int(num), int(den))
            return -value if sign else value
    match = _SLASH_RE.match(answer)
    if match and int(match.group(2)) != 0:
        return Fraction(int(match.group(1)), int(match.group(2)))
    return None


@lru_cache(maxsize=200_000)
def grade_answer(ground_truth: str | None, answer: str | None) -> bool | None:
    """True or False when decidable; None when there is no answer or no ground truth."""
    if not ground_truth or not answer or not ground_truth.strip() or not answer.strip():
        return None
    truth, given = normalize_answer(ground_truth), normalize_answer(answer)
    if truth == given:
        return True
    truth_number, given_number = as_exact_number(truth), as_exact_number(given)
    if truth_number is not None and given_number is not None:
        return truth_number == given_number
    return _symbolic_equal(ground_truth, answer)


def _symbolic_equal(ground_truth: str, answer: str) -> bool:
    from math_verify import parse, verify  # imported lazily: it pulls in sympy and antlr

    # math-verify's timeouts use SIGALRM, which only works in the main thread.
    timeout = SYMBOLIC_TIMEOUT_S if threading.current_thread() is threading.main_thread() else None
    try:
        gold = parse(f"${ground_truth}$", parsing_timeout=timeout)
        target = parse(f"${answer}$", parsing_timeout=timeout)
        if not gold or not target:
            return False
        return bool(verify(gold, target, timeout_seconds=timeout))
    except Exception:  # a checker crash on exotic LaTeX means "not shown equal", never an import failure
        return False
