"""The app's PRM with and without the graded answer as an input (PRMConfig.answer_input): held-out
first-error F1 and AUROC(-1) after training on N labeled solutions drawn at random, on the sets
whose answers are graded (ProcessBench gsm8k, math, olympiadbench; MR-Ben). Writes
bench/results/answer_input_prm.md.

    .venv/bin/python bench/answer_input_prm.py [--sets gsm8k,math,olympiadbench,mrben] [--seeds 3]

Splits as bench/warm_start_prm.py: development (25% of the non-vault problems evaluated) and the
vault (ml.prm.active_sim.in_vault). The default was chosen on the development split of the
simulation (bench/results/simulation_notes.md, session 9) before this ran on the vault.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from warm_start_prm import config_switch_bench  # noqa: E402

if __name__ == "__main__":
    config_switch_bench(
        switch="answer_input",
        arm_names=("without", "with"),
        out="answer_input_prm.md",
        title="The app's PRM without and with the graded answer as an input (bench/answer_input_prm.py)",
        what="the solution's graded final answer as four side columns of the head (`ml/prm/answer_input.py`).",
    )
