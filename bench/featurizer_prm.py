"""The app's PRM with its default featurizer (hashed n-grams) and with MiniLM embeddings beside them
(`PRMConfig(featurizer="minilm_hashed")`): held-out first-error F1 and AUROC(-1) after training on
N labeled solutions drawn at random, on the sets whose answers are graded. Same splits, draws and
threshold pools as bench/config_switch_prm.py; only the step features differ. Writes
bench/results/featurizer_prm.md.

    .venv/bin/python bench/featurizer_prm.py [--sets gsm8k,math,olympiadbench,mrben] [--seeds 3]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from warm_start_prm import POOL_NOTE, arm_rows, parse_args, run_set, write_table  # noqa: E402

from ml.prm.config import PRMConfig  # noqa: E402
from ml.prm.feature_rows import FeatureCache  # noqa: E402
from ml.prm.featurizers import make_featurizer  # noqa: E402

ARMS = ("hashed_ngram", "minilm_hashed")


def main() -> None:
    sets, seeds = parse_args()
    t0 = time.perf_counter()
    # one cache per featurizer: a cache holds one featurizer's rows
    caches = {arm: FeatureCache(make_featurizer(PRMConfig(featurizer=arm))) for arm in ARMS}
    rows = []
    for split in ("dev", "vault"):
        for name in sets:
            res = {}
            for arm in ARMS:
                res.update(
                    run_set(
                        name, seeds, caches[arm], split, {arm: lambda seed, a=arm: PRMConfig(seed=seed, featurizer=a)}
                    )
                )
            rows += arm_rows(split, name, res, *ARMS)
    write_table(
        ROOT / "bench" / "results" / "featurizer_prm.md",
        "The app's PRM with hashed n-grams and with MiniLM embeddings beside them (bench/featurizer_prm.py)",
        f"`PRMConfig(featurizer=...)`, `hashed_ngram` (the default) and `minilm_hashed` (the same hashed "
        "columns with MiniLM embeddings of the step, the problem and the previous step beside them, "
        "`ml/prm/featurizers_dense.py`), everything else the default. Held-out first-error F1 and "
        f"AUROC(-1), mean of {seeds} seeds (difference: mean, and the smallest and largest over seeds); "
        "N = labeled solutions drawn at random from the pool, labels as an annotator gives them (up to "
        "the first -1); the same draws for both. "
        f"{POOL_NOTE} Took {time.perf_counter() - t0:.0f} s on this 2-core machine, MiniLM's embedding included.",
        ARMS,
        rows,
    )


if __name__ == "__main__":
    main()
