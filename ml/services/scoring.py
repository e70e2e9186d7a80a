"""Scoring open solutions with a PRM, writing queue priorities, rescoring, rollback, and the scoring API."""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from django.conf import settings

from annotate.models import Project, QueueOrigin, Solution, Strategy, TaskKind
from annotate.queue_order import route_controls
from annotate.queue_positions import write_positions
from core.bulk_insert import copy_arrays
from ml.models import StepScore, TrainingRun
from ml.prm.answer_input import GRADE_STRATA
from ml.prm.config import PRMConfig
from ml.prm.metrics import first_error_predictions
from ml.services.config import (
    FEATURE_CACHE_MAX_ROWS,
    SCORE_BATCH_SOLUTIONS,
    NoActiveModel,
    artifact_abspath,
)
from ml.services.prm_lib import lib
from ml.services.step_features import answer_columns, context_store, features_for_steps, step_rows
from prm800k.kinds import UNRATED_STEP_TYPES

if TYPE_CHECKING:
    from ml.prm.feature_rows import FeatureCache
    from ml.prm.model import PRM


logger = logging.getLogger("ml.services")

_cache_lock = threading.Lock()
_feature_caches: dict[str, FeatureCache] = {}


def feature_cache(config: PRMConfig) -> FeatureCache:
    """One cache per featurizer per process: steps never change, so their features are reused
    across runs; it starts over past FEATURE_CACHE_MAX_ROWS to bound memory, and behind it the
    disk store of training contexts (ml.services.step_features) keeps them between processes."""
    featurizer = lib.make_featurizer(config)
    key = json.dumps(featurizer.spec(), sort_keys=True)
    with _cache_lock:
        cache = _feature_caches.get(key)
        if cache is None or len(cache) > FEATURE_CACHE_MAX_ROWS:
            cache = _feature_caches[key] = lib.FeatureCache(featurizer, store=context_store(featurizer))
        return cache


@dataclass
class Selection:
    """Per open solution: new priority and verifier score, from one run with one strategy."""

    run_id: int
    strategy: str
    solution_ids: np.ndarray
    priority: np.ndarray
    score: np.ndarray
    n_steps: int = 0
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)
    # Solution.strategy per solution: the strategy, or "control" for the random control share
    origins: list[str] = field(default_factory=list)


def _open_solution_ids(project: Project) -> list[int]:
    return list(
        Solution.objects.filter(project=project, is_open=True, is_gold=False, is_screening=False)
        .order_by("id")
        .values_list("id", flat=True)
    )


def _score_batches(
    *, project: Project, ids: list[int], prm: PRM, skip_types: tuple[str, ...] = ()
) -> Iterator[tuple[list[int], list[int], list[int], Any, Any, np.ndarray]]:
    """(solution ids, step counts, step ids, StepScores, (per-head P(-1), feature rows), mask of
    the steps nobody rates) per batch of solutions; StepScores and the pair are None when the batch
    has no steps. skip_types: step types shown but not rated (a trace's observations). Features
    come from the project's step feature store (ml.services.step_features): a step featurized by
    the import task or an earlier rescoring is only read, and its text is never fetched."""
    for start in range(0, len(ids), SCORE_BATCH_SOLUTIONS):
        chunk = ids[start : start + SCORE_BATCH_SOLUTIONS]
        rows = step_rows(chunk)
        position = {sid: i for i, sid in enumerate(chunk)}
        counts = np.bincount([position[s] for s in rows.solution_id.tolist()], minlength=len(chunk)).tolist()
        mask = np.asarray([t in skip_types for t in rows.step_type], dtype=bool)
        step_ids = rows.step_id.tolist()
        if not len(rows):
            yield chunk, counts, step_ids, None, None, mask
            continue
        feats = features_for_steps(project=project, featurizer=prm.featurizer, rows=rows)
        if prm.head.side_dim:
            feats = feats.with_side(answer_columns(rows))
        head_p = prm.head_probs(feats)
        head_neg = head_p[:, :, 0].numpy().copy()  # a copy: head_p stays as the model gave it
        head_neg[:, mask] = 0.0  # steps nobody rates are never where a label pass finds the error
        yield chunk, counts, step_ids, lib.scores_from_head_probs(head_p), (head_neg, feats), mask


