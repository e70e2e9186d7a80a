"""Step features in the app (ml.services.step_features): an import's steps are featurized once by
the worker, a rescoring then reads them by step id, never the step texts, and scores exactly as a
featurizer run from scratch would."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from annotate.models import Project, Solution, Step
from annotate.services import imports
from ml import services
from ml.prm.featurizers import make_featurizer
from ml.services import step_features
from ml.services.config import training_config
from ml.services.scoring import load_prm, score_open_solutions
from tests.celery_worker import celery_worker, purge_broker, wait_for
from tests.ml.loop_helpers import TINY, planted_project

FIXTURE = Path(__file__).parents[1] / "annotate" / "fixtures" / "edge_cases.jsonl"


def _stored(project: Project, featurizer) -> np.ndarray:
    ids = list(Step.objects.filter(solution__project=project).values_list("id", flat=True))
    return step_features.project_store(project, featurizer).contains(ids)


@pytest.mark.django_db(transaction=True)
def test_an_import_has_its_steps_featurized_by_the_worker():
    project = Project.objects.create(slug="feat-import", name="Featurized on import")
    purge_broker()
    with celery_worker(queues="ml"):
        result = imports.import_file(project=project, path=FIXTURE)
        assert result.steps_created > 0
        featurizer = make_featurizer(training_config())
        wait_for(lambda: _stored(project, featurizer).all(), timeout=90, message="the import's step features")
    stored = _stored(project, featurizer)
    assert len(stored) == Step.objects.filter(solution__project=project).count() == result.steps_created
    # a second delivery of the task finds everything stored
    assert step_features.featurize_project_steps(project_id=project.pk, featurizer=featurizer) == 0


@pytest.mark.django_db(transaction=True)
def test_an_import_into_a_project_with_a_model_is_scored_by_it(tmp_path):
    """New solutions are served by the project's strategy with the active model, not ahead of every
    model-scored solution under their cold-start priority until the next retrain."""
    project = planted_project("feat-active", labeled=60, open_=10, strategy="uncertainty")
    lines = tmp_path / "new.jsonl"
    lines.write_text(
        "".join(
            json.dumps({"problem": f"What is {n} + {n}?", "ground_truth_answer": str(2 * n), "steps": steps}) + "\n"
            for n, steps in enumerate(
                [
                    ["We add.", f"# Answer\n\n{2 * n}"] if n % 2 else ["We add wrongly.", "# Answer\n\n1"]
                    for n in range(8)
                ]
            )
        )
    )
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY):
        run = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
        assert run.status == "succeeded", run.error
        before = set(Solution.objects.filter(project=project).values_list("pk", flat=True))
        purge_broker()
        with celery_worker(queues="ml"):
            assert imports.import_file(project=project, path=lines).solutions_created == 8
            new = Solution.objects.filter(project=project).exclude(pk__in=before)
            assert set(new.values_list("strategy", flat=True)) <= {"cold_start", "control"}  # as imported
            wait_for(lambda: not new.filter(strategy="cold_start").exists(), timeout=90, message="the model's order")
    assert new.count() == 8 and set(new.values_list("strategy", flat=True)) == {"uncertainty"}
    # one scale with the solutions the model scored before: its uncertainty, not a cold-start tier (2.x)
    assert max(Solution.objects.filter(project=project, is_open=True).values_list("priority", flat=True)) < 2.0


@pytest.mark.django_db
@pytest.mark.parametrize("featurizer", ["hashed_ngram", "minilm_hashed"])
def test_rescoring_reads_stored_features_and_scores_as_a_cold_start(tmp_path, featurizer):
    project = planted_project("feat", labeled=60, open_=25)
    with override_settings(MEDIA_ROOT=tmp_path / "a", ML_TRAINING_CONFIG={**TINY, "featurizer": featurizer}):
        run = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
        assert run.status == "succeeded", run.error
        prm = load_prm(run=run)
        assert prm.featurizer.spec()["name"] == featurizer
        # the run's scoring stored every open step, and its threshold pool (a sample of the project,
        # here all of it, and every labeled solution) the rest: nothing is left for the import task
        open_steps = Step.objects.filter(solution__project=project, solution__is_open=True).count()
        assert _stored(project, prm.featurizer).sum() == Step.objects.filter(solution__project=project).count()
        assert step_features.featurize_project_steps(project_id=project.pk, featurizer=prm.featurizer) == 0
        with CaptureQueriesContext(connection) as queries:
            warm = score_open_solutions(project=project, run=run, prm=prm)
    step_table = Step._meta.db_table
    step_reads = [q["sql"] for q in queries.captured_queries if step_table in q["sql"]]
    assert step_reads and not [sql for sql in step_reads if '"text"' in sql or " text" in sql]
    assert warm.n_steps == open_steps

    # the same model in a fresh store (every feature computed again) orders the queue identically
    step_features._stores.clear()
    with override_settings(MEDIA_ROOT=tmp_path / "b"):
        assert not Path(settings.MEDIA_ROOT, "features").exists()
        cold = score_open_solutions(project=project, run=run, prm=prm)
        assert _stored(project, prm.featurizer).sum() == open_steps
    np.testing.assert_array_equal(cold.solution_ids, warm.solution_ids)
    # hashing is exact; a transformer's output moves in its last float bits with the batch's padding
    atol = 1e-12 if featurizer == "hashed_ngram" else 1e-6
    np.testing.assert_allclose(cold.priority, warm.priority, rtol=0, atol=atol)
    np.testing.assert_allclose(cold.score, warm.score, rtol=0, atol=atol)


@pytest.mark.django_db
def test_each_project_and_each_database_has_its_own_step_store(tmp_path):
    featurizer = make_featurizer(training_config())
    a = Project.objects.create(slug="fa")
    b = Project.objects.create(slug="fb")
    assert step_features.project_store(a, featurizer).root != step_features.project_store(b, featurizer).root
    # the same id in a database made later (a reset demo, a test run) is another project: its
    # creation time is part of the directory
    again = Project(
        pk=a.pk, slug="fa", created_at=a.created_at.replace(microsecond=(a.created_at.microsecond + 1) % 10**6)
    )
    assert step_features.project_store(again, featurizer).root != step_features.project_store(a, featurizer).root
    # a steps project with no open solution scores nothing and stores nothing
    assert Solution.objects.filter(project=a).count() == 0
    assert step_features.featurize_project_steps(project_id=a.pk) == 0


@pytest.mark.django_db
def test_deleting_a_project_removes_its_stored_features(tmp_path, django_capture_on_commit_callbacks):
    project = planted_project("feat-del", labeled=5, open_=5)
    other = planted_project("feat-keep", labeled=5, open_=5)
    featurizer = make_featurizer(training_config())
    for p in (project, other):
        assert step_features.featurize_project_steps(project_id=p.pk, featurizer=featurizer) > 0
    gone = step_features.project_store(project, featurizer).root
    kept = step_features.project_store(other, featurizer).root
    with django_capture_on_commit_callbacks(execute=True):
        project.delete()
    assert not gone.exists() and kept.exists()
    assert _stored(other, featurizer).all()


@pytest.mark.django_db
def test_prune_removes_the_stores_of_projects_this_database_does_not_have(tmp_path):
    """A database made anew under the same MEDIA_ROOT (a reset demo, a test run) leaves the old
    projects' store directories behind: `prune_feature_store` removes them and nothing else."""
    from io import StringIO

    from django.core.management import call_command

    with override_settings(MEDIA_ROOT=tmp_path, ML_FEATURE_STORE_ROOT=""):
        step_features._stores.clear()
        live = planted_project("feat-live", labeled=5, open_=5)
        featurizer = make_featurizer(training_config())
        assert step_features.featurize_project_steps(project_id=live.pk, featurizer=featurizer) > 0
        kept = step_features.project_store(live, featurizer).root
        contexts = step_features.context_store(featurizer).root
        contexts.mkdir(parents=True)
        orphan = kept.parent / "steps-999-1700000000000000"  # a project of an earlier database
        orphan.mkdir()
        (orphan / "segment.npy").write_bytes(b"\0" * 2048)
        out = StringIO()
        call_command("prune_feature_store", "--dry-run", stdout=out)
        assert orphan.exists() and "1 orphaned project store(s), 0.0 MiB." in out.getvalue()
        call_command("prune_feature_store", stdout=out)
        assert not orphan.exists() and kept.exists() and contexts.exists()
        assert _stored(live, featurizer).all()


