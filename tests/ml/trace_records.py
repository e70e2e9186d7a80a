"""PRM800K records of agent traces (step types thought, tool_call, observation, answer), shared by the
simulation and model-loop tests of trace projects."""

from __future__ import annotations


def trace_record(n: int, wrong: bool) -> dict:
    """A PRM800K record of an agent trace (thought, tool call, observation, answer); `wrong`: a wrong answer."""
    types = ["thought", "tool_call", "observation", "answer"]
    steps = [
        f"Task {n}: I need the sum of {n} and {n + 1}; I will use the calculator.",
        f'calc({{"expression": "{n} + {n + 1}"}})',
        f'{{"result": {2 * n + 1}}}',
        f"The sum is {2 * n + (2 if wrong else 1)}.",
    ]
    ratings = [1, 1, None, -1 if wrong else 1]
    label_steps = [
        {"completions": [{"text": t, "rating": r, "flagged": False}], "human_completion": None, "chosen_completion": 0}
        for t, r in zip(steps, ratings, strict=True)
    ]
    if wrong:
        label_steps[-1]["chosen_completion"] = None
        label_steps[-1]["completions"][0]["critique"] = "The tool returned a different sum."
    return {
        "labeler": "sim",
        "timestamp": f"2024-01-01T00:00:{n:02d}",
        "generation": None,
        "is_quality_control_question": False,
        "is_initial_screening_question": False,
        "question": {
            "problem": f"What is {n} + {n + 1}? Use the calculator tool.",
            "ground_truth_solution": None,
            "ground_truth_answer": str(2 * n + 1),
            "pre_generated_steps": steps,
            "pre_generated_answer": steps[-1],
            "pre_generated_verifier_score": None,
            "kind": "trace",
            "step_types": types,
        },
        "label": {"steps": label_steps, "total_time": 1000, "finish_reason": "found_error" if wrong else "solution"},
    }