DIVERSE_TOP = 2000  # the most valuable solutions are ordered for diversity; the rest by value


def _top_sketches(v: np.ndarray, value_l: list[np.ndarray], feats, lengths: list[int]) -> np.ndarray:
    """Sketches (for batch diversity) of this batch's solutions that can still be among the
    DIVERSE_TOP most valuable so far; zeros for the rest, which are ordered by value alone. Only
    those rows are sketched, so a million open steps cost little more than the top few thousand."""
    seen = np.concatenate(value_l)
    bar = -np.inf if len(seen) <= DIVERSE_TOP else np.partition(seen, -DIVERSE_TOP)[-DIVERSE_TOP]
    keep = np.flatnonzero(v >= bar)
    out = np.zeros((len(v), 64), dtype=np.float32)
    if len(keep):
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        rows = np.concatenate([np.arange(starts[i], starts[i] + lengths[i]) for i in keep])
        sub = feats.take(rows)
        kept = [lengths[i] for i in keep]
        out[keep] = (
            lib.solution_sketch(sub.indptr, sub.indices, sub.values, kept)
            if sub.sparse
            else lib.dense_sketch(sub.dense, kept)
        )
    return out


def score_open_solutions(
    *, project: Project, run: TrainingRun, prm: PRM, log: Callable[[str], None] | None = None
) -> Selection:
    """Score every open regular solution's steps with `prm`; store StepScore rows for `run`;
    return the new priorities by the project's selection strategy (nothing in the queue changes
    yet: see `apply_selection`)."""
    t0 = time.perf_counter()
    config = prm.config or PRMConfig()
    ids = _open_solution_ids(project)
    StepScore.objects.filter(training_run=run).delete()  # a rescore of the same run starts over
    all_ids, prod_l, unc_l, disagree_l, value_l, sketch_l, length_l = [], [], [], [], [], [], []
    n_steps = 0
    disagreement_first = _disagreement_first(project)
    strategy = project.selection_strategy or Strategy.ANSWER_STRATIFIED
    correct = dict(Solution.objects.filter(pk__in=ids).values_list("id", "answer_correct")) if ids else {}
    # Steps shown but not rated (trace observations) neither lower a solution's score nor make it
    # uncertain: nobody would label them.
    skip = () if project.rate_observations else UNRATED_STEP_TYPES
    batches = _score_batches(project=project, ids=ids, prm=prm, skip_types=skip)
    for chunk, lengths, step_ids, sc, extra, unrated in batches:
        if disagreement_first:
            disagree_l.append(_auto_disagreement(chunk, lengths, None if sc is None else sc.p_negative))
        if sc is None:
            prod, unc = np.ones(len(chunk)), np.zeros(len(chunk))
            value_l.append(np.zeros(len(chunk)))
            sketch_l.append(np.zeros((len(chunk), 64), dtype=np.float32))
        else:
            if strategy == Strategy.VALUE:
                # value of a label pass: what it teaches about where the first error is, per expected label
                head_neg, feats = extra
                v = lib.value_per_label(head_neg, lengths, [correct.get(i) for i in chunk])["value"]
                value_l.append(v)
                sketch_l.append(_top_sketches(v, value_l, feats, lengths))
            prod, _ = lib.solution_scores(np.where(unrated, 0.0, sc.p_negative), lengths)
            step_unc = np.where(unrated, 0.0, sc.uncertainty(config.uncertainty))
            unc = lib.roll_up(step_unc, lengths, "max")
            if settings.ML_STORE_STEP_SCORES:
                probs = np.asarray(sc.probs, dtype=np.float64)
                copy_arrays(
                    StepScore,
                    {
                        "step_id": np.asarray(step_ids, dtype=np.int64),
                        "training_run_id": np.full(len(step_ids), run.pk, dtype=np.int64),
                        "p_negative": probs[:, 0],
                        "p_neutral": probs[:, 1],
                        "p_positive": probs[:, 2],
                        "uncertainty": np.asarray(step_unc, dtype=np.float64),
                    },
                )
        all_ids += chunk
        length_l += lengths
        prod_l.append(prod)
        unc_l.append(unc)
        n_steps += len(step_ids)
        if log:
            log(f"scored {len(all_ids)}/{len(ids)} solutions ({n_steps} steps)")
    score = np.concatenate(prod_l) if prod_l else np.zeros(0)
    unc = np.concatenate(unc_l) if unc_l else np.zeros(0)
    if strategy == Strategy.VALUE:
        # the most valuable solutions in diverse order (near-copies wait), the rest by value
        pri = (
            lib.diverse_priority(np.concatenate(value_l), np.concatenate(sketch_l), top=DIVERSE_TOP)
            if value_l
            else np.zeros(0)
        )
    else:
        pri = lib.priorities(
            strategy,
            scores=score,
            answer_correct=[correct.get(i) for i in all_ids],
            solution_uncertainty=unc,
            rng=np.random.default_rng(run.pk),
            n=len(all_ids),
            lengths=length_l,
        )
    if disagreement_first and len(all_ids):
        pri = lib.disagreement_first(pri, np.concatenate(disagree_l))
    share = 0.0 if strategy == Strategy.RANDOM else project.control_share
    pri, is_control = route_controls(pri, share, random.Random(run.pk))
    return Selection(
        run_id=run.pk,
        strategy=strategy,
        solution_ids=np.asarray(all_ids, dtype=np.int64),
        priority=np.asarray(pri, dtype=np.float64),
        score=score,
        origins=[QueueOrigin.CONTROL.value if c else strategy for c in is_control],
        n_steps=n_steps,
        seconds=round(time.perf_counter() - t0, 3),
    )