@pytest.mark.django_db
def test_prune_removes_featurizer_specs_nothing_reads(tmp_path):
    """An old featurizer version or default leaves its whole spec directory behind: pruned, while
    the deployment default's and the active model's (trained under another default) stay."""
    from io import StringIO

    from django.core.management import call_command

    project = planted_project("feat-specs", labeled=60, open_=10)
    with override_settings(MEDIA_ROOT=tmp_path, ML_FEATURE_STORE_ROOT="", ML_TRAINING_CONFIG=TINY):
        step_features._stores.clear()
        run = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
        assert run.status == "succeeded" and run.is_active, run.error
        model_dir = step_features.project_store(project, load_prm(run=run).featurizer).root.parent
    other_default = {**TINY, "step_hash_dim": 1024}
    with override_settings(MEDIA_ROOT=tmp_path, ML_FEATURE_STORE_ROOT="", ML_TRAINING_CONFIG=other_default):
        step_features._stores.clear()
        featurizer = make_featurizer(training_config())
        assert step_features.featurize_project_steps(project_id=project.pk, featurizer=featurizer) > 0
        default_dir = step_features.project_store(project, featurizer).root.parent
        old = step_features.store_root() / "0123456789abcdef"  # an earlier FEATURE_CODE_VERSION's
        (old / "contexts").mkdir(parents=True)
        (old / "contexts" / "keys.npy").write_bytes(b"\0" * 4096)
        assert model_dir.is_dir() and default_dir.is_dir() and model_dir != default_dir
        assert step_features.stale_spec_dirs() == [old]
        out = StringIO()
        call_command("prune_feature_store", stdout=out)
        assert "1 unused featurizer spec(s)" in out.getvalue()
        assert not old.exists() and model_dir.is_dir() and default_dir.is_dir()


