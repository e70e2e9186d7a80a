"""Bradley-Terry reward model on real pairs: two solutions of one ProcessBench problem, one with a
correct final answer and one wrong (the expert-checked `final_answer_correct`); the right one is
preferred. Five folds by problem, so every pair is scored once by a model that never saw its
problem. Writes bench/results/reward.{json,md}.

    .venv/bin/python bench/bench_reward.py [--data ../shared/data/processbench]
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from ml.prm.metrics import wilson_interval  # noqa: E402
from ml.prm.reward import PairExample, RewardConfig, RewardModel, train_reward_model  # noqa: E402

SPLITS = ("gsm8k", "math", "olympiadbench")


def real_pairs(data: Path, split: str, seed: int = 0) -> list[PairExample]:
    """Every (right, wrong) pair of solutions of one problem, in a random side order."""
    by_problem: dict[str, list[dict]] = defaultdict(list)
    for record in json.loads((data / f"{split}.json").read_text()):
        by_problem[record["problem"]].append(record)
    rng = random.Random(seed)
    pairs = []
    for problem, records in by_problem.items():
        right = [r for r in records if r["final_answer_correct"]]
        wrong = [r for r in records if not r["final_answer_correct"]]
        for good, bad in itertools.product(right, wrong):
            if rng.random() < 0.5:
                pairs.append(PairExample(problem, good["steps"], bad["steps"], "A"))
            else:
                pairs.append(PairExample(problem, bad["steps"], good["steps"], "B"))
    return pairs


def cross_validated_accuracy(pairs: list[PairExample], folds: int = 5, seed: int = 0) -> dict:
    problems = sorted({p.problem for p in pairs})
    random.Random(seed).shuffle(problems)
    fold_of = {problem: i % folds for i, problem in enumerate(problems)}
    right = 0
    for fold in range(folds):
        train = [p for p in pairs if fold_of[p.problem] != fold]
        test = [p for p in pairs if fold_of[p.problem] == fold]
        if not test or len(train) < 2:
            continue
        model = RewardModel(train_reward_model(train, RewardConfig(heldout_fraction=0.2, seed=seed)))
        ra = model.rewards([(p.problem, p.steps_a) for p in test])
        rb = model.rewards([(p.problem, p.steps_b) for p in test])
        right += sum(int((a > b) == (p.preferred == "A")) for a, b, p in zip(ra, rb, test, strict=True))
    n = len(pairs)
    return {
        "pairs": n,
        "problems": len(problems),
        "accuracy": right / n if n else None,
        "ci95": wilson_interval(right, n),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "processbench")
    args = parser.parse_args()
    if not args.data.is_dir():
        sys.exit(f"{args.data}: no ProcessBench data here")
    torch.set_num_threads(1)
    results = {}
    pooled: list[PairExample] = []
    for split in SPLITS:
        pairs = real_pairs(args.data, split)
        pooled += pairs
        t0 = time.perf_counter()
        results[split] = {**cross_validated_accuracy(pairs), "seconds": round(time.perf_counter() - t0, 1)}
        print(split, results[split], flush=True)
    t0 = time.perf_counter()
    results["all"] = {**cross_validated_accuracy(pooled), "seconds": round(time.perf_counter() - t0, 1)}
    print("all", results["all"], flush=True)
    out = ROOT / "bench" / "results"
    (out / "reward.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = [
        "# Bradley-Terry reward model on real pairs (ProcessBench)",
        "",
        "Pairs: two solutions of one problem, one with a correct final answer and one wrong (expert-checked",
        "`final_answer_correct`); the right one is the preferred side. Accuracy: share of pairs whose right",
        "solution gets the higher reward from a model trained on the other folds (5 folds by problem, so no",
        "problem is seen in training). Model: `ml.prm.reward` defaults (linear reward over hashed word",
        "n-grams of the whole solution, full-batch SGD). Chance is 0.5.",
        "",
        "| split | problems | pairs | held-out pairwise accuracy | 95% CI | seconds |",
        "|---|---|---|---|---|---|",
    ]
    for name, row in results.items():
        ci = row["ci95"] or [None, None]
        acc = f"{row['accuracy']:.3f}" if row["accuracy"] is not None else "-"
        lines.append(
            f"| {name} | {row['problems']} | {row['pairs']} | {acc} | {ci[0]:.3f}-{ci[1]:.3f} | {row['seconds']} |"
        )
    (out / "reward.md").write_text("\n".join(lines) + "\n")
    print("wrote bench/results/reward.md")


if __name__ == "__main__":
    main()
