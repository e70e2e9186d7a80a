"""Bradley-Terry reward model on real pairs: two solutions of one problem, one graded right and one
wrong (ml.prm.graded: ProcessBench, MR-Ben math, PRM800K phase-1 answer steps); the right one is
preferred. Five folds by problem over all pairs, so every pair is scored once by models that never
saw its problem: in each fold a PRM is trained on the training problems' step labels (for the "prm"
features) and one reward model per feature set on the training problems' pairs. Accuracy with a
95% bootstrap interval over problems. Writes bench/results/reward.{json,md}.

    nice -n 15 .venv/bin/python bench/bench_reward.py [--data ../shared/data] [--folds 5]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from ml.prm.config import PRMConfig  # noqa: E402
from ml.prm.data import DATA as SHARED_DATA  # noqa: E402
from ml.prm.graded import right_wrong_pairs, shared_groups  # noqa: E402
from ml.prm.reward import PairExample, RewardConfig, RewardModel, train_reward_model  # noqa: E402
from ml.prm.reward_features import prm_features, prm_step_risk  # noqa: E402
from ml.prm.sim_data import load_items  # noqa: E402
from ml.prm.train import build_prm, train_prm  # noqa: E402
from prm800k.grading import grade_answer  # noqa: E402

# Feature sets compared; "ngrams" alone was the model before (chance on real pairs).
VARIANTS = {
    "ngrams": ("ngrams",),
    "shape": ("shape",),
    "prm": ("prm",),
    "shape+prm": ("shape", "prm"),
    "ngrams+shape": ("ngrams", "shape"),
    "ngrams+shape+prm": ("ngrams", "shape", "prm"),
}
STEP_FILES = (
    "processbench/gsm8k.json",
    "processbench/math.json",
    "processbench/olympiadbench.json",
    "mr-ben/math.json",
    "prm800k-stepwise/phase1_train_plus.stepwise-critic.parquet",
    "prm800k-stepwise/phase1_test.stepwise-critic.parquet",
)
PRM_CONFIG = PRMConfig(ensemble_size=2, max_epochs=8)


def cached_risk(prm):
    """The PRM's step risks, computed once per solution across the feature sets of a fold."""
    risk, memo = prm_step_risk(prm), {}

    def get(items):
        todo = [it for it in dict.fromkeys((p, tuple(s)) for p, s in items) if it not in memo]
        for it, r in zip(todo, risk(todo), strict=True):
            memo[it] = r
        return [memo[(p, tuple(s))] for p, s in items]

    return get


def bootstrap(hits: np.ndarray, problems: np.ndarray, rounds: int = 2000, seed: int = 0) -> list[float]:
    """95% percentile interval of accuracy, resampling problems (a problem's pairs are not independent)."""
    ids, inverse = np.unique(problems, return_inverse=True)
    right = np.bincount(inverse, weights=hits, minlength=len(ids))
    count = np.bincount(inverse, minlength=len(ids))
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(ids), size=(rounds, len(ids)))
    acc = right[draws].sum(1) / np.maximum(count[draws].sum(1), 1)
    return [float(np.percentile(acc, 2.5)), float(np.percentile(acc, 97.5))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "reward")
    args = parser.parse_args()
    torch.set_num_threads(1)
    t_start = time.perf_counter()
    groups = shared_groups(args.data)
    if not groups:
        sys.exit(f"{args.data}: no shared data here")
    pairs: list[PairExample] = []
    source_of: list[str] = []
    for source, by_problem in groups.items():
        found = right_wrong_pairs(by_problem)
        pairs += found
        source_of += [source] * len(found)
    # how far the labelers' rating of an answer step agrees with MATH-500's reference (phase-1 test)
    agreement = _rating_agreement(args.data)
    items = [it for f in STEP_FILES if (args.data / f).is_file() for it in load_items(args.data / f)]
    problems = sorted({p.problem for p in pairs})
    random.Random(0).shuffle(problems)
    fold_of = {problem: i % args.folds for i, problem in enumerate(problems)}
    scores: dict[str, np.ndarray] = {name: np.zeros(len(pairs)) for name in [*VARIANTS, "prm_product_rule"]}
    for fold in range(args.folds):
        t0 = time.perf_counter()
        test = [i for i, p in enumerate(pairs) if fold_of[p.problem] == fold]
        train = [pairs[i] for i, p in enumerate(pairs) if fold_of[p.problem] != fold]
        held = {pairs[i].problem for i in test}
        steps = [e for it in items if it.problem not in held for e in it.labeled if e.target is not None]
        risk = cached_risk(build_prm(train_prm(steps, PRM_CONFIG)))
        test_a = [(pairs[i].problem, pairs[i].steps_a) for i in test]
        test_b = [(pairs[i].problem, pairs[i].steps_b) for i in test]
        for name, features in VARIANTS.items():
            model = RewardModel(train_reward_model(train, RewardConfig(features=features), step_risk=risk))
            margin = model.rewards(test_a, step_risk=risk) - model.rewards(test_b, step_risk=risk)
            scores[name][test] = margin
        # no training at all: the solution whose PRM product is higher wins
        scores["prm_product_rule"][test] = [
            prm_features(a)[0] - prm_features(b)[0] for a, b in zip(risk(test_a), risk(test_b), strict=True)
        ]
        print(
            f"fold {fold}: {len(steps)} PRM steps, {len(train)} train / {len(test)} test pairs, "
            f"{time.perf_counter() - t0:.0f} s",
            flush=True,
        )
    a_better = np.asarray([p.preferred == "A" for p in pairs])
    problem_ids = np.asarray([p.problem for p in pairs])
    sources = np.asarray(source_of)
    results: dict = {"pairs": {}, "agreement_rating_vs_reference": agreement, "accuracy": {}}
    subsets = {**{s: sources == s for s in groups}, "all": np.ones(len(pairs), dtype=bool)}
    for subset, mask in subsets.items():
        results["pairs"][subset] = {"pairs": int(mask.sum()), "problems": len(set(problem_ids[mask]))}
    for name, margin in scores.items():
        hits = ((margin > 0) == a_better).astype(float)  # a tie (margin 0) counts as a miss unless B is right
        results["accuracy"][name] = {
            subset: {"accuracy": float(hits[mask].mean()), "ci95": bootstrap(hits[mask], problem_ids[mask])}
            for subset, mask in subsets.items()
            if mask.any()
        }
        print(name, {k: round(v["accuracy"], 3) for k, v in results["accuracy"][name].items()}, flush=True)
    results["seconds"] = round(time.perf_counter() - t_start, 1)
    results["folds"] = args.folds
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n")
    args.out.with_suffix(".md").write_text(report(results, list(subsets)))
    print(f"wrote {args.out.with_suffix('.md')}")


