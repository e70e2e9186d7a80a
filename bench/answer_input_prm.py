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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from warm_start_prm import compare_arms, parse_args, write_table  # noqa: E402

from ml.prm.config import PRMConfig  # noqa: E402
from ml.prm.feature_rows import FeatureCache  # noqa: E402
from ml.prm.featurizers import make_featurizer  # noqa: E402


def main() -> None:
    sets, seeds = parse_args()
    t0 = time.perf_counter()
    cache = FeatureCache(make_featurizer(PRMConfig()))
    arms = {
        "without": lambda seed: PRMConfig(seed=seed, answer_input=False),
        "with": lambda seed: PRMConfig(seed=seed, answer_input=True),
    }
    rows = compare_arms(sets, seeds, cache, arms)
    write_table(
        ROOT / "bench" / "results" / "answer_input_prm.md",
        "The app's PRM without and with the graded answer as an input (bench/answer_input_prm.py)",
        "`PRMConfig()` with `answer_input` off and on (the default): the solution's graded final answer as four "
        "side columns of the head (`ml/prm/answer_input.py`). Held-out first-error F1 and AUROC(-1), mean of "
        f"{seeds} seeds (difference: mean, and the smallest and largest over seeds); N = labeled solutions "
        "drawn at random from the pool, labels as an annotator gives them (up to the first -1). Evaluated "
        "solutions are scored with their graded answers, as the app scores an open solution. Took "
        f"{time.perf_counter() - t0:.0f} s on this 2-core machine.",
        ("without", "with"),
        rows,
    )


if __name__ == "__main__":
    main()
