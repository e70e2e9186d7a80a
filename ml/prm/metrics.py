"""Held-out metrics: AUROC for Negative steps, accuracy, ECE, ProcessBench first-error F1 (numpy only),
with 95% intervals (Wilson for accuracy, a bootstrap over solutions for F1) so that a perfect score on
a handful of held-out steps reads as the guess it is."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

import numpy as np

# a stratum's entry in `choose_stratum_thresholds` when it is read at the most probable first error
MOST_PROBABLE = "most_probable"


def auroc(y_true, scores) -> float | None:
    """Area under the ROC curve (Mann-Whitney U with average ranks for ties). None if one class is absent."""
    y = np.asarray(y_true, dtype=bool)
    s = np.asarray(scores, dtype=np.float64)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    order = np.argsort(s, kind="mergesort")
    ss = s[order]
    ranks = np.empty(len(s), dtype=np.float64)
    # average rank for each run of tied scores
    bounds = np.flatnonzero(np.diff(ss)) + 1
    starts = np.concatenate([[0], bounds])
    ends = np.concatenate([bounds, [len(ss)]])
    avg = (starts + ends + 1) / 2.0  # 1-based ranks
    ranks[order] = np.repeat(avg, ends - starts)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def accuracy(y_class, probs) -> float | None:
    y = np.asarray(y_class)
    if len(y) == 0:
        return None
    return float((np.asarray(probs).argmax(1) == y).mean())


def ece(y_class, probs, n_bins: int = 15) -> float | None:
    """Expected calibration error of the top-label confidence, equal-width bins."""
    y = np.asarray(y_class)
    p = np.asarray(probs, dtype=np.float64)
    if len(y) == 0:
        return None
    conf = p.max(1)
    correct = (p.argmax(1) == y).astype(np.float64)
    bins = np.minimum((conf * n_bins).astype(np.int64), n_bins - 1)
    cnt = np.bincount(bins, minlength=n_bins)
    s_conf = np.bincount(bins, weights=conf, minlength=n_bins)
    s_corr = np.bincount(bins, weights=correct, minlength=n_bins)
    nz = cnt > 0
    return float(np.abs(s_conf[nz] - s_corr[nz]).sum() / len(y))


class _Paths:
    """P(-1) sequences of many solutions flattened once, so each threshold is a few vector ops."""

    def __init__(self, p_negative_per_solution: Sequence[Sequence[float]]):
        lens = np.fromiter(
            (len(p) for p in p_negative_per_solution), dtype=np.int64, count=len(p_negative_per_solution)
        )
        self.n = len(lens)
        self.flat = (
            np.concatenate([np.asarray(p, dtype=np.float64) for p in p_negative_per_solution])
            if lens.sum()
            else np.zeros(0)
        )
        starts = np.concatenate([[0], np.cumsum(lens)[:-1]]) if self.n else np.zeros(0, np.int64)
        self.pos = np.arange(len(self.flat)) - np.repeat(starts, lens)  # step index within its solution
        self.nonempty = lens > 0
        self.starts = starts[self.nonempty]

    def first_above(self, threshold: float) -> np.ndarray:
        out = np.full(self.n, -1, dtype=np.int64)
        if len(self.starts):
            big = np.iinfo(np.int64).max
            first = np.minimum.reduceat(np.where(self.flat > threshold, self.pos, big), self.starts)
            out[self.nonempty] = np.where(first == big, -1, first)
        return out


def first_error_predictions(p_negative_per_solution: Sequence[Sequence[float]], threshold: float) -> np.ndarray:
    """Index of the first step with P(-1) > threshold, or -1 when there is none."""
    return _Paths(p_negative_per_solution).first_above(threshold)


def first_error_map(p_negative_per_solution: Sequence[Sequence[float]]) -> tuple[np.ndarray, np.ndarray]:
    """The most probable first error of each solution, read as a chain of steps: step k is the first
    error with probability p_k * prod_{i<k} (1 - p_i), and there is none with prod_i (1 - p_i).
    Returns (index of the most probable first error, its log-odds margin over "no error"); a
    solution is flagged when its margin exceeds a cut, so one number per split trades the two
    ProcessBench accuracies, as the P(-1) threshold does for `first_error_predictions`."""
    paths = _Paths(p_negative_per_solution)
    index = np.full(paths.n, -1, dtype=np.int64)
    margin = np.full(paths.n, -np.inf)
    if not len(paths.starts):
        return index, margin
    p = np.clip(paths.flat, 1e-6, 1 - 1e-6)
    log_ok = np.log1p(-p)
    lengths = np.diff(np.append(paths.starts, len(p)))  # of the solutions with steps
    # log prod_{i<k} (1 - p_i) within each solution: a running sum restarted at every solution
    running = np.cumsum(log_ok)
    offset = np.repeat(running[paths.starts] - log_ok[paths.starts], lengths)
    before = running - log_ok - offset
    joint = np.log(p) + before
    none = running[paths.starts + lengths - 1] - offset[paths.starts]
    best = np.maximum.reduceat(joint, paths.starts)
    at = np.minimum.reduceat(np.where(joint == np.repeat(best, lengths), paths.pos, len(p)), paths.starts)
    index[paths.nonempty] = at
    margin[paths.nonempty] = best - none
    return index, margin


def flag_share(index: np.ndarray, margin: np.ndarray, share: float) -> np.ndarray:
    """First-error predictions that flag the `share` of these solutions with the widest margins
    (from `first_error_map`), -1 for the rest. A label-free cut: it reads a split's own unlabeled
    solutions, so a PRM whose P(-1) runs high on another domain is not made to flag every one."""
    finite = margin[np.isfinite(margin)]
    cut = float(np.quantile(finite, 1 - share)) if len(finite) else 0.0
    return np.where(margin > cut, index, -1)


def harmonic_f1(acc_err: float | None, acc_ok: float | None) -> float | None:
    """ProcessBench's F1 from its two accuracies; a missing group (None) leaves the other alone."""
    if acc_err is None or acc_ok is None:
        return acc_err if acc_ok is None else acc_ok
    return 0.0 if acc_err + acc_ok == 0 else 2 * acc_err * acc_ok / (acc_err + acc_ok)


