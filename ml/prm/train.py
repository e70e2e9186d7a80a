"""Training loop for the PRM (nanoGPT `train.py` style): split by problem, train, early-stop, checkpoint.

ckpt = train_prm(examples, PRMConfig())      # examples: list[StepExample] with targets
save_checkpoint(ckpt, "var/models/run-12.pt")  # atomic: tmp file + os.replace
prm = load_checkpoint("var/models/run-12.pt")  # -> PRM; prm.score_solution(problem, steps)
"""

from __future__ import annotations

import copy
import json
import math
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from ml.prm import reweight
from ml.prm.answer_input import ANSWER_DIM, GRADE_STRATA, answer_block_for_examples
from ml.prm.config import ConfigError, PRMConfig
from ml.prm.examples import StepExample, path_first_error
from ml.prm.feature_rows import FeatureCache, Rows, TrainingBatches
from ml.prm.featurizers import make_featurizer
from ml.prm.floor import fit_floor, floor_f1
from ml.prm.metrics import (
    MOST_PROBABLE,
    choose_stratum_thresholds,
    choose_threshold,
    first_error_f1,
    first_error_f1_interval,
    first_error_predictions,
    step_metrics,
    stratum_predictions,
)
from ml.prm.model import PRM, EnsembleHead, scores_from_head_probs

CHECKPOINT_VERSION = 1


def split_by_problem(examples: Sequence[StepExample], fraction: float, seed: int) -> tuple[list[int], list[int]]:
    """Indices of train and held-out examples; a problem's examples all land on one side.

    Held-out problems are drawn from the human-labeled examples alone, so train-only (automatic)
    examples never change the held-out set; those of a held-out problem are left out entirely.
    """
    problems = sorted({e.problem_id for e in examples if not e.train_only})
    rng = np.random.default_rng(seed)
    rng.shuffle(problems)
    n_held = int(round(fraction * len(problems))) if len(problems) >= 4 else 0
    held = set(problems[:n_held])
    tr = [i for i, e in enumerate(examples) if e.problem_id not in held]
    he = [i for i, e in enumerate(examples) if e.problem_id in held and not e.train_only]
    return tr, he


@torch.no_grad()
def _logits(head: EnsembleHead, rows: Rows, device: str, batch_size: int = 8192) -> torch.Tensor:
    head.eval()
    out = [
        head(**rows.take(np.arange(i, min(i + batch_size, len(rows)))).torch_inputs(device)).cpu()
        for i in range(0, len(rows), batch_size)
    ]
    return torch.cat(out, dim=1) if out else torch.zeros((head.k, 0, 3))


def _mean_nll(logits: torch.Tensor, y: torch.Tensor, temperature: float = 1.0) -> float:
    p = torch.softmax(logits / temperature, dim=-1).mean(0)
    return float(-torch.log(p[torch.arange(len(y)), y].clamp(min=1e-12)).mean())


def _fit_temperature(logits: torch.Tensor, y: torch.Tensor) -> float:
    """Temperature scaling on held-out: the T (grid, log-spaced) that minimises the ensemble's NLL."""
    grid = np.exp(np.linspace(np.log(0.5), np.log(4.0), 25))
    nll = [_mean_nll(logits, y, float(t)) for t in grid]
    return float(grid[int(np.argmin(nll))])


@dataclass
class _Paths:
    """`path_first_error` of some examples, worked out once per run: each solution's id, its path's
    positions among the examples, and its true first-error index."""

    solution_ids: list[str]
    positions: list[np.ndarray]
    truth: np.ndarray

    @classmethod
    def of(cls, examples: Sequence[StepExample]) -> _Paths:
        pos = {id(e): i for i, e in enumerate(examples)}
        ids, positions, truth = [], [], []
        for sid, (path, fe) in path_first_error(examples).items():
            ids.append(sid)
            positions.append(np.fromiter((pos[id(e)] for e in path), dtype=np.int64, count=len(path)))
            truth.append(fe)
        return cls(ids, positions, np.asarray(truth, dtype=np.int64))

    def sequences(self, p_negative: np.ndarray) -> list[np.ndarray]:
        """Per-solution path P(-1) sequences."""
        return [p_negative[i] for i in self.positions]


def path_grades(examples: Sequence[StepExample], paths: _Paths) -> list[str]:
    """Each path solution's graded-answer stratum (`GRADE_STRATA`)."""
    grade = {e.solution_id: e.answer_correct for e in examples}
    return [GRADE_STRATA[grade[sid]] for sid in paths.solution_ids]


