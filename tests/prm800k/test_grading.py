"""Grading with PRM800K's rules: the verdict table, and a time limit that holds in any thread.

VERDICTS lists (ground truth, answer, the verdict openai/prm800k's grader.py gives, ours). The
PRM800K column was produced by running that grader (commit 00811d6, pylatexenc 2.11, sympy 1.14);
the README's grading section shows the same table. Ours differs in two rows, both where PRM800K's
LaTeX-to-text step misreads the LaTeX (see DIFFERENCES).
"""

import threading
import time

import pytest

from prm800k.grading import grade_answer, grade_with, should_allow_sympy
from prm800k.sympy_process import SympyProcess, Undecided

FIVE_THOUSAND_ONES = "1" * 5000

# (ground truth, answer, PRM800K's verdict, ours)
VERDICTS = [
    (r"\frac{14}{3}", r"\frac{28}{6}", False, False),  # unreduced fraction: wrong on purpose
    (r"\frac{14}{3}", r"\frac{14}{3}", True, True),
    (r"\frac{14}{3}", r"\dfrac{14}{3}", True, True),
    (r"\frac{14}{3}", "14/3", True, True),
    (r"\frac{14}{3}", r"4\frac{2}{3}", True, True),  # a mixed number
    (r"\frac{14}{3}", "4.6667", False, False),
    (r"\frac{1}{2}", "0.5", True, True),
    (r"\frac{7}{2}", "3.5", True, True),
    (r"\frac12", r"\frac{1}{2}", True, True),
    (r"\cot x", r"\frac{1}{\sin x \cos x} - \tan x", False, False),  # too many letters for sympy
    (r"(x+1)^{3000}", r"x^{3000}+1", False, False),  # a big exponent: never given to sympy
    ("10", "10.0", True, True),
    ("10", r"\text{10}", True, True),
    ("5", r"5\text{ cm}", True, True),
    ("5", r"5 \text{cm}", True, True),
    ("90", r"90^\circ", True, True),
    ("50", r"50\%", True, True),
    ("5", r"\$5.00", True, True),
    ("1000", "1,000", True, True),
    ("1000000", r"1,\!000,\!000", True, True),
    ("5", "x = 5", True, True),
    (r"2\sqrt{2}", r"\sqrt{8}", True, True),
    (r"\frac{\sqrt{3}}{2}", r"\frac{\sqrt3}{2}", True, True),
    (r"\frac{\pi}{2}", r"\frac{1}{2}\pi", True, True),
    (r"3\pi", "3.14", False, False),
    ("[2,5)", "[2,5]", False, False),  # interval brackets must match
    ("(1,2)", "(1, 2)", True, True),
    ("(1,2)", "(2,1)", False, False),
    ("1,2", "2,1", False, False),
    (r"\text{(C)}", "C", True, True),
    (r"\text{Monday}", "monday", True, True),
    ("x^2+2x+1", "(x+1)^2", True, True),
    ("2x+2", "2(x+1)", True, True),
    ("6", r"\frac{12}{2}", False, False),  # an integer answer must be an integer
    (r"-\frac{1}{2}", r"\frac{-1}{2}", True, True),
    (r"\frac{1+\sqrt{5}}{2}", r"\frac{\sqrt{5}+1}{2}", False, True),  # see DIFFERENCES
    (r"\cot x", "x", True, False),  # see DIFFERENCES
    ("4", "7", False, False),
    (FIVE_THOUSAND_ONES, FIVE_THOUSAND_ONES, True, True),
    (FIVE_THOUSAND_ONES, FIVE_THOUSAND_ONES[:-1] + "2", False, False),
]
DIFFERENCES = {
    # PRM800K's converter writes \frac{a+b}{c} as `a+b/c`, so the two sides read as 1+sqrt(5)/2 and
    # sqrt(5)+1/2; ours keeps the fraction's parts together: (1+sqrt(5))/2 both times.
    (r"\frac{1+\sqrt{5}}{2}", r"\frac{\sqrt{5}+1}{2}"),
    # PRM800K's converter drops the unknown macro \cot, leaving `x`; ours keeps the function name.
    (r"\cot x", "x"),
}


@pytest.mark.parametrize(("truth", "answer", "prm800k", "ours"), VERDICTS, ids=lambda v: str(v)[:24])
def test_verdict_table(truth, answer, prm800k, ours):
    assert grade_answer(truth, answer) is ours
    assert (prm800k == ours) == ((truth, answer) not in DIFFERENCES)


def test_missing_answer_or_ground_truth_is_ungraded():
    assert grade_answer(None, "4") is None and grade_answer("4", "") is None and grade_answer(" ", "4") is None


def test_sympy_only_sees_simple_expressions():
    asked: list[tuple[str, str]] = []

    def spy(a: str, b: str) -> bool:
        asked.append((a, b))
        return True

    for truth, answer in [(r"(x+1)^{3000}", r"x^{3000}+1"), (r"\cot x", r"\frac{1}{\sin x\cos x}-\tan x")]:
        assert grade_with(truth, answer, sympy_equal=spy) is False
    assert asked == []
    assert not should_allow_sympy("(x^3000+1)-((x+1)^3000)") and should_allow_sympy("(x^2+2x+1)-((x+1)^2)")


def test_symbolic_off_leaves_what_needs_sympy_ungraded():
    assert grade_answer("x^2+2x+1", "(x+1)^2", symbolic=False) is None
    assert grade_answer(r"\frac{14}{3}", r"\frac{28}{6}", symbolic=False) is False


def test_time_limit_holds_off_the_main_thread():
    """Issue 12: the limit used SIGALRM, so off the main thread sympy ran as long as it liked (~20 s)."""
    checker = SympyProcess(timeout_s=1.0)
    assert checker.equal("2", "2")  # started (its start-up has its own limit)
    outcome: dict[str, object] = {}

    def slow() -> None:
        started = time.monotonic()
        try:
            outcome["verdict"] = checker.equal("(x+1)^3000", "x^3000+1")
        except Undecided:
            outcome["verdict"] = "undecided"
        outcome["seconds"] = time.monotonic() - started

    thread = threading.Thread(target=slow)
    thread.start()
    thread.join(timeout=30)
    assert outcome["verdict"] == "undecided" and outcome["seconds"] < 3
    assert checker.equal("x+x", "2x") and checker.restarts == 2  # a fresh child took over
    checker.close()


def test_a_slow_answer_is_ungraded_not_wrong_and_grading_never_raises():
    started = time.monotonic()
    verdict = []
    thread = threading.Thread(target=lambda: verdict.append(grade_answer("2.5", "10000000!/7")))
    thread.start()
    thread.join(timeout=60)
    assert verdict == [None] and time.monotonic() - started < 20
