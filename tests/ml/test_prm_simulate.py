"""The offline simulation: label-efficiency arithmetic by hand, and an end-to-end run on a slice of real data."""

import json
from pathlib import Path

import pytest

from ml.prm.sim_data import load_items, stepwise_records
from ml.prm.simulate import label_efficiency, labels_to_reach, plot_curves, simulate, simulation_config

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
needs_data = pytest.mark.skipif(not DATA.exists(), reason="../shared/data absent")


def _curve(points):
    return [{"labels": n, "metrics": {"first_error_f1": v}} for n, v in points]


def test_labels_to_reach_interpolates_and_efficiency_ratio():
    random = _curve([(100, 0.1), (200, 0.2), (300, 0.3), (400, 0.4)])
    fast = _curve([(100, 0.1), (200, 0.5), (300, 0.6)])
    never = _curve([(100, 0.1), (400, 0.3)])
    assert labels_to_reach(random, "first_error_f1", 0.4) == 400
    assert labels_to_reach(fast, "first_error_f1", 0.4) == pytest.approx(175)  # 100 + 0.3/0.4 * 100
    assert labels_to_reach(never, "first_error_f1", 0.4) is None
    eff = label_efficiency({"random": random, "fast": fast, "never": never}, "first_error_f1")
    assert eff == {"random": 1.0, "fast": pytest.approx(400 / 175), "never": None}


@needs_data
def test_simulation_end_to_end_on_processbench_slice(tmp_path):
    items = load_items(DATA / "processbench" / "gsm8k.json", limit=80)
    assert len(items) == 80
    labeled_counts = [it.n_labels for it in items]
    # oracle: steps up to and including the first error, or all steps when there is none
    assert all(
        n == (it.first_error + 1 if it.first_error >= 0 else len(it.steps))
        for n, it in zip(labeled_counts, items, strict=True)
    )
    res = simulate(
        items,
        strategies=("random", "uncertainty", "convincing_wrong", "mix"),
        rounds=2,
        batch=10,
        seed_size=10,
        seeds=(0, 1),
        config=simulation_config(max_epochs=3, ensemble_size=2),
    )
    assert set(res["strategies"]) == {"random", "uncertainty", "convincing_wrong", "mix"}
    for name, v in res["strategies"].items():
        curve = v["curve"]
        assert len(curve) == 3
        labels = [p["labels"] for p in curve]
        assert labels == sorted(labels) and labels[0] > 0
        assert [p["solutions"] for p in curve] == [10, 20, 30]
        m = curve[-1]["metrics"]
        assert 0 <= m["first_error_f1"] <= 1 and m["n_steps"] > 0
        assert len(v["per_seed"]) == 2
        if name == "random":
            assert v["label_efficiency_vs_random"] == 1.0
    # every strategy starts from the same seed set
    assert len({v["curve"][0]["labels"] for v in res["strategies"].values()}) == 1
    json.dumps(res)
    png = plot_curves(res, tmp_path / "curves.png")
    assert Path(png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@needs_data
def test_stepwise_parquet_regroups_into_records_with_neutral_labels():
    import pandas as pd

    df = pd.read_parquet(DATA / "prm800k-stepwise" / "phase1_test.stepwise-critic.parquet")
    recs = stepwise_records(df.iloc[:15])
    # the first 15 rows are the "Three pencils" record: same structure as the raw PRM800K record
    assert len(recs) == 1
    steps = recs[0]["label"]["steps"]
    assert [len(s["completions"]) for s in steps] == [1, 5, 1, 1, 1, 5]
    assert [s["chosen_completion"] for s in steps] == [0, None, 0, 0, 0, 4]
    assert steps[1]["human_completion"]["text"] == "We have $3p+e=1.24$ and $5p+e=1.82$."
    assert [c["rating"] for c in steps[5]["completions"]] == [0, 1, 1, 1, 1]
    items = load_items(DATA / "prm800k-stepwise" / "phase1_test.stepwise-critic.parquet")
    assert len(items) > 90
    targets = {e.target for it in items for e in it.labeled}
    assert targets == {-1, 0, 1}
    first = items[0]
    assert first.first_error == 1 and first.n_labels == 6  # stops after the main line's first -1 (step 1)