def _whole_chains(seqs, solution_ids, grades, forced, chains: dict[str, np.ndarray]) -> list[np.ndarray]:
    """`seqs` with each solution of a `forced` stratum read on its whole chain where `chains` has it."""
    return [chains.get(sid, s) if g in forced else s for s, sid, g in zip(seqs, solution_ids, grades, strict=True)]


def evaluate(
    examples: Sequence[StepExample],
    head_probs: torch.Tensor,
    threshold: float,
    paths: _Paths | None = None,
    by_grade: dict[str, float | str] | None = None,
    chains: dict[str, np.ndarray] | None = None,
) -> dict:
    """Step metrics and first-error F1 for examples (with targets) given (K, n, 3) head probabilities;
    with `by_grade`, each solution's first error is read with its graded-answer stratum's threshold
    (`threshold` for a stratum it does not name), or at its most probable first error where the
    stratum's entry is `MOST_PROBABLE`, on its whole chain from `chains` (every step's P(-1), by
    solution id) where given: a chain cut at the labeled first error would favour it."""
    sc = scores_from_head_probs(head_probs)
    y = np.asarray([e.target + 1 for e in examples], dtype=np.int64)
    m = step_metrics(y, sc.probs)
    paths = paths or _Paths.of(examples)
    if len(paths.truth):
        seqs = paths.sequences(sc.p_negative)
        if by_grade:
            grades = path_grades(examples, paths)
            forced = {g for g, rule in by_grade.items() if rule == MOST_PROBABLE}
            seqs = _whole_chains(seqs, paths.solution_ids, grades, forced, chains or {})
            predicted = stratum_predictions(seqs, grades, by_grade, threshold)
        else:
            predicted = first_error_predictions(seqs, threshold)
        m.update(first_error_f1(predicted, paths.truth))
        m["first_error_f1_ci"] = first_error_f1_interval(predicted, paths.truth)
    return m


def _grade_only_f1(
    train_ex: Sequence[StepExample],
    tr_paths: _Paths,
    held_ex: Sequence[StepExample],
    he_paths: _Paths,
    chains: dict[str, np.ndarray],
) -> float | None:
    """Held-out first-error F1 of a reader with no PRM (`ml.prm.floor`): one constant first error
    per graded-answer stratum, fitted on the training solutions, so a lead can see how much the
    PRM reads beyond the grade. It needs each solution's whole length, which only the threshold
    pool's chains hold (a labeled path ends at its first error); None without them, or where no
    training solution is graded."""
    if not chains:
        return None

    def solutions(examples, paths):
        grades = path_grades(examples, paths)
        keep = [j for j, sid in enumerate(paths.solution_ids) if sid in chains]
        return (
            [grades[j] for j in keep],
            [len(chains[paths.solution_ids[j]]) for j in keep],
            paths.truth[keep],
        )

    tr_grades, tr_lengths, tr_truth = solutions(train_ex, tr_paths)
    he_grades, he_lengths, he_truth = solutions(held_ex, he_paths)
    if not he_grades or all(g == GRADE_STRATA[None] for g in tr_grades):
        return None  # nothing graded: no grade to read
    return floor_f1(he_grades, he_lengths, he_truth, fit_floor(tr_grades, tr_lengths, tr_truth))


def _out_of_bag(tr_probs: torch.Tensor, boot: torch.Tensor) -> np.ndarray:
    """Each training example's P(-1) from the members whose bootstrap left it out (all members'
    mean where none did): a model that fitted a label scores it too confidently, and a threshold
    chosen on such scores is set too high for steps it never saw."""
    p_tr = tr_probs[:, :, 0].numpy()
    out = (boot == 0).numpy()
    cnt = out.sum(0)
    return np.where(cnt > 0, (p_tr * out).sum(0) / np.maximum(cnt, 1), p_tr.mean(0))


