"""The app's default PRM against a reader with no PRM: held-out first-error F1 after training on N
labeled solutions drawn at random, beside the F1 of one constant first error per graded answer
fitted on the same N solutions (`ml/prm/floor.py`, what each run records as `grade_only_f1`), on
the sets whose answers are graded (ProcessBench gsm8k, math, olympiadbench; MR-Ben). Splits and
draws as bench/warm_start_prm.py. Writes bench/results/grade_only_prm.md.

    .venv/bin/python bench/grade_only_prm.py [--sets gsm8k,math,olympiadbench,mrben] [--seeds 3]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from warm_start_prm import GRADE_ONLY, POOL_NOTE, SIZES, parse_args, run_set  # noqa: E402

from ml.prm.config import PRMConfig  # noqa: E402
from ml.prm.feature_rows import FeatureCache  # noqa: E402
from ml.prm.featurizers import make_featurizer  # noqa: E402


def main() -> None:
    sets, seeds = parse_args()
    t0 = time.perf_counter()
    cache = FeatureCache(make_featurizer(PRMConfig()))
    rows = []
    for split in ("dev", "vault"):
        for name in sets:
            res = run_set(name, seeds, cache, split, {"PRM": lambda seed: PRMConfig(seed=seed)}, floor=True)
            for n in SIZES:
                if (n, "PRM") not in res:
                    continue
                prm, floor = np.array(res[(n, "PRM")], float), np.array(res[(n, GRADE_ONLY)], float)
                diff = prm[:, 0] - floor[:, 0]
                rows.append(
                    f"| {split} | {name} | {n} | {floor[:, 0].mean():.3f} | {prm[:, 0].mean():.3f} | "
                    f"{diff.mean():+.3f} ({diff.min():+.3f} to {diff.max():+.3f}) | {prm[:, 1].mean():.3f} |"
                )
                print(rows[-1], flush=True)
    md = [
        "# The app's PRM against the graded answer alone (bench/grade_only_prm.py)",
        "",
        "`PRMConfig()` trained on N labeled solutions drawn at random from the pool (labels as an annotator "
        "gives them, up to the first -1), and a reader with no PRM: one constant first error per graded answer "
        '("no error", or "first error at step k"), fitted on the same N solutions (`ml/prm/floor.py`; each '
        "training run records it as `grade_only_f1`). Held-out first-error F1, mean of "
        f"{seeds} seeds (difference: mean, and the smallest and largest over seeds), and the PRM's AUROC(-1). "
        "Evaluated solutions are scored with their graded answers, as the app scores an open solution. "
        f"{POOL_NOTE} Took {time.perf_counter() - t0:.0f} s on this 2-core machine.",
        "",
        "| split | set | N | F1 grade only (no PRM) | F1 PRM | PRM - grade only (range over seeds) | AUROC(-1) PRM |",
        "|---|---|---:|---:|---:|---:|---:|",
        *rows,
        "",
    ]
    (ROOT / "bench" / "results" / "grade_only_prm.md").write_text("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
