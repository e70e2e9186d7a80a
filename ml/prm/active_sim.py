"""Active-learning simulation over stored step embeddings: strategies compared per step label spent.

Protocol (fixed before any tuning, see bench/results/simulation.md):
- A *vault* of 20% of each set's problems (sha1 of the problem id, mod 5 == 0) is never used while
  developing; `vault=True` evaluates on it at the end, with the whole non-vault part as the pool.
- Otherwise, per seed, 25% of the non-vault problems are the evaluation set and the rest the pool.
- Rounds spend a *step-label* budget, not a solution count: annotators stop at the first -1, so a
  strategy that picks wrong-answer solutions pays fewer labels per solution, and that is counted.
- After each round an ensemble head (`head.StepHead`) is trained on the labels so far and
  evaluated on the evaluation solutions: ProcessBench first-error F1 and AUROC for -1 steps.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ml.prm import acquisition as acq
from ml.prm import reweight
from ml.prm.answer_input import answer_block, grade_codes
from ml.prm.floor import fit_floor, floor_f1
from ml.prm.head import HeadConfig, StepHead, WeakSet
from ml.prm.metrics import (
    auroc,
    choose_map_cut,
    choose_stratum_thresholds,
    choose_threshold,
    first_error_f1,
    first_error_predictions,
    map_predictions,
    stratum_predictions,
)
from ml.prm.selection import convincing_wrong_priority
from ml.prm.step_features import step_rows
from prm800k.stratified import stratified_order

STRATEGIES = ("random", "uncertainty", "bald", "convincing_wrong", "value", "answer_stratified")
# answer_stratified: the share of each round's labels spent on graded-wrong solutions
WRONG_SHARE = 0.5
DEFAULT_STRATEGY = "answer_stratified"


def in_vault(problem_id: str) -> bool:
    return int(hashlib.sha1(problem_id.encode("utf-8")).hexdigest(), 16) % 5 == 0


@dataclass
class Prepared:
    """Feature rows and bookkeeping for a list of SimItems."""

    X: np.ndarray  # rows: every item's own steps, then every labeled example
    step_slice: list[tuple[int, int]]  # item -> its own steps' rows
    lab_rows: list[np.ndarray]  # item -> rows of its oracle-revealed labels
    lab_y: list[np.ndarray]  # 1 where the revealed label is -1
    first_error: np.ndarray
    answer: list[bool | None]
    n_labels: np.ndarray
    emb: np.ndarray  # solution embedding (mean of step rows' e_step block) for batch diversity
    problem_ids: list[str]


def prepare(
    items, store, *, blocks: Sequence[str] = ("minilm",), hash_dims: tuple[int, int] = (2**11, 2**9)
) -> Prepared:
    keys: dict[tuple, int] = {}
    tuples: list[tuple] = []

    def row(t):
        j = keys.get(t)
        if j is None:
            j = keys[t] = len(tuples)
            tuples.append(t)
        return j

    step_idx, lab_rows, lab_y = [], [], []
    graded = "answer" in blocks  # a row is then also keyed by its solution's graded answer
    for it in items:
        g = it.answer_correct if graded else None
        step_idx.append([row((it.problem, it.steps[i - 1] if i else None, s, i, g)) for i, s in enumerate(it.steps)])
        lab_rows.append(
            np.asarray(
                [row((e.problem, e.previous[-1] if e.previous else None, e.step, e.step_index, g)) for e in it.labeled],
                dtype=np.int64,
            )
        )
        lab_y.append(np.asarray([1.0 if e.target == -1 else 0.0 for e in it.labeled], dtype=np.float32))
    parts = []
    if "minilm" in blocks:
        parts.append(step_rows(store, tuples))
    if "hashed" in blocks:
        from ml.prm.feature_rows import featurize
        from ml.prm.featurizers import HashedNgramFeaturizer

        hf = HashedNgramFeaturizer(step_hash_dim=hash_dims[0], context_hash_dim=hash_dims[1])
        R = featurize(hf, [(t[0], (t[1],) if t[1] is not None else (), t[2]) for t in tuples])
        D = np.zeros((len(tuples), R.dim), np.float32)
        D[np.repeat(np.arange(len(tuples)), np.diff(R.indptr)), R.indices] = R.values
        parts.append(D)
    if graded:
        # the solution's answer as graded on import: the app PRM's side columns (ml.prm.answer_input)
        parts.append(answer_block(grade_codes([t[4] for t in tuples]), np.asarray([t[3] for t in tuples])))
    X = np.concatenate(parts, axis=1)
    # own steps laid out contiguously so slices work
    order = np.concatenate([np.asarray(s, dtype=np.int64) for s in step_idx]) if step_idx else np.zeros(0, np.int64)
    Xs = X[order]
    off = np.cumsum([0] + [len(s) for s in step_idx])
    d = store.dim if "minilm" in blocks else Xs.shape[1]
    emb = np.stack([Xs[a:b, :d].mean(0) if b > a else np.zeros(d) for a, b in zip(off[:-1], off[1:], strict=True)])
    return Prepared(
        X=np.concatenate([Xs, X]),
        step_slice=[(int(a), int(b)) for a, b in zip(off[:-1], off[1:], strict=True)],
        lab_rows=[r + len(Xs) for r in lab_rows],
        lab_y=lab_y,
        first_error=np.asarray([it.first_error for it in items]),
        answer=[it.answer_correct for it in items],
        n_labels=np.asarray([len(r) for r in lab_rows]),
        emb=emb.astype(np.float32),
        problem_ids=[it.problem_id for it in items],
    )


def _own_rows(P: Prepared, idx: Sequence[int]) -> tuple[np.ndarray, list[int]]:
    rows = [np.arange(*P.step_slice[i]) for i in idx]
    return (np.concatenate(rows) if rows else np.zeros(0, np.int64)), [len(r) for r in rows]


def _path(P: Prepared, i: int) -> np.ndarray:
    a, b = P.step_slice[i]
    fe = P.first_error[i]
    return np.arange(a, b if fe < 0 else min(b, a + fe + 1))


def _label_rows(P: Prepared, items: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The revealed labels of `items`: feature rows, 1 for a -1 step, and the item of each (bootstrap group)."""
    rows = np.concatenate([P.lab_rows[i] for i in items])
    y = np.concatenate([P.lab_y[i] for i in items])
    groups = np.concatenate([np.full(len(P.lab_rows[i]), i) for i in items])
    return rows, y, groups