def first_error_f1(predicted, true, weights=None) -> dict:
    """ProcessBench F1: harmonic mean of accuracy on erroneous solutions (exact first-error index)
    and accuracy on error-free ones (no step flagged). Missing groups count as None. `weights`:
    one per solution (importance weights of a sample that is not the population's), else equal."""
    pred = np.asarray(predicted)
    true = np.asarray(true)
    w = np.ones(len(true)) if weights is None else np.asarray(weights, dtype=np.float64)
    err = true >= 0
    # A group whose weights are all zero (a stratum the population lacks) is missing, not an error.
    acc_err = float(np.average(pred[err] == true[err], weights=w[err])) if w[err].sum() > 0 else None
    acc_ok = float(np.average(pred[~err] == -1, weights=w[~err])) if w[~err].sum() > 0 else None
    return {
        "first_error_f1": harmonic_f1(acc_err, acc_ok),
        "acc_erroneous": acc_err,
        "acc_correct": acc_ok,
        "n_solutions": int(len(true)),
    }


def wilson_interval(successes: int, n: int, z: float = 1.96) -> list[float] | None:
    """Wilson score interval of a proportion (sound at 0/n and n/n, unlike the normal one)."""
    if n <= 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return [max(0.0, centre - half), min(1.0, centre + half)]


