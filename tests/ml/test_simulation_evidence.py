"""The dashboard's words about each queue order come from the shipped simulation results: the
copy in the frontend is what `al_report.strategy_evidence` makes of bench/results/simulation_summary.json."""

import json
from pathlib import Path

from ml.prm.al_report import strategy_evidence, write_report

ROOT = Path(__file__).resolve().parents[2]
EVIDENCE = ROOT / "frontend" / "src" / "dashboard" / "simulation_evidence.json"


def test_the_dashboards_evidence_is_the_shipped_summary():
    summary = json.loads((ROOT / "bench" / "results" / "simulation_summary.json").read_text())
    seeds = len(
        json.loads((ROOT / "bench" / "results" / "simulation_runs" / "gsm8k.json").read_text())["meta"]["seeds"]
    )
    assert json.loads(EVIDENCE.read_text()) == strategy_evidence(summary, seeds)


def test_every_offered_order_but_random_has_a_row_per_set_and_split():
    evidence = json.loads(EVIDENCE.read_text())
    summary = json.loads((ROOT / "bench" / "results" / "simulation_summary.json").read_text())
    for strategy in ("answer_stratified", "uncertainty", "convincing_wrong", "value"):
        rows = evidence["strategies"][strategy]
        assert {(r["set"], r["split"]) for r in rows} == {
            (k.removesuffix("_vault"), "vault" if k.endswith("_vault") else "development") for k in summary
        }
        for r in rows:
            lo, hi = r["aulc_diff_ci"]
            assert lo <= r["aulc_diff"] + 1e-3 and r["aulc_diff"] <= hi + 1e-3, (strategy, r)


def test_the_report_writes_the_same_evidence(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "gsm8k.json").write_text((ROOT / "bench" / "results" / "simulation_runs" / "gsm8k.json").read_text())
    before = EVIDENCE.read_text()
    write_report(runs, tmp_path / "results", evidence=tmp_path / "evidence.json")
    written = json.loads((tmp_path / "evidence.json").read_text())
    shipped = json.loads(before)
    assert EVIDENCE.read_text() == before  # only the path it was given
    assert written["seeds"] == shipped["seeds"]
    for strategy, rows in written["strategies"].items():
        assert rows == [
            r for r in shipped["strategies"][strategy] if (r["set"], r["split"]) == ("gsm8k", "development")
        ]
