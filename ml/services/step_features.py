"""Step features on disk (ml.prm.feature_store): featurized once per step by a worker after an
import, then read by every rescoring and retraining instead of featurized again.

Two key spaces per featurizer spec (settings.ML_FEATURE_STORE_ROOT/<spec digest>/):
- `steps-<project>`: a project's Step rows by id, so a rescoring reads ids from the database and
  never the step texts. The directory also names the project's creation time: ids start over in a
  new database (a test run, a reset demo) and must never meet rows of the old one.
- `contexts`: training examples by their step_key (a hash of problem, previous steps and step):
  annotations carry their own completion texts, which need not be Step rows.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from django.conf import settings
from django.db import connection

from annotate.models import Project, Solution, Step
from core.models import JobStatus

if TYPE_CHECKING:
    from ml.prm.feature_rows import Rows
    from ml.prm.feature_store import FeatureStore
    from ml.prm.featurizers import Featurizer

logger = logging.getLogger("ml.services")

# Solutions whose steps the import task featurizes and stores together (one segment each): large,
# so a 1M-step import writes about a dozen segments instead of rewriting the store in merges.
FEATURIZE_BATCH_SOLUTIONS = 10_000


def store_root() -> Path:
    return Path(settings.ML_FEATURE_STORE_ROOT or Path(settings.MEDIA_ROOT) / "features")


def _spec_dir(featurizer: Featurizer) -> Path:
    return _spec_dir_of(featurizer.spec())


def _spec_dir_of(spec: dict) -> Path:
    from ml.prm.feature_store import spec_digest
    from ml.prm.featurizers import FEATURE_CODE_VERSION

    return store_root() / spec_digest(spec, code_version=FEATURE_CODE_VERSION)


_stores: dict[Path, FeatureStore] = {}


def _store(path: Path) -> FeatureStore:
    from ml.prm.feature_store import FeatureStore

    store = _stores.get(path)
    if store is None:  # one per process: it keeps the merged key index between calls
        store = _stores[path] = FeatureStore(path)
    return store


def project_dir_name(project: Project) -> str:
    """Taken while the row exists when it is deleted: Django clears a deleted instance's pk."""
    return f"steps-{project.pk}-{int(project.created_at.timestamp() * 1_000_000)}"


def project_store(project: Project, featurizer: Featurizer) -> FeatureStore:
    return _store(_spec_dir(featurizer) / project_dir_name(project))


def drop_project_stores(name: str) -> int:
    """Remove a deleted project's stored step features (every featurizer's) by `project_dir_name`;
    returns directories. Plain file work, no torch: it runs in whichever process deleted it."""
    import shutil

    dirs = [d for d in store_root().glob(f"*/{name}") if d.is_dir()]
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)
    _stores.clear()
    return len(dirs)


def orphaned_project_stores() -> list[Path]:
    """Project store directories (any featurizer's) of no project in this database: a project
    deleted while its directory could not be removed, or a database made anew (a test run, a
    reset demo) under the same MEDIA_ROOT. Features are a cache, so removing these loses nothing."""
    live = {project_dir_name(p) for p in Project.objects.only("pk", "created_at")}
    return sorted(d for d in store_root().glob("*/steps-*") if d.is_dir() and d.name not in live)


def live_spec_dirs() -> set[Path]:
    """Featurizer-spec directories something may still read: the deployment's default
    featurizer's (imports featurize with it), each active model's (rescoring reads its
    checkpoint's spec) and each waiting or running run's. Reads the active checkpoints, so it
    loads torch; builds no featurizer (a dense one would load its model)."""
    from annotate.models import TaskKind
    from ml.models import TrainingRun
    from ml.prm.featurizers import config_spec
    from ml.services.config import artifact_abspath, training_config
    from ml.services.prm_lib import lib

    dirs = {_spec_dir_of(config_spec(training_config()))}
    prm_runs = TrainingRun.objects.exclude(project__task_kind=TaskKind.COMPARE)  # reward models store none
    for relative in prm_runs.filter(is_active=True).exclude(artifact_path="").values_list("artifact_path", flat=True):
        path = artifact_abspath(relative)
        if path.exists():
            dirs.add(_spec_dir_of(lib.read_checkpoint(path)["featurizer"]))
    pending = prm_runs.filter(status__in=[JobStatus.CREATED, JobStatus.RUNNING])
    for config in pending.values_list("config", flat=True):
        overrides = {k: v for k, v in (config or {}).items() if k != "extra"}
        dirs.add(_spec_dir_of(config_spec(training_config(overrides=overrides))))
    return dirs


def stale_spec_dirs() -> list[Path]:
    """Whole featurizer-spec directories (project stores and training contexts) that nothing
    reads any more (`live_spec_dirs`): a FEATURE_CODE_VERSION bump or a changed default
    featurizer leaves the old one behind. Features are a cache: a later reader recomputes them."""
    if not store_root().is_dir():
        return []
    live = live_spec_dirs()
    return sorted(d for d in store_root().iterdir() if d.is_dir() and d not in live)