def _disagreement_first(project: Project) -> bool:
    from autolabel.models import AutolabelSettings

    return AutolabelSettings.objects.filter(project=project, disagreement_first=True).exists()


def _auto_disagreement(chunk: list[int], lengths: list[int], p_negative) -> np.ndarray:
    """Per solution of a scored batch: how far the PRM is from its automatic labels (NaN: none)."""
    from autolabel.selectors import auto_labels_by_solution, preferred

    labels = auto_labels_by_solution(chunk)
    out, start = np.full(len(chunk), np.nan), 0
    for i, (solution_id, n) in enumerate(zip(chunk, lengths, strict=True)):
        if p_negative is not None and solution_id in labels:
            out[i] = lib.auto_disagreement(p_negative[start : start + n], preferred(labels[solution_id]))
        start += n
    return out


def apply_selection(*, selection: Selection, generation: int) -> int:
    """Write priorities and provenance to the solutions in short transactions; returns rows."""
    return write_positions(
        ids=selection.solution_ids.tolist(),
        priority=selection.priority.tolist(),
        origin=selection.origins or [selection.strategy] * len(selection.solution_ids),
        score=selection.score.tolist(),
        generation=generation,
        model_run_id=selection.run_id,
    )


def drop_other_scores(*, project: Project, run: TrainingRun) -> None:
    """Keep only the active model's step scores (a rollback rescores with the older model)."""
    StepScore.objects.filter(training_run__project=project).exclude(training_run=run).delete()


