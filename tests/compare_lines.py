"""Import lines of a small compare project: two problems with right and wrong answers (three solutions of
2+2, two of 3*3) and a lonely problem with one solution, so nothing pairs with it. Shared by the compare
API tests and the TRL reward-trainer test."""

from __future__ import annotations


def _solution(problem: str, answer: str, steps: list[str], truth: str = "4") -> dict:
    return {"problem": problem, "ground_truth_answer": truth, "steps": steps, "answer": answer}


LINES = [
    _solution("What is 2+2?", "4", ["2+2 is 4.", "# Answer\n\n4"]),
    _solution("What is 2+2?", "5", ["2+2 is 5.", "# Answer\n\n5"]),
    _solution("What is 2+2?", "4", ["Two and two make four.", "# Answer\n\n4"]),
    _solution("What is $3 \\cdot 3$?", "9", ["$3 \\cdot 3 = 9$.", "# Answer\n\n9"], truth="9"),
    _solution("What is $3 \\cdot 3$?", "6", ["$3 \\cdot 3 = 6$.", "# Answer\n\n6"], truth="9"),
    _solution("Lonely problem", "1", ["One step."], truth="1"),
]