def _threshold_scores(
    head: EnsembleHead,
    train_ex: Sequence[StepExample],
    oob: np.ndarray,
    pool: reweight.ThresholdPool,
    paths: _Paths,
    *,
    temperature: float,
    device: str,
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """The largest step P(-1) of each training solution (in `paths`' order) and of each solution of
    the pool's sample, what `ml.prm.reweight` weights the training solutions to the pool by; a step
    the model trained on is scored out of bag (by the members whose bootstrap left it out), so
    fitting its label does not inflate it (`oob`, from `_out_of_bag`). Third: every step's P(-1)
    of each labeled solution the pool holds (training and held-out), by solution id: a most
    probable first error reads the whole chain, not the steps labeled up to the first -1."""
    probs = torch.softmax(_logits(head, pool.rows, device) / temperature, dim=-1)
    p = probs.mean(0)[:, 0].numpy().astype(np.float64)
    starts = pool.starts()
    path_oob: dict[str, list[float]] = {}  # a training solution without Step rows: its path alone
    for i, e in enumerate(train_ex):
        if not e.on_path:
            continue
        path_oob.setdefault(e.solution_id, []).append(float(oob[i]))
        s = pool.labeled.get(e.solution_id)
        if s is not None and e.step_index < pool.lengths[s]:
            p[starts[s] + e.step_index] = oob[i]
    top = reweight.solution_max(p, pool.lengths)
    labeled = [top[pool.labeled[sid]] if sid in pool.labeled else max(path_oob[sid]) for sid in paths.solution_ids]
    chains = {sid: p[starts[s] : starts[s] + pool.lengths[s]] for sid, s in pool.labeled.items()}
    return np.asarray(labeled), top[pool.sample], chains


def train_prm(
    examples: Sequence[StepExample],
    config: PRMConfig | None = None,
    *,
    cache: FeatureCache | None = None,
    log: Callable[[str], None] | None = None,
    threshold_pool: reweight.ThresholdPool | None = None,
) -> dict:
    """Train an ensemble PRM on rated step examples; return a checkpoint dict.

    Split by problem into train / held-out (`config.heldout_fraction`; no held-out below 4
    problems), train with Adam and per-head bootstrap weights, stop when the held-out NLL has not
    improved for `config.patience` epochs and keep the best epoch, fit a temperature on the
    held-out set, choose the first-error threshold (one per graded-answer stratum with
    `grade_thresholds`) on the training solutions scored out of bag, and record held-out
    metrics. Pass a `FeatureCache` to reuse features across runs (steps never change).

    `threshold_pool`: feature rows of a random sample of the project's solutions and of every step
    of each training solution (`reweight.ThresholdPool`). With it, the training solutions count
    toward the threshold with `ml.prm.reweight` weights, so a threshold chosen on an actively
    chosen sample fits the pool it will flag.
    """
    cfg = config or PRMConfig()
    t0 = time.perf_counter()
    if cfg.num_threads > 0:
        torch.set_num_threads(cfg.num_threads)
    torch.manual_seed(cfg.seed)
    examples = [e for e in examples if e.target is not None]
    if not examples:
        raise ValueError("no rated examples to train on")
    cache = cache if cache is not None else FeatureCache(make_featurizer(cfg))
    featurizer = cache.featurizer
    tr_idx, he_idx = split_by_problem(examples, cfg.heldout_fraction, cfg.seed)
    # one random order for the run: training visits fixed batches of it (`TrainingBatches`)
    tr_idx = np.random.default_rng(cfg.seed).permutation(np.asarray(tr_idx, dtype=np.int64)).tolist()
    train_ex = [examples[i] for i in tr_idx]
    held_ex = [examples[i] for i in he_idx]
    side_dim = ANSWER_DIM if cfg.answer_input else 0
    x_tr = _with_answers(cache.get(train_ex), train_ex, side_dim)
    x_he = _with_answers(cache.get(held_ex), held_ex, side_dim) if held_ex else None
    y_tr = torch.tensor([e.target + 1 for e in train_ex], dtype=torch.long)
    y_he = torch.tensor([e.target + 1 for e in held_ex], dtype=torch.long)
    t_feat = time.perf_counter() - t0

    dev = cfg.device
    head = EnsembleHead(
        featurizer.dim,
        hidden=cfg.hidden_size,
        k=cfg.ensemble_size,
        sparse=featurizer.sparse,
        dropout=cfg.dropout,
        side_dim=side_dim,
    ).to(dev)
    base = _load_base(cfg, featurizer) if cfg.base_checkpoint else None
    anchors: list[tuple[torch.Tensor, torch.Tensor]] = []
    if base is not None:
        # a base trained without the answer columns (or this run without them) still fits: the
        # side weights start at zero, or are left out
        state = dict(base["state_dict"])
        if not side_dim:
            state.pop("side_weight", None)
        head.load_state_dict(state, strict="side_weight" in state or not side_dim)
        # L2 toward the base, not toward zero: a prior centred on what the base learned
        anchors = [(p, p.detach().clone()) for p in head.parameters()]
    # fused: one pass over the hashed table per step instead of six (11 ms -> 1 ms a step on 2 CPUs
    # for the default table); the same Adam update up to float rounding
    fused = torch.device(dev).type in ("cpu", "cuda")
    opt = torch.optim.Adam(head.parameters(), lr=cfg.lr, weight_decay=0.0 if anchors else cfg.weight_decay, fused=fused)
    gen = torch.Generator().manual_seed(cfg.seed)
    n = len(train_ex)
    k = cfg.ensemble_size
    boot = torch.poisson(torch.ones(k, n), generator=gen) if cfg.bootstrap and k > 1 else torch.ones(k, n)
    bs = max(32, min(cfg.batch_size, math.ceil(n / max(1, cfg.min_batches_per_epoch))))
    batches = TrainingBatches(x_tr, bs, dev)
    best_loss, best_state, best_epoch, bad = math.inf, None, -1, 0
    history = []
    if base is not None and x_he is not None:
        # the base model itself is the first candidate: fine-tuning is kept only where it helps
        best_loss = _mean_nll(_logits(head, x_he, dev), y_he)
        best_state = copy.deepcopy(head.state_dict())
        history.append({"epoch": -1, "heldout_nll": best_loss})
    for epoch in range(cfg.max_epochs):
        head.train()
        total = 0.0
        for j in batches.order(gen):
            a, b = batches.bounds[j]
            logits = head(**batches.inputs(j))  # (K, B, 3)
            yb = y_tr[a:b].to(dev)
            ce = F.cross_entropy(logits.reshape(-1, 3), yb.repeat(k), reduction="none").view(k, -1)
            loss = (ce * boot[:, a:b].to(dev)).sum() / (b - a)  # summed over heads: each gets a full gradient
            opt.zero_grad(set_to_none=True)
            loss.backward()
            for p, p0 in anchors:
                p.grad.add_(p.detach() - p0, alpha=cfg.base_l2)
            opt.step()
            total += float(loss.detach()) * (b - a)
        rec = {"epoch": epoch, "train_loss": total / n / k}
        if x_he is not None:
            rec["heldout_nll"] = _mean_nll(_logits(head, x_he, dev), y_he)
            if rec["heldout_nll"] < best_loss - 1e-4:
                best_loss, best_state, best_epoch, bad = rec["heldout_nll"], copy.deepcopy(head.state_dict()), epoch, 0
            else:
                bad += 1
        history.append(rec)
        if log:
            log(" ".join(f"{k_}={v:.4f}" if isinstance(v, float) else f"{k_}={v}" for k_, v in rec.items()))
        if x_he is not None and bad >= cfg.patience:
            break
    if best_state is not None:
        head.load_state_dict(best_state)
    else:
        best_epoch = history[-1]["epoch"]

    temperature = 1.0
    metrics: dict = {}
    if x_he is not None:
        he_logits = _logits(head, x_he, dev)
        if cfg.calibrate:
            temperature = _fit_temperature(he_logits, y_he)
    # first-error threshold: from the config, or the best one on the training solutions
    tr_probs = torch.softmax(_logits(head, x_tr, dev) / temperature, dim=-1)
    threshold = cfg.first_error_threshold
    tr_paths = _Paths.of(train_ex)
    by_grade = None
    chains: dict[str, np.ndarray] = {}
    if threshold is None:
        oob = _out_of_bag(tr_probs, boot)
        seqs, truth = tr_paths.sequences(oob), tr_paths.truth
        grades = path_grades(train_ex, tr_paths)
        weights = grade_weights = None
        pool = threshold_pool
        if pool is not None and len(pool.sample) and pool.labeled and len(truth):
            lab_top, pool_top, chains = _threshold_scores(
                head, train_ex, oob, pool, tr_paths, temperature=temperature, device=dev
            )
            weights = reweight.population_weights(lab_top, pool_top)
            if pool.grades is not None:
                grade_weights = reweight.stratified_population_weights(
                    lab_top, pool_top, grades, pool.grades[pool.sample]
                )
            metrics["threshold_weights"] = {
                "population": len(pool.sample),
                "max": round(float(weights.max()), 3),
                "min": round(float(weights.min()), 3),
            }
        threshold = choose_threshold(seqs, truth, weights=weights) if len(truth) else 0.5
        if cfg.grade_thresholds and side_dim and len(truth):
            # the head reads the grade, so the grade also says how high a first error runs: one
            # threshold per stratum (bench/results/simulation_notes.md, session 16); a graded-wrong
            # answer always holds one, so it is read at its most probable first error, on its whole
            # chain, which only the pool holds (session 17)
            forced = {GRADE_STRATA[False]} if cfg.forced_wrong and chains else set()
            by_grade = choose_stratum_thresholds(
                _whole_chains(seqs, tr_paths.solution_ids, grades, forced, chains),
                truth,
                grades,
                weights=grade_weights,
                forced=forced,
            )
    metrics["train"] = evaluate(train_ex, tr_probs, threshold, tr_paths, by_grade, chains)
    if x_he is not None:
        he_paths = _Paths.of(held_ex)
        metrics["heldout"] = evaluate(
            held_ex, torch.softmax(he_logits / temperature, dim=-1), threshold, he_paths, by_grade, chains
        )
        grade_only = _grade_only_f1(train_ex, tr_paths, held_ex, he_paths, chains)
        if grade_only is not None:
            metrics["heldout"]["grade_only_f1"] = grade_only
    label_counts = np.bincount(np.asarray([e.target + 1 for e in examples]), minlength=3)
    return {
        "version": CHECKPOINT_VERSION,
        "config": cfg.to_dict(),
        "featurizer": featurizer.spec(),
        "input_dim": int(featurizer.dim),
        "sparse": bool(featurizer.sparse),
        "side_dim": side_dim,
        "state_dict": {k_: v.detach().cpu() for k_, v in head.state_dict().items()},
        "temperature": float(temperature),
        "threshold": float(threshold),
        "thresholds_by_grade": by_grade,
        "metrics": metrics,
        "history": history,
        "best_epoch": int(best_epoch),
        "label_count": len(examples),
        "label_counts": {"-1": int(label_counts[0]), "0": int(label_counts[1]), "1": int(label_counts[2])},
        "n_train": len(train_ex),
        "n_heldout": len(held_ex),
        "n_problems": len({e.problem_id for e in examples}),
        # problems a held-out split can draw from: automatic labels (train_only) never are
        "n_problems_holdable": len({e.problem_id for e in examples if not e.train_only}),
        "base": None if base is None else {"path": cfg.base_checkpoint, "label_count": base.get("label_count")},
        "seconds": {"features": round(t_feat, 3), "total": round(time.perf_counter() - t0, 3)},
    }


def _with_answers(rows: Rows, examples: Sequence[StepExample], side_dim: int) -> Rows:
    return rows.with_side(answer_block_for_examples(examples)) if side_dim else rows


def _load_base(cfg: PRMConfig, featurizer) -> dict:
    """The base checkpoint to fine-tune from; ConfigError("base_checkpoint") unless it exists and
    has this config's featurizer and head shape."""
    if not os.path.isfile(cfg.base_checkpoint):
        raise ConfigError("base_checkpoint", f"no such file: {cfg.base_checkpoint}")
    base = read_checkpoint(cfg.base_checkpoint)
    base_cfg = base.get("config", {})
    differs = [
        name
        for name, mine, theirs in (
            (
                "featurizer",
                json.dumps(featurizer.spec(), sort_keys=True),
                json.dumps(base.get("featurizer"), sort_keys=True),
            ),
            ("hidden_size", cfg.hidden_size, base_cfg.get("hidden_size")),
            ("ensemble_size", cfg.ensemble_size, base_cfg.get("ensemble_size")),
        )
        if mine != theirs
    ]
    if differs:
        raise ConfigError("base_checkpoint", f"trained with another {', '.join(differs)} than this config")
    return base


def build_prm(checkpoint: dict, *, featurizer=None, cache: FeatureCache | None = None) -> PRM:
    """A PRM from a checkpoint dict; pass the featurizer (or a cache) to reuse one already loaded."""
    cfg = PRMConfig.from_dict(checkpoint["config"])
    if cache is not None:
        featurizer = cache.featurizer
    featurizer = featurizer or make_featurizer(spec=checkpoint["featurizer"])
    head = EnsembleHead(
        checkpoint["input_dim"],
        hidden=cfg.hidden_size,
        k=cfg.ensemble_size,
        sparse=checkpoint["sparse"],
        dropout=cfg.dropout,
        side_dim=checkpoint.get("side_dim", 0),  # 0: a checkpoint from before answer_input
    )
    head.load_state_dict(checkpoint["state_dict"])
    prm = PRM(
        featurizer=featurizer,
        head=head,
        temperature=checkpoint["temperature"],
        threshold=checkpoint["threshold"],
        thresholds_by_grade=checkpoint.get("thresholds_by_grade"),  # absent before session 16
        config=cfg,
    )
    if cache is not None:
        prm.cache = cache
    return prm


def save_checkpoint(checkpoint: dict, path: str | os.PathLike) -> str:
    """Write atomically: a temp file in the same directory, fsync, then os.replace (a crash leaves the old file)."""
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".pt", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(checkpoint, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def read_checkpoint(path: str | os.PathLike) -> dict:
    return torch.load(os.fspath(path), map_location="cpu", weights_only=True)


def load_checkpoint(path: str | os.PathLike, *, featurizer=None) -> PRM:
    return build_prm(read_checkpoint(path), featurizer=featurizer)