def rescore_project(*, project: Project, run: TrainingRun, log: Callable[[str], None] | None = None) -> int:
    """Score the open solutions with `run`'s model and reorder the queue; returns rows updated. A
    compare project's run is a reward model: its open pairs are scored and reordered instead (read
    as a PRM, its file failed every rollback, which then put the previous model back)."""
    if project.task_kind == TaskKind.COMPARE:
        from ml.services import reward

        scored = reward.score_open_pairs(
            project=project, model=reward.load_reward_model(artifact_abspath(run.artifact_path))
        )
        reward.apply_pair_scores(scored)
        return len(scored)
    prm = load_prm(run=run)
    selection = score_open_solutions(project=project, run=run, prm=prm, log=log)
    project.refresh_from_db(fields=["current_generation"])
    n = apply_selection(selection=selection, generation=project.current_generation)
    drop_other_scores(project=project, run=run)
    return n


_PRM_CACHE_SIZE = 4
_score_lock = threading.Lock()
_prms: OrderedDict[int, PRM] = OrderedDict()


def remember_prm(run_id: int, prm: PRM) -> None:
    with _cache_lock:
        _prms[run_id] = prm
        _prms.move_to_end(run_id)
        while len(_prms) > _PRM_CACHE_SIZE:
            _prms.popitem(last=False)


def load_prm(*, run: TrainingRun) -> PRM:
    """The run's PRM, loaded once per process (runs are immutable once succeeded)."""
    with _cache_lock:
        prm = _prms.get(run.pk)
    if prm is None:
        checkpoint = lib.read_checkpoint(artifact_abspath(run.artifact_path))
        prm = lib.build_prm(checkpoint)
        remember_prm(run.pk, prm)
    return prm


def active_run(*, project: Project) -> TrainingRun | None:
    return TrainingRun.objects.filter(project=project, is_active=True).first()


def first_error_threshold(prm: PRM) -> float:
    """The P(-1) threshold a candidate sent for scoring is read with: it has no graded answer, so
    the run's threshold for ungraded solutions where it chose one, else its one threshold."""
    ungraded = prm.thresholds_by_grade.get(GRADE_STRATA[None])
    return float(ungraded) if isinstance(ungraded, int | float) else prm.threshold


def score_steps(*, project: Project, problem: str, solutions: list[list[str]]) -> dict[str, Any]:
    """Per-step P(+1), P(0), P(-1) and uncertainty, both solution scores (product of P(not -1),
    minimum) and the predicted first error (the first step over the run's threshold, None when no
    step passes it), for candidate solutions of one problem under the active model."""
    run = active_run(project=project)
    if run is None:
        raise NoActiveModel(
            f"Project {project.slug} has no active model yet: start a training run "
            f"(POST /api/v1/projects/{project.slug}/training-runs/) and score once it has succeeded."
        )
    prm = load_prm(run=run)
    items = [(problem, tuple(steps[:i]), step) for steps in solutions for i, step in enumerate(steps)]
    lengths = [len(steps) for steps in solutions]
    with _score_lock:  # one scoring at a time per process: torch already uses every core
        sc = prm.score_rows(lib.featurize(prm.featurizer, items))
    prod, mins = lib.solution_scores(sc.p_negative, lengths)
    unc = sc.uncertainty("entropy")
    threshold = first_error_threshold(prm)
    first = first_error_predictions(np.split(sc.p_negative, np.cumsum(lengths)[:-1]), threshold)
    scored, o = [], 0
    for j, n in enumerate(lengths):
        steps = [
            {"p_positive": float(p[2]), "p_neutral": float(p[1]), "p_negative": float(p[0]), "uncertainty": float(u)}
            for p, u in zip(sc.probs[o : o + n], unc[o : o + n], strict=True)
        ]
        fe = int(first[j])
        scored.append(
            {
                "steps": steps,
                "score_product": float(prod[j]),
                "score_min": float(mins[j]),
                "first_error": fe if fe >= 0 else None,
            }
        )
        o += n
    return {
        "model": {
            "training_run": run.pk,
            "generation": project.current_generation,
            "first_error_threshold": threshold,
        },
        "solutions": scored,
    }