def train_head(
    P: Prepared,
    labeled: Sequence[int],
    cfg: HeadConfig,
    init: StepHead | None = None,
    calibrate_on: Sequence[int] | None = None,
    calibration: str = "reweighted",
    population: Sequence[int] | None = None,
    decoding: str = "forced_wrong",
) -> StepHead:
    """Fit on the labeled solutions' revealed labels; choose the first-error threshold on out-of-bag
    predictions of their own steps (each member skipped some solutions in its bootstrap).

    An actively chosen sample is not the pool, and a threshold that is best for it is not best for
    the pool (with the threshold chosen on the evaluation set itself, uncertainty sampling matched
    random on every set; with one chosen on its own labeled sample it lost 0.03-0.05 F1).
    `calibration`: "reweighted" (default) weights each labeled solution to the `population` (the
    pool) by `reweight.population_weights`; "all" counts them equally; "random" uses only
    `calibrate_on`, the ones drawn at random (seed set, control share), when there are at least 20.
    `decoding`: "forced_wrong" (the first step over a P(-1) threshold, one per graded-answer
    stratum, chosen jointly with `reweight.stratified_population_weights`, except that a
    graded-wrong solution, which always holds an error, is read at its most probable first error,
    as the app's PRM reads first errors), "per_grade" (a threshold for the wrong stratum too),
    "threshold" (one threshold for all) or "map" (the most probable first error, flagged where its
    margin over "no error" passes a cut chosen the same way)."""
    labeled = list(labeled)
    rows, y, groups = _label_rows(P, labeled)
    head = StepHead(cfg).fit(P.X[rows], y, groups, init=init)
    calib = [i for i in (calibrate_on or []) if i in set(labeled)]
    ref = calib if calibration == "random" and len(calib) >= 20 else labeled
    # the most probable first error reads every step of a solution, as it will on the evaluation set
    # (a chain cut at the revealed error would favour it); the first step over a threshold needs
    # only the revealed ones
    forced = {False} if decoding == "forced_wrong" else set()
    paths = [np.arange(*P.step_slice[i]) if decoding == "map" or P.answer[i] in forced else _path(P, i) for i in ref]
    ph = head.head_probs(P.X[np.concatenate(paths)])
    col = {int(g): j for j, g in enumerate(np.unique(groups))}
    out = np.concatenate(
        [
            np.repeat((head.boot_weights[:, col[i]] == 0)[:, None], len(p), axis=1)
            for i, p in zip(ref, paths, strict=True)
        ],
        axis=1,
    )
    cnt = out.sum(0)
    oob = np.where(cnt > 0, (ph * out).sum(0) / np.maximum(cnt, 1), ph.mean(0))
    seqs = np.split(oob, np.cumsum([len(p) for p in paths])[:-1])
    grid = None
    if calibration != "random":
        # a fine grid where the out-of-bag probabilities are (a 0.05 grid is too coarse at P(-1) ~ 0.1-0.3)
        grid = np.unique(np.quantile(oob, np.linspace(0.02, 0.995, 80)))
    weights = grade_w = None
    if population is not None and (calibration == "reweighted" or decoding in ("per_grade", "forced_wrong")):
        lab, pop, lab_grades, pop_grades = _pool_scores(P, head, ref, population, col)
        weights = reweight.population_weights(lab, pop) if calibration == "reweighted" else None
        grade_w = reweight.stratified_population_weights(lab, pop, lab_grades, pop_grades)
    if decoding in ("per_grade", "forced_wrong"):
        grades = [P.answer[i] for i in ref]
        head.thresholds = choose_stratum_thresholds(
            seqs, P.first_error[ref], grades, grid=grid, weights=grade_w, forced=forced
        )
    head.threshold = choose_threshold(seqs, P.first_error[ref], grid=grid, weights=weights)
    head.map_cut = choose_map_cut(seqs, P.first_error[ref], weights=weights) if decoding == "map" else None
    return head