def first_error_f1_interval(predicted, true, *, n_boot: int = 1000, seed: int = 0) -> list[float] | None:
    """95% percentile bootstrap interval of first-error F1, resampling solutions."""
    pred = np.asarray(predicted)
    true = np.asarray(true)
    if len(true) == 0:
        return None
    # F1 reads only how many solutions fall in each of four cells (has an error or not, hit or
    # not), so resampling solutions is a multinomial draw of the four counts: the same bootstrap
    # without an n_boot x n index matrix (160 MB at 20,000 solutions)
    err = true >= 0
    hit = np.where(err, pred == true, pred == -1)
    cells = np.asarray([(err & hit).sum(), (err & ~hit).sum(), (~err & hit).sum(), (~err & ~hit).sum()])
    counts = np.random.default_rng(seed).multinomial(len(true), cells / len(true), size=n_boot)
    hit_err, n_err = counts[:, 0], counts[:, 0] + counts[:, 1]
    hit_ok, n_ok = counts[:, 2], counts[:, 2] + counts[:, 3]
    with np.errstate(invalid="ignore", divide="ignore"):
        acc_err = np.where(n_err > 0, hit_err / np.maximum(n_err, 1), np.nan)
        acc_ok = np.where(n_ok > 0, hit_ok / np.maximum(n_ok, 1), np.nan)
        both = np.where(acc_err + acc_ok == 0, 0.0, 2 * acc_err * acc_ok / (acc_err + acc_ok))
    values = np.where(np.isnan(acc_err), acc_ok, np.where(np.isnan(acc_ok), acc_err, both))
    values = values[~np.isnan(values)]
    if len(values) == 0:
        return None
    return [float(np.quantile(values, 0.025)), float(np.quantile(values, 0.975))]


def choose_threshold(p_negative_per_solution, true, grid=None, weights=None) -> float:
    """The P(-1) threshold that maximises first-error F1 on the given (training) solutions, each
    counted with its weight (`first_error_f1`)."""
    if grid is None:
        grid = np.linspace(0.05, 0.95, 19)
    best, best_t = -1.0, 0.5
    paths = _Paths(p_negative_per_solution)
    for t in grid:
        f = first_error_f1(paths.first_above(t), true, weights)["first_error_f1"] or 0.0
        if f > best + 1e-12:
            best, best_t = f, float(t)
    return best_t


def map_predictions(p_negative_per_solution: Sequence[Sequence[float]], cut: float) -> np.ndarray:
    """The most probable first error (`first_error_map`) where its margin over "no error" exceeds
    `cut`, else -1."""
    index, margin = first_error_map(p_negative_per_solution)
    return np.where(margin > cut, index, -1)


def choose_map_cut(p_negative_per_solution, true, weights=None, n_grid: int = 80) -> float:
    """The margin cut for `map_predictions` that maximises first-error F1 on the given (training)
    solutions, each counted with its weight; the grid is quantiles of their own margins."""
    index, margin = first_error_map(p_negative_per_solution)
    finite = margin[np.isfinite(margin)]
    if not len(finite):
        return 0.0
    grid = np.unique(np.quantile(finite, np.linspace(0.0, 1.0, n_grid)))
    # a cut just under the smallest margin flags every solution
    grid = np.concatenate([[grid[0] - 1.0], grid])
    best, best_c = -1.0, 0.0
    for c in grid:
        f = first_error_f1(np.where(margin > c, index, -1), true, weights)["first_error_f1"] or 0.0
        if f > best + 1e-12:
            best, best_c = f, float(c)
    return best_c


def step_metrics(y_class, probs) -> dict:
    """AUROC of P(-1) for Negative steps, 3-way accuracy, ECE, and the NLL (for early stopping)."""
    y = np.asarray(y_class)
    p = np.asarray(probs, dtype=np.float64)
    nll = float(-np.log(np.clip(p[np.arange(len(y)), y], 1e-12, 1)).mean()) if len(y) else None
    correct = int((p.argmax(1) == y).sum()) if len(y) else 0
    return {
        "auroc_negative": auroc(y == 0, p[:, 0]) if len(y) else None,
        "accuracy": accuracy(y, p),
        "accuracy_ci": wilson_interval(correct, len(y)),
        "ece": ece(y, p),
        "nll": nll,
        "n_steps": int(len(y)),
        "n_negative": int((y == 0).sum()),
    }


