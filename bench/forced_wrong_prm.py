"""The app's PRM reading a graded-wrong answer over its stratum's threshold, or at its most probable
first error (PRMConfig.forced_wrong): held-out first-error F1 after training on N labeled solutions
drawn at random, on the sets whose answers are graded (ProcessBench gsm8k, math, olympiadbench;
MR-Ben). Writes bench/results/forced_wrong_prm.md.

    .venv/bin/python bench/forced_wrong_prm.py [--sets gsm8k,math,olympiadbench,mrben] [--seeds 3]

Splits as bench/warm_start_prm.py: development (25% of the non-vault problems evaluated) and the
vault (ml.prm.active_sim.in_vault). The choice was made on the simulation's development split
(bench/results/simulation_notes.md, session 17) before this ran. The model is the same in both arms
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
        switch="forced_wrong",
        arm_names=("threshold", "most probable"),
        out="forced_wrong_prm.md",
        title="The app's PRM reading a graded-wrong answer over a threshold and at its most probable first "
        "error (bench/forced_wrong_prm.py)",
        what="a graded-wrong solution's first error is the first step over its stratum's threshold, or its "
        "most probable first error read on its whole chain (`ml/prm/metrics.py` `first_error_map`); the "
        "right and ungraded strata keep their thresholds, chosen jointly.",
        note=" Both arms train with the threshold pool the app reads (every step of a random sample of "
        "2,000 pool solutions and of each labeled one; session 17).",
    )