def _rating_agreement(data: Path) -> dict | None:
    import pyarrow.parquet as pq

    test, reference = (
        data / "prm800k-stepwise" / "phase1_test.stepwise-critic.parquet",
        data / "prm800k" / "math500_test.jsonl",
    )
    if not test.is_file() or not reference.is_file():
        return None
    truth = {json.loads(line)["problem"]: json.loads(line)["answer"] for line in reference.read_text().splitlines()}
    counts: dict[str, int] = defaultdict(int)
    for r in pq.read_table(test).to_pylist():
        if r["answer"] is None or r["rating"] not in (1, -1) or r["instruction"] not in truth:
            continue
        verdict = grade_answer(truth[r["instruction"]], r["answer"])
        if verdict is not None:
            counts["agree" if verdict == (r["rating"] == 1) else "disagree"] += 1
    total = counts["agree"] + counts["disagree"]
    return {"agree": counts["agree"], "steps": total, "share": round(counts["agree"] / total, 3) if total else None}


def report(results: dict, subsets: list[str]) -> str:
    n = results["pairs"]
    agreement = results["agreement_rating_vs_reference"] or {}
    lines = [
        "# Bradley-Terry reward model on real pairs",
        "",
        "A pair is two solutions of one problem, one graded right and one wrong; the right one is the",
        "preferred side (`ml/prm/graded.py`): ProcessBench (experts' `final_answer_correct`), MR-Ben math",
        "(people's `Model_Solution_Correctness`), and PRM800K phase 1 (alternative answer steps after the",
        "same accepted steps with different answers; graded against MATH-500's reference where the problem",
        "is there, else by the labeler's +1/-1 on the answer step, which agrees with the reference on "
        f"{agreement.get('agree', '-')} of {agreement.get('steps', '-')} test answer steps).",
        "",
        f"Held out by problem: {results['folds']} folds over all pairs; in each fold a PRM (hashed n-grams,",
        "2 heads, 8 epochs) is trained on the step labels of the training problems only (ProcessBench and",
        "MR-Ben first errors, PRM800K ratings), then one reward model per feature set on the training",
        "pairs (`ml.prm.reward`, defaults otherwise). Accuracy: share of held-out pairs whose right",
        "solution gets the higher reward; 95% interval from 2,000 bootstrap resamples of problems. Chance",
        "is 0.5. `prm_product_rule` trains nothing: the higher PRM product wins. Made by",
        f"`nice -n 15 .venv/bin/python bench/bench_reward.py` in {results['seconds']:.0f} s.",
        "",
        "| features | "
        + " | ".join(f"{s} ({n[s]['pairs']} pairs, {n[s]['problems']} problems)" for s in subsets)
        + " |",
        "|---|" + "---|" * len(subsets),
    ]
    for name, row in results["accuracy"].items():
        cells = []
        for s in subsets:
            cell = row.get(s)
            cells.append(f"{cell['accuracy']:.3f} ({cell['ci95'][0]:.3f}-{cell['ci95'][1]:.3f})" if cell else "-")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
