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

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from warm_start_prm import SIZES, evaluate, evaluation_and_pool  # noqa: E402

from ml.prm.config import PRMConfig  # noqa: E402
from ml.prm.data import load_dataset  # noqa: E402
from ml.prm.feature_rows import FeatureCache  # noqa: E402
from ml.prm.featurizers import make_featurizer  # noqa: E402
from ml.prm.train import build_prm, train_prm  # noqa: E402


def run_set(name: str, seeds: int, cache: FeatureCache, split: str) -> dict:
    items = load_dataset(name)
    out: dict = {}
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        ev, pool = evaluation_and_pool(items, split, rng)
        order = rng.permutation(len(pool))
        for n in SIZES:
            if n > len(pool):
                continue
            examples = [e for i in order[:n] for e in pool[i].labeled]
            for graded in (False, True):
                ckpt = train_prm(examples, PRMConfig(seed=seed, answer_input=graded), cache=cache)
                out.setdefault((n, graded), []).append(evaluate(build_prm(ckpt, cache=cache), ev))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="gsm8k,math,olympiadbench,mrben")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    t0 = time.perf_counter()
    cache = FeatureCache(make_featurizer(PRMConfig()))
    rows = []
    for split in ("dev", "vault"):
        for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
            res = run_set(name, args.seeds, cache, split)
            for n in SIZES:
                if (n, False) not in res:
                    continue
                blind, graded = np.array(res[(n, False)], float), np.array(res[(n, True)], float)
                diff = graded[:, 0] - blind[:, 0]
                rows.append(
                    f"| {split} | {name} | {n} | {blind[:, 0].mean():.3f} | {graded[:, 0].mean():.3f} | "
                    f"{diff.mean():+.3f} ({diff.min():+.3f} to {diff.max():+.3f}) | {blind[:, 1].mean():.3f} | "
                    f"{graded[:, 1].mean():.3f} |"
                )
                print(rows[-1], flush=True)
    md = [
        "# The app's PRM without and with the graded answer as an input (bench/answer_input_prm.py)",
        "",
        "`PRMConfig()` with `answer_input` off and on (the default): the solution's graded final answer as four "
        "side columns of the head (`ml/prm/answer_input.py`). Held-out first-error F1 and AUROC(-1), mean of "
        f"{args.seeds} seeds (difference: mean, and the smallest and largest over seeds); N = labeled solutions "
        "drawn at random from the pool, labels as an annotator gives them (up to the first -1). Evaluated "
        "solutions are scored with their graded answers, as the app scores an open solution. Took "
        f"{time.perf_counter() - t0:.0f} s on this 2-core machine.",
        "",
        "| split | set | N | F1 without | F1 with | difference (range over seeds) | AUROC without | AUROC with |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
    ]
    (ROOT / "bench" / "results" / "answer_input_prm.md").write_text("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
