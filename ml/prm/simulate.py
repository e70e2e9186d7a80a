"""Offline active-learning simulation: which selection strategy buys the most PRM quality per label?

API (the `simulate_active_learning` management command wraps this)::

    from ml.prm.sim_data import load_items
    from ml.prm.simulate import simulate, plot_curves
    items = load_items("../shared/data/processbench/math.json")   # or .jsonl / .parquet / MR-Ben .json
    results = simulate(
        items,
        strategies=("random", "uncertainty", "convincing_wrong"),  # also "mix"
        rounds=8,            # labeling rounds after the seed set
        batch=40,            # solutions labeled per round
        seed_size=40,        # random solutions labeled before the first model
        seeds=(0, 1, 2),     # repetitions; curves are averaged over them
        heldout_fraction=0.2,  # share of problems never offered; metrics are measured on them
        config=None,         # PRMConfig for training (defaults: `simulation_config()`)
        log=print,           # progress lines, or None
    )
    plot_curves(results, "results.png")
    json.dump(results, open("results.json", "w"))

`results["strategies"][name]` has `curve` (a list of {"labels": n, "metrics": {...}}: held-out
metrics after each round, averaged over seeds; `labels` counts step labels, i.e. rated steps the
oracle gave) and `label_efficiency_vs_random` (step labels random needs to reach its own final
held-out first-error F1, divided by the labels this strategy needs to reach it; interpolated
linearly on the averaged curves; random = 1.0; None if the strategy never reaches it).
`label_efficiency_vs_random_auroc` is the same on the AUROC for Negative steps. `results["meta"]`
records the data and parameters.

The oracle answers from the file's own labels and stops at the first -1, as PRM800K phase 2 did:
ProcessBench / MR-Ben steps before the first error are +1, the error -1, later steps unrated;
PRM800K-format records (and the prm800k-stepwise Parquet, regrouped into records) reveal every
rated completion (alternatives too, with the neutral class) up to the main line's first -1.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from ml.prm.config import PRMConfig
from ml.prm.examples import StepExample, step_key
from ml.prm.feature_rows import FeatureCache
from ml.prm.featurizers import make_featurizer
from ml.prm.metrics import first_error_f1, first_error_predictions, step_metrics
from ml.prm.model import roll_up, solution_scores
from ml.prm.selection import priorities, top_k
from ml.prm.sim_data import SimItem
from ml.prm.train import build_prm, train_prm

# ------------------------------------------------------------------------------------------------
# simulation


def simulation_config(**overrides) -> PRMConfig:
    """Training settings for the many small retrains of a simulation: smaller hash tables (a few thousand
    labels need fewer buckets, and the dense Adam update of the table is most of a step), fewer epochs."""
    base = {
        "step_hash_dim": 2**13,
        "context_hash_dim": 2**11,
        "max_epochs": 10,
        "patience": 2,
        "min_batches_per_epoch": 8,
        "ensemble_size": 4,
        "hidden_size": 16,
    }
    base.update(overrides)
    return PRMConfig(**base)


def _mean_metrics(ms: list[dict]) -> dict:
    keys = {k for m in ms for k, v in m.items() if isinstance(v, int | float) and v is not None}
    out = {}
    for k in sorted(keys):
        vals = [m[k] for m in ms if m.get(k) is not None]
        out[k] = float(np.mean(vals)) if vals else None
    return out


def labels_to_reach(curve: list[dict], metric: str, target: float) -> float | None:
    """Step labels at which the curve first reaches `target` (linear interpolation between points)."""
    prev = None
    for pt in curve:
        v = pt["metrics"].get(metric)
        if v is None:
            continue
        if v >= target - 1e-12:
            if prev is None or prev[1] >= target:
                return float(pt["labels"])
            (l0, v0), l1 = prev, pt["labels"]
            return float(l0 + (target - v0) * (l1 - l0) / (v - v0))
        prev = (pt["labels"], v)
    return None


def label_efficiency(curves: dict[str, list[dict]], metric: str) -> dict[str, float | None]:
    if "random" not in curves or not curves["random"]:
        return {s: None for s in curves}
    target = curves["random"][-1]["metrics"].get(metric)
    if target is None:
        return {s: None for s in curves}
    need_random = labels_to_reach(curves["random"], metric, target)
    out = {}
    for s, c in curves.items():
        if s == "random":
            out[s] = 1.0
            continue
        need = labels_to_reach(c, metric, target)
        out[s] = None if need is None or need_random is None or need <= 0 else float(need_random / need)
    return out


def _evaluate(prm, heldout: list[SimItem], held_examples: list[StepExample], cache: FeatureCache) -> dict:
    # step-level metrics on every oracle-revealed held-out label
    sc = prm.score_rows(cache.get(held_examples))
    y = np.asarray([e.target + 1 for e in held_examples], dtype=np.int64)
    m = step_metrics(y, sc.probs)
    # first-error F1 over whole held-out solutions (all their steps are scored)
    keys = [k for it in heldout for k in it.keys]
    pn = prm.score_rows(
        cache.get([(it.problem, tuple(it.steps[:i]), s) for it in heldout for i, s in enumerate(it.steps)], keys)
    ).p_negative
    seqs, o = [], 0
    for it in heldout:
        seqs.append(pn[o : o + len(it.steps)])
        o += len(it.steps)
    truth = np.asarray([it.first_error for it in heldout])
    m.update(first_error_f1(first_error_predictions(seqs, prm.threshold), truth))
    return m


def simulate(
    items: Sequence[SimItem],
    *,
    strategies: Sequence[str] = ("random", "uncertainty", "convincing_wrong"),
    rounds: int = 8,
    batch: int = 40,
    seed_size: int = 40,
    seeds: Sequence[int] = (0, 1, 2),
    heldout_fraction: float = 0.2,
    config: PRMConfig | None = None,
    rollup: str = "max",
    score: str = "product",
    log: Callable[[str], None] | None = None,
) -> dict:
    """Run the active-learning simulation; see the module docstring for the result layout."""
    t0 = time.perf_counter()
    cfg = config or simulation_config()
    items = list(items)
    for it in items:
        if not it.keys:
            it.keys = [step_key(it.problem, it.steps[:i], s) for i, s in enumerate(it.steps)]
    cache = FeatureCache(make_featurizer(cfg))
    # features once for everything the simulation will ever touch
    cache.get(
        [(it.problem, tuple(it.steps[:i]), s) for it in items for i, s in enumerate(it.steps)],
        [k for it in items for k in it.keys],
    )
    cache.get([e for it in items for e in it.labeled])
    t_feat = time.perf_counter() - t0
    if log:
        log(f"{len(items)} solutions, {len(cache)} distinct steps featurized in {t_feat:.1f}s")

    per_seed: dict[str, list[list[dict]]] = {s: [] for s in strategies}
    problems = sorted({it.problem_id for it in items})
    for seed in seeds:
        rng = np.random.default_rng(seed)
        perm = list(problems)
        rng.shuffle(perm)
        held_p = set(perm[: max(1, int(round(heldout_fraction * len(perm))))])
        heldout = [it for it in items if it.problem_id in held_p]
        pool = [it for it in items if it.problem_id not in held_p]
        held_examples = [e for it in heldout for e in it.labeled]
        start = set(rng.choice(len(pool), size=min(seed_size, len(pool)), replace=False).tolist())
        for strategy in strategies:
            srng = np.random.default_rng([seed, 7])
            labeled = set(start)
            curve = []
            for r in range(rounds + 1):
                exs = [e for i in sorted(labeled) for e in pool[i].labeled]
                ckpt = train_prm(exs, replace(cfg, seed=seed * 1000 + r), cache=cache)
                prm = build_prm(ckpt, cache=cache)
                m = _evaluate(prm, heldout, held_examples, cache)
                curve.append({"labels": len(exs), "solutions": len(labeled), "metrics": m})
                if log:
                    log(
                        f"seed {seed} {strategy:16s} round {r}: labels {len(exs):6d} "
                        f"F1 {m.get('first_error_f1') or 0:.3f} AUROC {m.get('auroc_negative') or 0:.3f} "
                        f"({time.perf_counter() - t0:.0f}s)"
                    )
                if r == rounds:
                    break
                rest = [i for i in range(len(pool)) if i not in labeled]
                if not rest:
                    break
                cand = [pool[i] for i in rest]
                keys = [k for it in cand for k in it.keys]
                sc = prm.score_rows(
                    cache.get(
                        [(it.problem, tuple(it.steps[:j]), s) for it in cand for j, s in enumerate(it.steps)], keys
                    )
                )
                lengths = [len(it.steps) for it in cand]
                prod, mins = solution_scores(sc.p_negative, lengths)
                pri = priorities(
                    strategy,
                    scores=prod if score == "product" else mins,
                    answer_correct=[it.answer_correct for it in cand],
                    solution_uncertainty=roll_up(sc.uncertainty(cfg.uncertainty), lengths, rollup),
                    rng=srng,
                    n=len(cand),
                )
                labeled.update(rest[j] for j in top_k(pri, batch))
            per_seed[strategy].append(curve)

    result_strategies = {}
    for s, curves in per_seed.items():
        n_pts = min(len(c) for c in curves)
        avg = [
            {
                "labels": float(np.mean([c[i]["labels"] for c in curves])),
                "solutions": float(np.mean([c[i]["solutions"] for c in curves])),
                "metrics": _mean_metrics([c[i]["metrics"] for c in curves]),
            }
            for i in range(n_pts)
        ]
        result_strategies[s] = {"curve": avg, "per_seed": curves}
    eff = label_efficiency({s: v["curve"] for s, v in result_strategies.items()}, "first_error_f1")
    eff_auc = label_efficiency({s: v["curve"] for s, v in result_strategies.items()}, "auroc_negative")
    for s in result_strategies:
        result_strategies[s]["label_efficiency_vs_random"] = eff[s]
        result_strategies[s]["label_efficiency_vs_random_auroc"] = eff_auc[s]
    return {
        "strategies": result_strategies,
        "meta": {
            "n_solutions": len(items),
            "n_problems": len(problems),
            "total_step_labels": int(sum(it.n_labels for it in items)),
            "rounds": rounds,
            "batch": batch,
            "seed_size": seed_size,
            "seeds": list(seeds),
            "heldout_fraction": heldout_fraction,
            "rollup": rollup,
            "score": score,
            "config": cfg.to_dict(),
            "seconds": round(time.perf_counter() - t0, 1),
            "feature_seconds": round(t_feat, 1),
        },
    }


def plot_curves(results: dict, path: str | Path, *, title: str = "") -> str:
    """Held-out first-error F1 and AUROC(Negative) vs step labels, one line per strategy, to a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, metric, label in (
        (axes[0], "first_error_f1", "held-out first-error F1"),
        (axes[1], "auroc_negative", "held-out AUROC (Negative steps)"),
    ):
        for s, v in results["strategies"].items():
            xs = [p["labels"] for p in v["curve"] if p["metrics"].get(metric) is not None]
            ys = [p["metrics"][metric] for p in v["curve"] if p["metrics"].get(metric) is not None]
            eff = v.get("label_efficiency_vs_random")
            tag = f"{s} (x{eff:.2f})" if eff is not None and metric == "first_error_f1" else s
            ax.plot(xs, ys, marker="o", markersize=3, label=tag)
        ax.set_xlabel("step labels")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    path = str(path)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
