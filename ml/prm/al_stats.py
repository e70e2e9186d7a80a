"""Label efficiency vs random with a bootstrap interval over seeds, and normalised area under the curve.

Input: per strategy, a list (one per seed) of curves [{"labels": n, "first_error_f1": f, ...}, ...].

- efficiency(s) = labels random needs to reach its own final value / labels s needs (linear
  interpolation; seeds averaged point by point first). > 1: s needs fewer labels. If s never
  reaches random's final value, the ratio is bounded by random's need over s's final label count
  and reported as "< that bound" (None as the point value).
- Bootstrap: seeds are drawn with replacement (the same draw for every strategy: curves of one
  seed share the seed set and the evaluation split), the ratio recomputed; 2.5 / 97.5 percentiles.
- nAULC: the mean of the curve over [first point, the smallest final label count of all
  strategies] (trapezoids on the averaged curve), so a strategy is not judged by one crossing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def mean_curve(curves: Sequence[Sequence[dict]], metric: str) -> tuple[np.ndarray, np.ndarray]:
    n = min(len(c) for c in curves)
    x = np.mean([[p["labels"] for p in c[:n]] for c in curves], axis=0)
    y = np.mean([[p.get(metric) or 0.0 for p in c[:n]] for c in curves], axis=0)
    return x, y


def labels_to_reach(x: np.ndarray, y: np.ndarray, target: float) -> float | None:
    for i in range(len(x)):
        if y[i] >= target - 1e-12:
            if i == 0:
                return float(x[0])
            return float(x[i - 1] + (target - y[i - 1]) * (x[i] - x[i - 1]) / (y[i] - y[i - 1]))
    return None


def efficiency(rand: tuple, other: tuple) -> float | None:
    xr, yr = rand
    need_r = labels_to_reach(xr, yr, yr[-1])
    need = labels_to_reach(*other, yr[-1])
    if need is None or need_r is None or need <= 0:
        return None
    return need_r / need


def aulc(x: np.ndarray, y: np.ndarray, x_end: float) -> float:
    """Mean of y over [x[0], x_end] (linear interpolation)."""
    if x_end <= x[0]:
        return float(y[0])
    grid = np.linspace(x[0], x_end, 200)
    return float(np.mean(np.interp(grid, x, y)))


def summarize(per_seed: dict[str, list], metric: str = "first_error_f1", n_boot: int = 2000, seed: int = 0) -> dict:
    strategies = list(per_seed)
    n_seeds = min(len(v) for v in per_seed.values())
    curves = {s: mean_curve(per_seed[s], metric) for s in strategies}
    x_end = min(c[0][-1] for c in curves.values())
    rng = np.random.default_rng(seed)
    draws = [rng.integers(0, n_seeds, n_seeds) for _ in range(n_boot)]
    out = {}
    for s in strategies:
        eff = efficiency(curves["random"], curves[s]) if "random" in curves else None
        boots, aboots = [], []
        for d in draws:
            r = mean_curve([per_seed["random"][i] for i in d], metric)
            o = mean_curve([per_seed[s][i] for i in d], metric)
            e = efficiency(r, o)
            boots.append(0.0 if e is None else e)  # never reaching random's final value counts as 0x
            xe = min(mean_curve([per_seed[t][i] for i in d], metric)[0][-1] for t in strategies)
            aboots.append(aulc(*o, xe) - aulc(*r, xe))
        x, y = curves[s]
        out[s] = {
            "efficiency": eff,
            "efficiency_ci": [float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5))],
            "aulc": aulc(x, y, x_end),
            "aulc_minus_random_ci": [float(np.percentile(aboots, 2.5)), float(np.percentile(aboots, 97.5))],
            "final": float(y[-1]),
            "final_labels": float(x[-1]),
            "reached_random_final": eff is not None,
        }
    for s in strategies:
        out[s]["aulc_vs_random"] = out[s]["aulc"] / out["random"]["aulc"] if out["random"]["aulc"] > 0 else None
    return {"strategies": out, "x_end": x_end, "n_seeds": n_seeds, "metric": metric}
