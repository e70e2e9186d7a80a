"""The active-learning simulation on code and agent traces (issue 18), as on math: PRM800K records
with question.kind, the observation steps of a trace shown but unrated."""

import json
from pathlib import Path

from ml.prm.active_sim import simulate
from ml.prm.embeddings import EmbeddingStore
from ml.prm.head import HeadConfig
from ml.prm.sim_data import load_items
from tests.ml.trace_records import trace_record

CODE = Path(__file__).resolve().parents[1] / "annotate" / "fixtures" / "code_steps.jsonl"


def _run(items, tmp_path):
    return simulate(
        items,
        EmbeddingStore(tmp_path / "no-embeddings"),
        strategies=("random", "uncertainty"),
        seeds=(0,),
        rounds=1,
        round_share=0.25,
        seed_share=0.3,
        blocks=("hashed",),
        head=HeadConfig(k=2, steps=20),
    )


def _check(result):
    for strategy in ("random", "uncertainty"):
        (curve,) = result["per_seed"][strategy]
        assert len(curve) == 2
        assert 0 < curve[0]["labels"] < curve[1]["labels"]
        assert curve[0]["solutions"] < curve[1]["solutions"]
        assert all(0 <= p["first_error_f1"] <= 1 for p in curve)


def test_simulation_runs_on_the_code_file(tmp_path):
    items = load_items(CODE)
    assert len(items) == 14
    assert sum(it.first_error >= 0 for it in items) == 8
    assert all(it.answer_correct is None for it in items)  # code has no answer to grade
    _check(_run(items, tmp_path))


def test_simulation_runs_on_a_trace_file_with_unrated_observations(tmp_path):
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(trace_record(n, wrong=n % 3 == 0)) + "\n" for n in range(18)))
    items = load_items(path)
    assert len(items) == 18
    wrong = items[0]
    assert wrong.first_error == 3 and len(wrong.steps) == 4
    assert [e.step_index for e in wrong.labeled] == [0, 1, 3]  # the observation is no label
    _check(_run(items, tmp_path))
