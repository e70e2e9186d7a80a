"""The app's PRM with one first-error threshold against one per graded-answer stratum
(PRMConfig.grade_thresholds): held-out first-error F1 after training on N labeled solutions drawn at
random, on the sets whose answers are graded (ProcessBench gsm8k, math, olympiadbench; MR-Ben).
Writes bench/results/grade_thresholds_prm.md.

    .venv/bin/python bench/grade_thresholds_prm.py [--sets gsm8k,math,olympiadbench,mrben] [--seeds 3]

Splits as bench/warm_start_prm.py: development (25% of the non-vault problems evaluated) and the
vault (ml.prm.active_sim.in_vault). The choice was made on the simulation's development split
(bench/results/simulation_notes.md, session 16) before this ran. The model is the same in both arms
(same seed, same labels): only how its step P(-1) are read into a first error differs, so AUROC(-1)
is the same in both columns.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from warm_start_prm import config_switch_bench  # noqa: E402

if __name__ == "__main__":
    config_switch_bench(
        switch="grade_thresholds",
        arm_names=("one", "per grade"),
        out="grade_thresholds_prm.md",
        title="The app's PRM with one first-error threshold and with one per graded answer "
        "(bench/grade_thresholds_prm.py)",
        what="the first-error threshold chosen once for all training solutions, or once per graded-answer "
        "stratum (wrong, right, ungraded) jointly (`ml/prm/metrics.py` `choose_stratum_thresholds`).",
        note=" Both arms choose on the training solutions scored out of bag (session 16; before, in-sample "
        "scores set the threshold: this bench at commit 31435b7 measures that trainer).",
    )
