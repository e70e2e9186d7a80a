"""The simulation's data loading: the PRM800K stepwise Parquet regrouped into PRM800K records."""

import pytest

from ml.prm.data import DATA
from ml.prm.sim_data import load_items, stepwise_records

needs_data = pytest.mark.skipif(not DATA.exists(), reason="../shared/data absent")


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