def context_store(featurizer: Featurizer) -> FeatureStore:
    return _store(_spec_dir(featurizer) / "contexts")


@dataclass
class StepRows:
    """Steps of some solutions, ordered by solution and index: ids and types, no texts."""

    step_id: np.ndarray  # int64
    solution_id: np.ndarray  # int64
    step_type: list[str]

    def __len__(self) -> int:
        return len(self.step_id)


def step_rows(solution_ids: list[int]) -> StepRows:
    if connection.vendor == "postgresql":  # one array parameter: no per-id work in the ORM
        table = connection.ops.quote_name(Step._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id, solution_id, step_type FROM {table} WHERE solution_id = ANY(%s) "
                "ORDER BY solution_id, index",
                [list(solution_ids)],
            )
            rows = cursor.fetchall()
    else:
        qs = Step.objects.filter(solution_id__in=solution_ids).order_by("solution_id", "index")
        rows = list(qs.values_list("id", "solution_id", "step_type"))
    return StepRows(
        step_id=np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)),
        solution_id=np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows)),
        step_type=[r[2] for r in rows],
    )


def step_inputs(solution_ids) -> dict[int, tuple[str, tuple[str, ...], str, int]]:
    """Per step id of these solutions: (problem, previous steps, step text, index), what a
    featurizer reads. The one place that rebuilds a step's context from the Step rows."""
    problems = dict(Solution.objects.filter(pk__in=solution_ids).values_list("id", "problem__text"))
    out: dict[int, tuple[str, tuple[str, ...], str, int]] = {}
    current, previous = None, ()
    rows = Step.objects.filter(solution_id__in=solution_ids).order_by("solution_id", "index")
    for step_id, solution_id, index, text in rows.values_list("id", "solution_id", "index", "text").iterator(
        chunk_size=5000
    ):
        if solution_id != current:
            current, previous = solution_id, ()
        out[step_id] = (problems[solution_id], previous, text, index)
        previous = (*previous, text)
    return out


def features_for_steps(
    *, project: Project, featurizer: Featurizer, rows: StepRows, on_computed: Callable[[int], None] | None = None
) -> Rows:
    """Feature rows of these steps, in order: from the store, the missing ones featurized (their
    texts read) and stored."""
    from ml.prm.feature_rows import featurize

    def compute(missing: np.ndarray) -> Rows:
        inputs = step_inputs(np.unique(rows.solution_id[missing]).tolist())
        return featurize(featurizer, [inputs[i][:3] for i in rows.step_id[missing].tolist()])

    feats, computed = project_store(project, featurizer).rows(rows.step_id, compute)
    if on_computed and computed:
        on_computed(computed)
    return feats


def solution_grades(solution_ids) -> dict[int, bool | None]:
    """Each solution's graded `answer_correct` (None: ungraded), in one query."""
    return dict(Solution.objects.filter(pk__in=list(solution_ids)).values_list("id", "answer_correct"))


def answer_columns(rows: StepRows, graded: dict[int, bool | None] | None = None) -> np.ndarray:
    """The graded-answer side columns (`ml.prm.answer_input`) of these steps, from their
    solutions' `answer_correct` (`graded`, else one query for the distinct solutions), no step text."""
    from ml.prm.answer_input import answer_block, positions_within

    ids, inverse = np.unique(rows.solution_id, return_inverse=True)
    graded = solution_grades(ids.tolist()) if graded is None else graded
    codes = np.asarray([-1 if graded.get(i) is None else int(graded[i]) for i in ids.tolist()], dtype=np.int8)
    return answer_block(codes[inverse], positions_within(rows.solution_id))


def featurize_project_steps(*, project_id: int, featurizer: Featurizer | None = None) -> int:
    """Store features of every step of the project not stored yet (after an import); returns how
    many were featurized. Idempotent: a second delivery finds them stored."""
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return 0
    if featurizer is None:
        from ml.prm.featurizers import make_featurizer
        from ml.services.config import training_config

        featurizer = make_featurizer(training_config())
    store = project_store(project, featurizer)
    solution_ids = list(Solution.objects.filter(project=project).order_by("id").values_list("id", flat=True))
    done = 0
    for start in range(0, len(solution_ids), FEATURIZE_BATCH_SOLUTIONS):
        rows = step_rows(solution_ids[start : start + FEATURIZE_BATCH_SOLUTIONS])
        if store.contains(rows.step_id).all():
            continue
        counted: list[int] = []
        features_for_steps(project=project, featurizer=featurizer, rows=rows, on_computed=counted.append)
        done += sum(counted)
    logger.info("featurized %s steps of project %s", done, project_id)
    return done
