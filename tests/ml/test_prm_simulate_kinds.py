"""The active-learning simulation on code and agent traces (issue 18), as on math: PRM800K records
with question.kind, the observation steps of a trace shown but unrated."""

import json
from pathlib import Path

from ml.prm.sim_data import load_items
from ml.prm.simulate import simulate, simulation_config

CODE = Path(__file__).resolve().parents[1] / "annotate" / "fixtures" / "code_steps.jsonl"


def _trace_record(n: int, wrong: bool) -> dict:
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


def _run(items):
    return simulate(
        items,
        strategies=("random", "uncertainty"),
        rounds=1,
        batch=3,
        seed_size=4,
        seeds=(0,),
        heldout_fraction=0.25,
        config=simulation_config(max_epochs=2, ensemble_size=2),
    )


def test_simulation_runs_on_the_code_file():
    items = load_items(CODE)
    assert len(items) == 14
    assert sum(it.first_error >= 0 for it in items) == 8
    assert all(it.answer_correct is None for it in items)  # code has no answer to grade
    result = _run(items)
    for strategy in ("random", "uncertainty"):
        curve = result["strategies"][strategy]["curve"]
        assert [p["solutions"] for p in curve] == [4, 7]
        assert 0 <= curve[-1]["metrics"]["first_error_f1"] <= 1


def test_simulation_runs_on_a_trace_file_with_unrated_observations(tmp_path):
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(_trace_record(n, wrong=n % 3 == 0)) + "\n" for n in range(18)))
    items = load_items(path)
    assert len(items) == 18
    wrong = items[0]
    assert wrong.first_error == 3 and len(wrong.steps) == 4
    assert [e.step_index for e in wrong.labeled] == [0, 1, 3]  # the observation is no label
    result = _run(items)
    assert result["strategies"]["uncertainty"]["curve"][-1]["labels"] > 0