def _pool_scores(P: Prepared, head: StepHead, ref: Sequence[int], population: Sequence[int], col: dict):
    """What the threshold's weights read (`ml.prm.reweight`): the largest step P(-1) of the labeled
    solutions `ref` (out of bag) and of the whole `population` (the pool, labeled or not), and
    their graded-answer codes."""
    labeled = set(ref)
    lab = _max_p_negative(P, head, ref, col)
    rest = [i for i in population if i not in labeled]
    codes = grade_codes([P.answer[i] for i in ref])
    pop = np.concatenate([lab, _max_p_negative(P, head, rest)])
    return lab, pop, codes, np.concatenate([codes, grade_codes([P.answer[i] for i in rest])])


def _max_p_negative(P: Prepared, head: StepHead, idx: Sequence[int], col: dict | None = None) -> np.ndarray:
    """The largest step P(-1) of each solution over all its steps; with `col` (solution -> bootstrap
    column), each labeled solution's own is out of bag, so it is not inflated by fitting its labels."""
    rows, lengths = _own_rows(P, idx)
    if not len(rows):
        return np.zeros(len(idx))
    ph = head.head_probs(P.X[rows])
    if col is None:
        p = ph.mean(0)
    else:
        owner = np.repeat(np.asarray(idx), lengths)
        out = head.boot_weights[:, [col[int(i)] for i in owner]] == 0
        cnt = out.sum(0)
        p = np.where(cnt > 0, (ph * out).sum(0) / np.maximum(cnt, 1), ph.mean(0))
    return reweight.solution_max(p, lengths)


def evaluate(P: Prepared, head: StepHead, ev: Sequence[int]) -> dict:
    rows, lengths = _own_rows(P, ev)
    p = head.predict(P.X[rows])
    seqs, o = [], 0
    for n in lengths:
        seqs.append(p[o : o + n])
        o += n
    cut = getattr(head, "map_cut", None)
    thresholds = getattr(head, "thresholds", None)
    if thresholds is not None:
        pred = stratum_predictions(seqs, [P.answer[i] for i in ev], thresholds, head.threshold)
    elif cut is None:
        pred = first_error_predictions(seqs, head.threshold)
    else:
        pred = map_predictions(seqs, cut)
    m = first_error_f1(pred, P.first_error[list(ev)])
    lr = np.concatenate([P.lab_rows[i] for i in ev])
    ly = np.concatenate([P.lab_y[i] for i in ev])
    m["auroc_negative"] = auroc(ly > 0, head.predict(P.X[lr]))
    m["threshold"] = head.threshold
    return m


