"""The active-learning loop through a real Celery worker on PostgreSQL and Redis: single flight, a
killed worker and the stale-run sweeper, auto-retrain after N new step labels, artifacts under
MEDIA_ROOT. Training is kept tiny."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import uuid
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from django.db import connection
from django.test import override_settings

from annotate.models import Role, Strategy
from annotate.services import queue
from core.models import JobStatus
from core.tasks import sweep_jobs
from labeling_api.serializers_submit import submit_payload
from ml import services
from ml.models import TrainingRun
from ml.services import runs
from tests.factories import make_user
from tests.ml.loop_helpers import TINY, add_label, assert_convincing_wrong_order, open_queue, planted_project

# --- single flight --------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_give_one_run_and_a_request_during_a_run_waits_for_it(tmp_path):
    project = planted_project("sf", labeled=40, open_=5)
    barrier = threading.Barrier(4)
    results: list[tuple[int, bool]] = []
    errors: list[BaseException] = []

    def request() -> None:
        try:
            barrier.wait()
            run = services.request_retrain(project=project, enqueue=False)
            results.append((run.pk, run.merged))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=request) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert TrainingRun.objects.filter(project=project).count() == 1
    assert len({pk for pk, _ in results}) == 1 and sorted(m for _, m in results) == [False, True, True, True]
    first = TrainingRun.objects.get(project=project)

    # While it runs on the labels so far, a request joins it: no second run on the same labels.
    assert runs._claim(first.pk) is not None  # what the worker does first
    same = services.request_retrain(project=project, enqueue=False)
    assert same.pk == first.pk and same.merged and same.status == JobStatus.RUNNING
    assert TrainingRun.objects.filter(project=project).count() == 1

    # Once a label arrives, requests create exactly one waiting run, which cannot start alongside it.
    add_label(project)
    nxt = services.request_retrain(project=project, enqueue=False)
    again = services.request_retrain(project=project, enqueue=False)
    assert nxt.pk == again.pk and not nxt.merged and again.merged and nxt.status == JobStatus.CREATED
    # A request with settings joins the waiting run with them (they were dropped without a word);
    # one without settings keeps them.
    custom = services.request_retrain(project=project, config=TINY, enqueue=False)
    assert custom.pk == nxt.pk and custom.merged
    settings = lambda: {k: v for k, v in TrainingRun.objects.get(pk=nxt.pk).config.items() if k != "extra"}  # noqa: E731
    assert settings() == TINY
    assert services.request_retrain(project=project, enqueue=False).pk == nxt.pk and settings() == TINY
    assert TrainingRun.objects.get(pk=nxt.pk).config["extra"] == {"trigger": "request"}  # who asked first stays
    assert services.run_training(run_id=nxt.pk) is None, "never two runs of a project at once"
    assert TrainingRun.objects.get(pk=nxt.pk).status == JobStatus.CREATED
    assert TrainingRun.objects.filter(project=project, status=JobStatus.RUNNING).count() == 1


# --- through a real worker --------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_retrain_through_the_worker_activates_and_reorders_the_queue(tmp_path):
    from tests.celery_worker import celery_worker, purge_broker, wait_for

    project = planted_project("wk", labeled=80, open_=30)
    purge_broker()
    with override_settings(MEDIA_ROOT=tmp_path), celery_worker(queues="ml"):
        run = services.request_retrain(project=project, config=TINY)
        wait_for(
            lambda: TrainingRun.objects.get(pk=run.pk).status in ("succeeded", "failed"), timeout=90, message="training"
        )
        run.refresh_from_db()
        project.refresh_from_db()
        assert run.status == JobStatus.SUCCEEDED, run.error
        assert run.is_active and project.current_generation == 1 and (tmp_path / run.artifact_path).is_file()
        assert_convincing_wrong_order(project, run)

        # Requests during a run join the next run, which the worker starts when the first ends.
        longer = services.request_retrain(project=project, config={**TINY, "max_epochs": 150, "patience": 150})
        wait_for(lambda: TrainingRun.objects.get(pk=longer.pk).status != "created", timeout=60, message="start")
        nxt = services.request_retrain(project=project, config=TINY)
        joined = services.request_retrain(project=project)
        assert TrainingRun.objects.get(pk=longer.pk).status == "running"  # so `nxt` really waited for it
        wait_for(
            lambda: TrainingRun.objects.get(pk=nxt.pk).status in ("succeeded", "failed"), timeout=90, message="next"
        )
    longer.refresh_from_db()
    nxt.refresh_from_db()
    assert joined.pk == nxt.pk and joined.merged and not nxt.merged
    assert longer.status == nxt.status == JobStatus.SUCCEEDED, (longer.error, nxt.error)
    assert nxt.started_at >= longer.finished_at, "never two runs of a project at once"
    assert TrainingRun.objects.filter(project=project).count() == 3 and nxt.is_active
    project.refresh_from_db()
    assert project.current_generation == 3


@pytest.mark.django_db(transaction=True)
def test_killed_worker_leaves_the_previous_model_and_the_sweeper_retries(tmp_path):
    from tests.celery_worker import celery_worker, purge_broker, wait_for

    project = planted_project("kill", labeled=80, open_=20)
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY):
        previous = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
    assert previous.is_active
    queue_before = [(s.pk, s.priority) for s in open_queue(project)]
    purge_broker()
    # A run that trains for minutes (no early stop), killed with SIGKILL a moment after it starts.
    slow = {**TINY, "max_epochs": 10_000, "patience": 10_000}
    with override_settings(MEDIA_ROOT=tmp_path), celery_worker(queues="ml") as worker:
        run = services.request_retrain(project=project, config=slow)
        wait_for(lambda: TrainingRun.objects.get(pk=run.pk).status == "running", timeout=60, message="start")
        time.sleep(1.5)
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)
    run.refresh_from_db()
    previous.refresh_from_db()
    project.refresh_from_db()
    assert run.status == JobStatus.RUNNING and not run.is_active  # nobody is left to say otherwise
    assert previous.is_active and project.current_generation == 1
    assert [(s.pk, s.priority) for s in open_queue(project)] == queue_before
    assert not (tmp_path / f"models/kill/run-{run.pk}.pt").exists()

    # The sweeper task (beat runs it) fails the stuck run and requests a fresh one; the worker trains it.
    assert services.sweep_stale_runs(older_than=timedelta(hours=1)) == []
    purge_broker()
    tiny_env = {"ML_TRAINING_CONFIG": json.dumps(TINY)}  # the worker's default config
    with override_settings(MEDIA_ROOT=tmp_path), celery_worker(queues="default,ml", extra_env=tiny_env):
        sweep_jobs.apply_async(args=[0], queue="default")  # beat's one sweep, on the default queue
        wait_for(
            lambda: TrainingRun.objects.filter(project=project, status__in=["succeeded", "failed"]).count() == 3,
            timeout=90,
            message="the sweeper's run",
        )
    run.refresh_from_db()
    assert run.status == JobStatus.FAILED and "worker died" in run.error
    retried = TrainingRun.objects.filter(project=project).latest("id")
    assert retried.config["extra"]["trigger"] == "sweeper"
    assert retried.status == JobStatus.SUCCEEDED and retried.is_active, retried.error
    project.refresh_from_db()
    assert project.current_generation == 2
    purge_broker()


# --- auto-retrain -----------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_auto_retrain_after_n_new_step_labels():
    from tests.celery_worker import purge_broker

    project = planted_project("auto", labeled=0, open_=6, strategy=Strategy.RANDOM, retrain_every=12)
    annotator = make_user(project=project, role=Role.ANNOTATOR)

    def label_one() -> None:
        assignment = queue.claim_next(project=project, user=annotator)
        n = assignment.solution.n_steps
        payload = {
            "idempotency_key": uuid.uuid4().hex,
            "finish_reason": "solution",
            "total_time_ms": 1000,
            "steps": [{"index": i, "rating": 1, "flagged": False, "alternatives": []} for i in range(n)],
        }
        submit_payload(assignment=assignment, user=annotator, payload=payload)

    purge_broker()
    label_one()
    labels = services.label_total(project=project)
    while labels < 12:
        assert not TrainingRun.objects.filter(project=project).exists(), f"no run before 12 labels ({labels})"
        label_one()
        labels = services.label_total(project=project)
    runs = list(TrainingRun.objects.filter(project=project))
    assert len(runs) == 1 and runs[0].status == JobStatus.CREATED and runs[0].config["extra"]["trigger"] == "auto"
    label_one()  # more labels while it waits join that run
    assert TrainingRun.objects.filter(project=project).count() == 1
    purge_broker()


def test_artifacts_live_under_media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    assert services.artifact_abspath("models/x/run-1.pt") == Path(tmp_path) / "models/x/run-1.pt"


@pytest.mark.django_db(transaction=True)
def test_a_strategy_change_on_the_settings_page_reorders_the_queue_with_the_active_model(tmp_path):
    """The lead's new order applies at once where a model is active: the worker rescores the open
    queue under the new strategy (same model, same generation); settings changes that do not touch
    the order enqueue nothing."""
    from annotate.services.projects import update_settings
    from tests.celery_worker import celery_worker, purge_broker, wait_for

    project = planted_project("reorder", labeled=80, open_=30)
    lead = make_user("lead-reorder", project=project, role=Role.LEAD)
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY):
        run = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
    assert run.status == JobStatus.SUCCEEDED, run.error
    project.refresh_from_db()
    assert_convincing_wrong_order(project, run)
    generation = project.current_generation
    purge_broker()
    with override_settings(MEDIA_ROOT=tmp_path), celery_worker(queues="ml"):
        update_settings(project=project, user=lead, selection_strategy=Strategy.UNCERTAINTY)
        wait_for(
            lambda: {s.strategy for s in open_queue(project)} <= {"uncertainty"},
            timeout=90,
            message="the queue reordered as uncertainty",
        )
    order = open_queue(project)
    assert all(s.model_run_id == run.pk and s.generation == generation for s in order)
    project.refresh_from_db()
    assert project.current_generation == generation and TrainingRun.objects.filter(project=project).count() == 1
    # the order the active model gives under the new strategy
    from ml.services.scoring import load_prm, score_open_solutions

    with override_settings(MEDIA_ROOT=tmp_path):
        expected = score_open_solutions(project=project, run=run, prm=load_prm(run=run))
    ranked = expected.solution_ids[np.argsort(-expected.priority, kind="stable")].tolist()
    assert [s.pk for s in order] == ranked


@pytest.mark.django_db
def test_settings_that_do_not_order_the_queue_enqueue_no_reordering(django_capture_on_commit_callbacks):
    from annotate.services.projects import update_settings

    project = planted_project("no-reorder", labeled=4, open_=2)
    lead = make_user("lead-no-reorder", project=project, role=Role.LEAD)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        update_settings(project=project, user=lead, retrain_every=50, qc_rate=0.1)
    assert callbacks == []
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        update_settings(project=project, user=lead, control_share=0.2)
    # the model-free reorder's task and the model loop's signal (without an active model its
    # handler enqueues nothing)
    assert len(callbacks) == 2
