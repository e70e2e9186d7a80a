"""The active-learning simulation on code and agent traces (issue 18), as on math: PRM800K records
with question.kind, the observation steps of a trace shown but unrated."""

import json
from pathlib import Path

from ml.prm.sim_data import load_items
from ml.prm.simulate import simulate, simulation_config
from tests.ml.trace_records import trace_record

CODE = Path(__file__).resolve().parents[1] / "annotate" / "fixtures" / "code_steps.jsonl"


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
    path.write_text("".join(json.dumps(trace_record(n, wrong=n % 3 == 0)) + "\n" for n in range(18)))
    items = load_items(path)
    assert len(items) == 18
    wrong = items[0]
    assert wrong.first_error == 3 and len(wrong.steps) == 4
    assert [e.step_index for e in wrong.labeled] == [0, 1, 3]  # the observation is no label
    result = _run(items)
    assert result["strategies"]["uncertainty"]["curve"][-1]["labels"] > 0