def weak_head(P: Prepared, pool: Sequence[int], cfg: HeadConfig) -> StepHead | None:
    """Pretrain on graded answers only (multiple-instance loss); None when nothing in the pool is graded."""
    graded = [i for i in pool if P.answer[i] is not None]
    if not graded or cfg.weak_weight <= 0:
        return None
    rows, lengths = _own_rows(P, graded)
    ws = WeakSet(
        X=P.X[rows],
        solution=np.repeat(np.arange(len(graded)), lengths),
        wrong=np.asarray([not P.answer[i] for i in graded]),
    )
    return StepHead(replace(cfg, steps=cfg.steps * 2)).fit(np.zeros((0, P.X.shape[1]), np.float32), [], [], weak=ws)


def transfer_head(P: Prepared, rows: Sequence[int], cfg: HeadConfig) -> StepHead | None:
    """A head fitted on another data set's labels (`rows`: its items in P), used as every round's
    starting point and L2 centre: the way PRM800K's phase 2 began from a PRM trained on phase 1,
    so acquisition has a model that knows something from the first round."""
    rows = list(rows)
    if not rows:
        return None
    lab, y, groups = _label_rows(P, rows)
    return StepHead(replace(cfg, steps=cfg.steps * 2)).fit(P.X[lab], y, groups)


def select(
    strategy: str,
    P: Prepared,
    head: StepHead,
    cand: list[int],
    budget: float,
    rng: np.random.Generator,
) -> tuple[list[int], bool]:
    """Solutions to label next (indices into P) until their true label counts reach `budget`, and
    whether they were drawn at random."""
    costs_true = P.n_labels[cand].astype(np.float64)

    def fill(order) -> list[int]:
        out, spent = [], 0.0
        for j in order:
            if spent >= budget:
                break
            out.append(cand[j])
            spent += costs_true[j]
        return out

    if strategy == "random":
        return fill(rng.permutation(len(cand))), True
    if strategy == "answer_stratified":
        wrong = np.asarray([P.answer[i] is False for i in cand])
        return [cand[j] for j in stratified_order(wrong, costs_true, budget, WRONG_SHARE, rng)], False
    rows, lengths = _own_rows(P, cand)
    hp = head.head_probs(P.X[rows])
    if strategy == "uncertainty":
        return fill(np.argsort(-acq.roll_max(acq.step_entropy(hp), lengths), kind="stable")), False
    if strategy == "convincing_wrong":
        p = hp.mean(0)
        sol = np.repeat(np.arange(len(cand)), lengths)
        prod = np.exp(np.bincount(sol, weights=np.log(np.clip(1 - p, 1e-12, 1)), minlength=len(cand)))
        return fill(np.argsort(-convincing_wrong_priority(prod, [P.answer[i] for i in cand]), kind="stable")), False
    v = acq.value_per_label(hp, lengths, [P.answer[i] for i in cand])
    if strategy == "bald":
        return fill(np.argsort(-v["bald"], kind="stable")), False
    if strategy == "value":
        # value per expected label, spread over the embedding space
        picks = [cand[j] for j in acq.diverse_top(v["value"], P.emb[cand], v["cost"], budget, spend=costs_true)]
        return picks, False
    raise ValueError(f"unknown strategy {strategy!r}; choose from {', '.join(STRATEGIES)}")