@pytest.mark.django_db
def test_rescoring_reads_each_solutions_graded_answer(tmp_path):
    """The PRM reads the solution's graded answer (PRMConfig.answer_input): re-grading the open
    solutions (wrong <-> right) moves their scores, which the stored step features cannot hold."""
    project = planted_project("graded", labeled=80, open_=30)
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY):
        run = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
        assert run.status == "succeeded", run.error
        prm = load_prm(run=run)
        assert prm.head.side_dim == 4
        before = score_open_solutions(project=project, run=run, prm=prm)
        was_wrong = dict(Solution.objects.filter(pk__in=before.solution_ids).values_list("id", "answer_correct"))
        for sid, correct in was_wrong.items():
            Solution.objects.filter(pk=sid).update(answer_correct=not correct)
        after = score_open_solutions(project=project, run=run, prm=prm)
    np.testing.assert_array_equal(before.solution_ids, after.solution_ids)
    wrong_first = np.asarray([was_wrong[s] is False for s in before.solution_ids.tolist()])
    assert wrong_first.any() and (~wrong_first).any()
    # a solution scores lower (more likely to hold an error) while its answer is graded wrong
    assert (before.score[wrong_first] < after.score[wrong_first]).all()
    assert (before.score[~wrong_first] > after.score[~wrong_first]).all()