def _hit_counts(pred: np.ndarray, true: np.ndarray, w: np.ndarray) -> list[float]:
    """Weighted hits and totals on erroneous, then on error-free solutions."""
    err = true >= 0
    return [
        (w * (err & (pred == true))).sum(),
        (w * err).sum(),
        (w * (~err & (pred == -1))).sum(),
        (w * ~err).sum(),
    ]


def _stratum_counts(paths: _Paths, true: np.ndarray, w: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """(len(grid), 4) weighted counts per threshold: `_hit_counts` of each threshold's predictions."""
    out = np.zeros((len(grid), 4))
    for j, t in enumerate(grid):
        out[j] = _hit_counts(paths.first_above(t), true, w)
    return out


def choose_stratum_thresholds(
    p_negative_per_solution, true, strata, grid=None, weights=None, forced: Collection = ()
) -> dict:
    """One P(-1) threshold per stratum (e.g. the graded answer: wrong, right, ungraded), chosen
    jointly to maximise the first-error F1 of all the solutions together, each counted with its
    weight. A stratum's threshold is then set on that stratum's own solutions, so a sample that
    over-represents one stratum (a queue that favours wrong answers) does not move the other's.

    A stratum in `forced` (one whose solutions all hold an error, e.g. a graded-wrong answer) gets
    no threshold but `MOST_PROBABLE`: each of its solutions is read at its most probable first
    error (`first_error_map`), never "no error"; the others' thresholds are chosen around that."""
    true = np.asarray(true)
    strata = list(strata)
    w = np.ones(len(true)) if weights is None else np.asarray(weights, dtype=np.float64)
    if grid is None:
        grid = np.linspace(0.05, 0.95, 19)
    grid = np.asarray(grid, dtype=np.float64)
    keys = sorted(set(strata), key=repr)
    counts = []
    for k in keys:
        idx = [i for i, s in enumerate(strata) if s == k]
        seqs = [p_negative_per_solution[i] for i in idx]
        if k in forced:
            counts.append(np.asarray([_hit_counts(first_error_map(seqs)[0], true[idx], w[idx])]))
        else:
            counts.append(_stratum_counts(_Paths(seqs), true[idx], w[idx], grid))
    # every combination of one threshold per stratum: sum the counts by broadcasting
    total = np.zeros((1,) * len(keys) + (4,))
    for d, c in enumerate(counts):
        shape = [1] * len(keys) + [4]
        shape[d] = len(c)
        total = total + c.reshape(shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc_err = np.where(total[..., 1] > 0, total[..., 0] / np.maximum(total[..., 1], 1e-12), np.nan)
        acc_ok = np.where(total[..., 3] > 0, total[..., 2] / np.maximum(total[..., 3], 1e-12), np.nan)
        f1 = np.where(acc_err + acc_ok > 0, 2 * acc_err * acc_ok / (acc_err + acc_ok), 0.0)
    f1 = np.where(np.isnan(acc_err), acc_ok, np.where(np.isnan(acc_ok), acc_err, f1))
    f1 = np.nan_to_num(f1, nan=-1.0)
    best = np.unravel_index(int(np.argmax(f1)), f1.shape)
    return {k: MOST_PROBABLE if k in forced else float(grid[b]) for k, b in zip(keys, best, strict=True)}


def stratum_predictions(p_negative_per_solution, strata, thresholds: dict, default: float = 0.5) -> np.ndarray:
    """`first_error_predictions` with each solution's threshold taken from its stratum; a stratum
    whose entry is `MOST_PROBABLE` is read at each solution's most probable first error."""
    out = np.full(len(p_negative_per_solution), -1, dtype=np.int64)
    strata = list(strata)
    for k in set(strata):
        idx = [i for i, s in enumerate(strata) if s == k]
        seqs = [p_negative_per_solution[i] for i in idx]
        rule = thresholds.get(k, default)
        out[idx] = first_error_map(seqs)[0] if rule == MOST_PROBABLE else first_error_predictions(seqs, rule)
    return out