def simulate(
    items,
    store,
    *,
    strategies: Sequence[str] = STRATEGIES,
    seeds: Sequence[int] = (0, 1, 2, 3, 4),
    rounds: int = 10,
    round_share: float = 0.04,
    seed_share: float = 0.04,
    eval_fraction: float = 0.25,
    control_share: float = 0.1,
    vault: bool = False,
    head: HeadConfig | None = None,
    blocks: Sequence[str] = ("minilm", "hashed"),
    calibration: str = "reweighted",
    decoding: str = "forced_wrong",
    prior_items: Sequence = (),
    log: Callable[[str], None] | None = None,
) -> dict:
    """Curves per strategy and seed; budgets are shares of the pool's total step labels.

    `prior_items`: labeled solutions of *another* data set, never in the pool or the evaluation set;
    a head fitted on them starts every round and is its L2 centre (`transfer_head`), as the app's
    runs start from a base checkpoint (PRMConfig.base_checkpoint, L2 toward it)."""
    t0 = time.perf_counter()
    cfg = head or HeadConfig()
    n = len(items)
    P = prepare(list(items) + list(prior_items), store, blocks=blocks)
    transfer = transfer_head(P, range(n, n + len(prior_items)), cfg)
    is_vault = np.asarray([in_vault(p) for p in P.problem_ids])
    per_seed: dict[str, list[list[dict]]] = {s: [] for s in strategies}
    codes = grade_codes(P.answer[:n])
    lengths = np.asarray([b - a for a, b in P.step_slice[:n]])
    floor: list[dict] = []  # the grade-only reader each seed's PRM curves stand on (ml.prm.floor)
    for seed in seeds:
        rng = np.random.default_rng(seed)
        if vault:
            ev = [i for i in range(n) if is_vault[i]]
            pool = [i for i in range(n) if not is_vault[i]]
        else:
            dev_p = sorted({P.problem_ids[i] for i in range(n) if not is_vault[i]})
            rng.shuffle(dev_p)
            ev_p = set(dev_p[: int(round(eval_fraction * len(dev_p)))])
            ev = [i for i in range(n) if not is_vault[i] and P.problem_ids[i] in ev_p]
            pool = [i for i in range(n) if not is_vault[i] and P.problem_ids[i] not in ev_p]
        rule = fit_floor(codes[pool], lengths[pool], P.first_error[pool])
        f1 = floor_f1(codes[ev], lengths[ev], P.first_error[ev], rule)
        floor.append({"first_error_f1": f1, "rule": {str(k): v for k, v in rule.items()}})
        total = float(P.n_labels[pool].sum())
        seed_budget, round_budget = seed_share * total, round_share * total
        order = rng.permutation(len(pool))
        start, spent = [], 0.0
        for j in order:
            if spent >= seed_budget:
                break
            start.append(pool[j])
            spent += P.n_labels[pool[j]]
        prior = transfer or weak_head(P, pool, replace(cfg, seed=seed))
        for s in strategies:
            srng = np.random.default_rng([seed, 17])
            labeled = list(start)
            randomly = list(start)
            curve = []
            for r in range(rounds + 1):
                h = train_head(
                    P,
                    labeled,
                    replace(cfg, seed=seed * 100 + r),
                    init=prior,
                    calibrate_on=randomly,
                    calibration=calibration,
                    population=pool,
                    decoding=decoding,
                )
                m = evaluate(P, h, ev)
                m["labels"] = int(P.n_labels[labeled].sum())
                m["solutions"] = len(labeled)
                curve.append(m)
                if log:
                    log(
                        f"seed {seed} {s:16s} r{r:2d} labels {m['labels']:6d} F1 {m['first_error_f1']:.3f} "
                        f"AUROC {m['auroc_negative'] or 0:.3f} ({time.perf_counter() - t0:.0f}s)"
                    )
                if r == rounds:
                    break
                taken = set(labeled)
                cand = [i for i in pool if i not in taken]
                if not cand:
                    break
                # the app routes a control share of claims at random whatever the strategy
                share = 0.0 if s == "random" else control_share
                picks, is_random = select(s, P, h, cand, round_budget * (1 - share), srng)
                labeled += picks
                if is_random:
                    randomly += picks
                if share:
                    taken = set(labeled)
                    rest = [i for i in cand if i not in taken]
                    ctrl, _ = select("random", P, h, rest, round_budget * share, srng)
                    labeled += ctrl
                    randomly += ctrl
            per_seed[s].append(curve)
    return {
        "per_seed": per_seed,
        "meta": {
            "n_solutions": n,
            "n_eval": len(ev),
            "vault": vault,
            "seeds": list(seeds),
            "rounds": rounds,
            "round_share": round_share,
            "seed_share": seed_share,
            "control_share": control_share,
            "blocks": list(blocks),
            "calibration": calibration,
            "decoding": decoding,
            "prior_solutions": len(prior_items),
            "head": cfg.__dict__,
            "floor": floor,
            "seconds": round(time.perf_counter() - t0, 1),
        },
    }
