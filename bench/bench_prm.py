"""PRM speed with the default featurizer: retrain on 100k labeled steps, rescore 1M unlabeled steps.

    .venv/bin/python bench/bench_prm.py [--train 100000] [--score 1000000]

Steps are generated with a planted pattern (ml.prm.synthetic), ~150 characters each, 4-12 steps
per solution. Targets (issue 14): retrain < 30 s and rescore < 15 s from cached features on the 2-core
machine; cold runs including featurization < 60 s (issue 12). Features of a step
are computed once (steps never change) and cached, so rescoring after a retrain only runs the head;
the one-time featurization is timed separately. Writes bench/results/prm.md and prm.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ml.prm.config import PRMConfig  # noqa: E402
from ml.prm.feature_rows import FeatureCache, featurize  # noqa: E402
from ml.prm.featurizers import make_featurizer  # noqa: E402
from ml.prm.model import EnsembleHead, roll_up, solution_scores  # noqa: E402
from ml.prm.selection import priorities  # noqa: E402
from ml.prm.synthetic import _WORDS, planted_examples  # noqa: E402
from ml.prm.train import build_prm, train_prm  # noqa: E402

RESULTS = ROOT / "bench" / "results"


def unlabeled_solutions(n_steps: int, seed: int = 0):
    """~n_steps steps of ~150 chars in solutions of 4-12 steps, as (problem, previous, step) inputs."""
    rng = np.random.default_rng(seed)
    words = np.asarray(_WORDS, dtype=object)
    idx = rng.integers(0, len(words), size=(n_steps, 26))
    texts = [" ".join(row) + "." for row in words[idx]]
    lengths = []
    total = 0
    while total < n_steps:
        k = int(min(rng.integers(4, 13), n_steps - total))
        lengths.append(k)
        total += k
    problems = [
        f"Problem {i}: " + " ".join(words[rng.integers(0, len(words), 25)]) for i in range(len(lengths) // 4 + 1)
    ]
    items, o = [], 0
    for s, k in enumerate(lengths):
        p = problems[s // 4]
        sol = texts[o : o + k]
        items += [(p, tuple(sol[:i]), sol[i]) for i in range(k)]
        o += k
    return items, lengths


def batch_pass_ms(rows, cfg: PRMConfig, repeats: int = 15) -> dict:
    """One training batch's forward + backward through the head, fed as EmbeddingBag inputs (the
    old training path) and as CSR with its transpose (the current one): median ms of each."""
    head = EnsembleHead(rows.dim, hidden=cfg.hidden_size, k=cfg.ensemble_size, sparse=True, dropout=cfg.dropout)
    batch = np.random.default_rng(0).choice(len(rows), size=min(cfg.batch_size, len(rows)), replace=False)
    feeds = {
        "embedding_bag": lambda: rows.take(batch).torch_inputs(),
        "csr": lambda: rows.training_inputs(batch),
    }
    out = {}
    for name, feed in feeds.items():
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            head.zero_grad(set_to_none=True)
            head(**feed()).sum().backward()
            times.append((time.perf_counter() - t) * 1000)
        out[name] = round(float(np.median(times)), 2)
    out["ratio"] = round(out["embedding_bag"] / out["csr"], 2)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", type=int, default=100_000)
    ap.add_argument("--score", type=int, default=1_000_000)
    args = ap.parse_args()
    cfg = PRMConfig()
    res: dict = {
        "config": cfg.to_dict(),
        "machine": f"{platform.machine()} x{os.cpu_count()} cpus, torch {torch.__version__}",
    }
    res["load_average_at_start"] = os.getloadavg()

    # --- retrain on labeled steps ------------------------------------------------------------------
    ex = planted_examples(args.train, seed=11)
    t, c = time.perf_counter(), time.process_time()
    cache = FeatureCache(make_featurizer(cfg))
    ckpt = train_prm(ex, cfg, cache=cache)
    train_s, train_cpu = time.perf_counter() - t, time.process_time() - c
    res["retrain"] = {
        "labeled_steps": len(ex),
        "seconds_total": round(train_s, 2),
        "cpu_seconds_total": round(train_cpu, 2),
        "seconds_featurize": ckpt["seconds"]["features"],
        "epochs": len(ckpt["history"]),
        "best_epoch": ckpt["best_epoch"],
        "heldout": {k: ckpt["metrics"]["heldout"][k] for k in ("auroc_negative", "accuracy", "ece", "first_error_f1")},
    }
    # features are cached by step, so a later retrain on the same steps costs the rest
    res["retrain"]["seconds_cached_features"] = round(train_s - ckpt["seconds"]["features"], 2)
    print(f"retrain {len(ex)} steps: {train_s:.1f}s ({res['retrain']}", flush=True)
    res["batch_pass_ms"] = batch_pass_ms(cache.get(ex), cfg)
    print(f"one batch forward+backward: {res['batch_pass_ms']}", flush=True)

    # --- rescoring unlabeled steps -----------------------------------------------------------------
    prm = build_prm(ckpt, cache=cache)
    items, lengths = unlabeled_solutions(args.score)
    t = time.perf_counter()
    rows = featurize(prm.featurizer, items)  # once per step, ever (then cached / stored)
    feat_s = time.perf_counter() - t
    t, c = time.perf_counter(), time.process_time()
    sc = prm.score_rows(rows)
    prod, mins = solution_scores(sc.p_negative, lengths)
    unc = roll_up(sc.uncertainty("entropy"), lengths, "max")
    answer = np.random.default_rng(0).random(len(lengths)) < 0.5
    pri = priorities("convincing_wrong", scores=prod, answer_correct=answer.tolist())
    pri_u = priorities("uncertainty", solution_uncertainty=unc)
    score_s, score_cpu = time.perf_counter() - t, time.process_time() - c
    assert len(pri) == len(pri_u) == len(lengths) and len(sc.probs) == len(items)
    res["rescore"] = {
        "unlabeled_steps": len(items),
        "solutions": len(lengths),
        "nnz_per_step": round(float(rows.indptr[-1]) / len(items), 1),
        "seconds_featurize_once": round(feat_s, 2),
        "seconds_rescore_cached": round(score_s, 2),
        "cpu_seconds_rescore_cached": round(score_cpu, 2),
        "seconds_featurize_plus_rescore": round(feat_s + score_s, 2),
    }
    print(f"rescore {len(items)} steps: {res['rescore']}", flush=True)
    res["load_average_at_end"] = os.getloadavg()

    r, s = res["retrain"], res["rescore"]
    ok = lambda x, limit=60: "yes" if x < limit else "NO"  # noqa: E731
    b = res["batch_pass_ms"]
    md = [
        "# PRM speed (bench/bench_prm.py, default featurizer `hashed_ngram`)",
        "",
        f"Machine: {res['machine']}; load average at start {res['load_average_at_start'][0]:.1f}, "
        f"at end {res['load_average_at_end'][0]:.1f} (the machine is shared; other jobs slow these numbers).",
        "",
        "Seconds are wall-clock; CPU seconds of this process (both cores count) are in prm.json.",
        "",
        "| measurement | steps | seconds | target | within |",
        "|---|---|---|---|---|",
        f"| retrain incl. featurization ({r['epochs']} epochs, early stopping) | {r['labeled_steps']:,} | "
        f"{r['seconds_total']:.1f} | < 60 | {ok(r['seconds_total'])} |",
        f"| of which featurization | {r['labeled_steps']:,} | {r['seconds_featurize']:.1f} | | |",
        f"| retrain with features already cached (the same run less featurization) | {r['labeled_steps']:,} | "
        f"{r['seconds_cached_features']:.1f} | < 30 | {ok(r['seconds_cached_features'], 30)} |",
        "| rescore from cached features (probs, uncertainty, solution scores, priorities) | "
        f"{s['unlabeled_steps']:,} | "
        f"{s['seconds_rescore_cached']:.1f} | < 15 | {ok(s['seconds_rescore_cached'], 15)} |",
        f"| featurize new steps once ({s['nnz_per_step']} hashed features per step) | {s['unlabeled_steps']:,} | "
        f"{s['seconds_featurize_once']:.1f} | | |",
        f"| featurize + rescore, cold | {s['unlabeled_steps']:,} | {s['seconds_featurize_plus_rescore']:.1f} | < 60 | "
        f"{ok(s['seconds_featurize_plus_rescore'])} |",
        "",
        f"One training batch ({cfg.batch_size:,} steps) forward + backward through the head, median of 15: "
        f"{b['embedding_bag']:.1f} ms fed as EmbeddingBag inputs (the training path before 2026-12-01, whose CPU "
        f"backward sorts every index of the batch) vs {b['csr']:.1f} ms as CSR with its transpose (the backward "
        f"is one sparse-dense matmul): **{b['ratio']:.1f}x**.",
        "",
        "Held-out quality of the retrained model on the planted pattern: "
        f"AUROC(-1) {r['heldout']['auroc_negative']:.3f}, "
        f"accuracy {r['heldout']['accuracy']:.3f}, ECE {r['heldout']['ece']:.3f}, first-error F1 "
        f"{r['heldout']['first_error_f1']:.3f}.",
        "",
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "prm.md").write_text("\n".join(md))
    (RESULTS / "prm.json").write_text(json.dumps(res, indent=1))
    print("\n".join(md))


if __name__ == "__main__":
    main()
