"""The active-learning loop in the app: examples from annotations, retrains through a real Celery
worker on PostgreSQL and Redis, activation and queue reordering, single flight, a killed worker,
the stale-run sweeper, rollback and auto-retrain after N labels. Training is kept tiny."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import threading
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.test import override_settings

from annotate.models import Annotation, Problem, Project, Role, Solution, Step, Strategy
from annotate.services import queue, submit
from core.models import JobStatus
from core.tasks import sweep_jobs
from ml import services
from ml.models import StepScore, TrainingRun
from ml.prm.synthetic import planted_solutions
from ml.services import runs
from prm800k.labels import label_counters
from prm800k.records import dumps_label_steps
from tests.factories import make_user

# Small and fast: a retrain on a few hundred labels takes well under a second.
TINY = {
    "step_hash_dim": 2048,
    "context_hash_dim": 512,
    "ensemble_size": 2,
    "hidden_size": 8,
    "max_epochs": 6,
    "patience": 2,
    "min_batches_per_epoch": 4,
    "num_threads": 1,  # the test machine is small and shared
}


def _h(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def phase2_label(steps: list[str], first_error: int) -> list[dict]:
    """PRM800K phase-2 label steps: +1 up to the first error, which is -1 and ends the pass."""
    last = len(steps) - 1 if first_error < 0 else first_error
    out = []
    for i in range(last + 1):
        bad = i == first_error
        out.append(
            {
                "completions": [{"text": steps[i], "rating": -1 if bad else 1, "flagged": False}],
                "human_completion": None,
                "chosen_completion": None if bad else 0,
            }
        )
    return out


def planted_project(
    slug: str, *, labeled: int = 80, open_: int = 30, strategy: str = Strategy.CONVINCING_WRONG, seed: int = 0, **kw
) -> Project:
    """A project with `labeled` annotated solutions (PRM800K phase-2 labels from the planted
    pattern: error bigrams make a step -1) and `open_` open ones, answers graded from the data."""
    # no control share unless asked: these tests check each strategy's own order
    kw.setdefault("control_share", 0.0)
    project = Project.objects.create(slug=slug, selection_strategy=strategy, **kw)
    problems: dict[str, Problem] = {}
    for n, (pid, text, steps, first_error, correct) in enumerate(planted_solutions(labeled + open_, seed=seed)):
        if pid not in problems:
            problems[pid] = Problem.objects.create(
                project=project, text=text, ground_truth_answer="42", content_hash=_h(slug, pid)
            )
        is_labeled = n < labeled
        solution = Solution.objects.create(
            project=project,
            problem=problems[pid],
            content_hash=_h(slug, n),
            n_steps=len(steps),
            final_answer="42" if correct else "41",
            answer_correct=correct,
            is_open=not is_labeled,
            annotation_count=1 if is_labeled else 0,
        )
        Step.objects.bulk_create(Step(solution=solution, index=i, text=t) for i, t in enumerate(steps))
        if is_labeled:
            label = phase2_label(steps, first_error)
            Annotation.objects.create(
                project=project,
                solution=solution,
                labeler_uuid=str(uuid.uuid4()),
                source="import",
                submitted_at="2026-01-01T00:00:00Z",
                finish_reason="found_error" if first_error >= 0 else "solution",
                label_steps=dumps_label_steps(label),
                **label_counters(label),
            )
    return project


def open_queue(project: Project) -> list[Solution]:
    return list(Solution.objects.filter(project=project, is_open=True).order_by("-priority", "id"))


def assert_convincing_wrong_order(project: Project, run: TrainingRun) -> None:
    """Graded-wrong solutions first, by PRM score (highest first); then the graded-correct ones."""
    order = open_queue(project)
    assert order and all(s.model_run_id == run.pk and s.strategy == "convincing_wrong" for s in order)
    assert all(s.generation == project.current_generation and s.verifier_score is not None for s in order)
    wrong = [s for s in order if s.answer_correct is False]
    right = [s for s in order if s.answer_correct is True]
    assert wrong and right
    assert order[: len(wrong)] == wrong, "every wrong-answer solution comes before every correct one"
    scores = [s.verifier_score for s in wrong]
    assert scores == sorted(scores, reverse=True), "most convincing wrong answers first"
    assert min(s.priority for s in wrong) > max(s.priority for s in right)


# --- examples ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_examples_are_every_rated_completion_with_its_main_line_context():
    project = Project.objects.create(slug="ex")
    problem = Problem.objects.create(project=project, text="What is 2+2?", content_hash=_h("ex"))
    solution = Solution.objects.create(project=project, problem=problem, content_hash=_h("ex", 1), n_steps=3)
    label = [
        {
            "completions": [{"text": "2+2", "rating": 1, "flagged": False}],
            "human_completion": None,
            "chosen_completion": 0,
        },
        {
            "completions": [
                {"text": "= 5", "rating": -1, "flagged": False},
                {"text": "= 4", "rating": 1, "flagged": False},
                {"text": "hmm", "rating": 0, "flagged": True},
            ],
            "human_completion": None,
            "chosen_completion": None,
        },
        # unrated trailing entry (phase 2 stopped): no example, and nothing after it
        {
            "completions": [{"text": "so 5", "rating": None, "flagged": False}],
            "human_completion": None,
            "chosen_completion": None,
        },
    ]
    Annotation.objects.create(
        project=project,
        solution=solution,
        labeler_uuid="x",
        submitted_at="2026-01-01T00:00:00Z",
        finish_reason="found_error",
        label_steps=dumps_label_steps(label),
        **label_counters(label),
    )

    examples = services.build_examples(project=project)

    assert [(e.previous, e.step, e.target, e.on_path) for e in examples] == [
        ((), "2+2", 1, True),
        (("2+2",), "= 5", -1, True),
        (("2+2",), "= 4", 1, False),
        (("2+2",), "hmm", 0, False),
    ]
    assert {e.problem for e in examples} == {"What is 2+2?"}
    assert {e.problem_id for e in examples} == {f"p{problem.pk}"}
    assert services.build_examples(project=project, up_to_annotation_id=0) == []


# --- retrain inline: activation, rescoring, failure, rollback ------------------------------------


@pytest.mark.django_db
def test_inline_retrain_activates_scores_and_reorders_then_a_failure_keeps_the_model(tmp_path):
    project = planted_project("inl", labeled=80, open_=30)
    before = [s.pk for s in open_queue(project)]
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY):
        run = services.request_retrain(project=project, enqueue=False)
        done = services.run_training(run_id=run.pk)

    assert done.status == JobStatus.SUCCEEDED and done.is_active, done.error
    project.refresh_from_db()
    assert project.current_generation == 1
    assert (tmp_path / done.artifact_path).is_file() and done.artifact_path == f"models/inl/run-{run.pk}.pt"
    assert not list(tmp_path.rglob(".tmp-*"))
    # label count = main-line steps + alternatives of the 80 annotations; metrics recorded
    assert done.label_count == sum(
        a.n_label_steps + a.n_alternatives for a in Annotation.objects.filter(project=project)
    )
    m = done.metrics
    assert m["n_examples"] == done.label_count and m["n_heldout"] > 0
    for key in ("auroc_negative", "accuracy", "ece", "first_error_f1"):
        assert 0.0 <= m[key] <= 1.0, key
    assert done.config["ensemble_size"] == 2 and done.started_at <= done.finished_at
    # every open step scored once, by this run
    open_steps = Step.objects.filter(solution__project=project, solution__is_open=True).count()
    assert StepScore.objects.filter(training_run=done).count() == open_steps == m["scored_steps"]
    sc = StepScore.objects.filter(training_run=done).first()
    assert abs(sc.p_positive + sc.p_neutral + sc.p_negative - 1) < 1e-5
    after = open_queue(project)
    assert [s.pk for s in after] != before
    assert_convincing_wrong_order(project, done)
    # the claim query serves the new top first
    annotator = make_user(project=project, role=Role.ANNOTATOR)
    assert queue.claim_next(project=project, user=annotator).solution_id == after[0].pk

    # A run that crashes (its featurizer's model directory is missing) fails with the traceback;
    # the previous model stays active and the queue and generation do not move.
    with override_settings(MEDIA_ROOT=tmp_path):
        bad = services.request_retrain(
            project=project, config={"featurizer": "local_hf", "hf_model_path": str(tmp_path / "nope")}, enqueue=False
        )
        bad = services.run_training(run_id=bad.pk)
    assert bad.status == JobStatus.FAILED and "Traceback" in bad.error and not bad.is_active
    assert TrainingRun.objects.get(is_active=True, project=project) == done
    project.refresh_from_db()
    assert project.current_generation == 1
    assert not (tmp_path / f"models/inl/run-{bad.pk}.pt").exists()
    # a second call for a finished run does nothing (idempotent task)
    assert services.run_training(run_id=bad.pk) is None
    assert services.run_training(run_id=10**9) is None


@pytest.mark.django_db
def test_rollback_activates_an_earlier_model_and_rescores_with_it(tmp_path):
    project = planted_project("rb", labeled=60, open_=20, strategy=Strategy.UNCERTAINTY)
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY):
        first = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
        second = services.run_training(
            run_id=services.request_retrain(project=project, config={"seed": 7}, enqueue=False).pk
        )
        assert first.status == second.status == JobStatus.SUCCEEDED
        assert Solution.objects.filter(project=project, is_open=True).first().model_run_id == second.pk
        # only the active model's step scores are kept
        assert not StepScore.objects.filter(training_run=first).exists()

        services.rollback(project=project, run=first)
        # The rescoring is a job (ml.tasks.rescore_queue after commit); here it runs as the worker would.
        services.rescore_after_activation(run_id=first.pk, previous_id=second.pk)

    first.refresh_from_db()
    second.refresh_from_db()
    project.refresh_from_db()
    assert first.is_active and not second.is_active
    assert project.current_generation == 3  # each activation is a new round
    opened = open_queue(project)
    assert {s.model_run_id for s in opened} == {first.pk} and {s.generation for s in opened} == {3}
    assert (
        StepScore.objects.filter(training_run=first).count()
        == Step.objects.filter(solution__project=project, solution__is_open=True).count()
    )
    assert not StepScore.objects.filter(training_run=second).exists()
    # uncertainty: priority is the solution's largest step entropy
    for s in opened[:5]:
        top = max(StepScore.objects.filter(step__solution=s, training_run=first).values_list("uncertainty", flat=True))
        assert s.priority == pytest.approx(top, rel=1e-5)
    failed = TrainingRun.objects.create(project=project, status=JobStatus.FAILED)
    with pytest.raises(services.RunNotActivatable):
        services.rollback(project=project, run=failed)


@pytest.mark.django_db
def test_a_failed_rescore_after_rollback_reactivates_the_previous_model(tmp_path):
    """Rollback answers at once; if its rescoring job fails, the model that was active comes back
    (so the active model and the queue's order never disagree)."""
    from ml.services import scoring

    project = planted_project("rbfail", labeled=60, open_=10)
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY):
        first = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
        second = services.run_training(
            run_id=services.request_retrain(project=project, config={"seed": 7}, enqueue=False).pk
        )
        queue_before = [(s.pk, s.priority, s.model_run_id) for s in open_queue(project)]
        services.rollback(project=project, run=first)
        assert TrainingRun.objects.get(is_active=True, project=project) == first
        (tmp_path / first.artifact_path).write_bytes(b"not a checkpoint")  # the worker cannot load it
        scoring._prms.clear()  # a worker process has no model in memory
        with pytest.raises(Exception):  # noqa: B017 - whatever torch raises on a broken file
            services.rescore_after_activation(run_id=first.pk, previous_id=second.pk)
    assert TrainingRun.objects.get(is_active=True, project=project) == second
    assert [(s.pk, s.priority, s.model_run_id) for s in open_queue(project)] == queue_before


@pytest.mark.django_db
def test_mix_and_random_strategies_write_their_priorities(tmp_path):
    project = planted_project("mix", labeled=60, open_=25, strategy=Strategy.MIX)
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY):
        run = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
        order = open_queue(project)
        assert {s.strategy for s in order} == {"mix"}
        # PRM800K's mix: 4 of every 5 slots from convincing-wrong (wrong answers first), 1 from the top score
        top5 = order[:5]
        assert sum(s.answer_correct is False for s in top5[:4]) >= min(4, sum(s.answer_correct is False for s in order))
        best = max(order, key=lambda s: s.verifier_score)
        assert best in order[:5], "the most convincing solution overall is in the first five"
        project.selection_strategy = Strategy.RANDOM
        project.save()
        services.rescore_project(project=project, run=run)
    order = open_queue(project)
    assert {s.strategy for s in order} == {"random"}
    assert all(0 <= s.priority < 1 for s in order) and len({s.priority for s in order}) == len(order)


@pytest.mark.django_db
def test_value_strategy_orders_by_first_error_value_per_label_and_routes_a_control_share(tmp_path):
    project = planted_project("val", labeled=60, open_=60, strategy=Strategy.VALUE, control_share=0.25)
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY):
        run = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
    assert run.status == JobStatus.SUCCEEDED, run.error
    order = open_queue(project)
    origins = [s.strategy for s in order]
    assert set(origins) == {"value", "control"}
    n_control = origins.count("control")
    assert 5 <= n_control <= 28, n_control  # 25% of 60, binomial
    # controls are spread through the queue (random ranks), not parked at its end
    ranks = [i for i, o in enumerate(origins) if o == "control"]
    assert min(ranks) < len(order) // 2 < max(ranks)
    # among the strategy's own picks, graded-wrong answers (an error is certain, the pass stops early)
    # dominate the head of the queue
    own = [s for s in order if s.strategy == "value"]
    head = own[: len(own) // 3]
    wrong_share = sum(s.answer_correct is False for s in own) / len(own)
    assert sum(s.answer_correct is False for s in head) / len(head) > wrong_share


@pytest.mark.django_db
def test_answer_stratified_strategy_interleaves_wrong_answers_at_half_the_expected_labels(tmp_path):
    project = planted_project("strat", labeled=60, open_=60, strategy=Strategy.ANSWER_STRATIFIED)
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY):
        run = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
    assert run.status == JobStatus.SUCCEEDED, run.error
    order = open_queue(project)
    assert {s.strategy for s in order} == {"answer_stratified"}
    assert all(s.model_run_id == run.pk for s in order) and len({s.priority for s in order}) == len(order)
    wrong = [s for s in order if s.answer_correct is False]
    right = [s for s in order if s.answer_correct is not False]
    assert wrong and right
    # wrong answers are neither all first (convincing_wrong) nor left to chance: in the first third of
    # the queue they hold about half of the expected step labels (a wrong pass costs (n + 1) / 2)
    head = order[: len(order) // 3]
    cost = [(s.n_steps + 1) / 2 if s.answer_correct is False else s.n_steps for s in head]
    share = sum(c for c, s in zip(cost, head, strict=True) if s.answer_correct is False) / sum(cost)
    assert 0.35 <= share <= 0.65, share


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

    # While it runs, requests create exactly one waiting run, which cannot start alongside it.
    assert runs._claim(first.pk) is not None  # what the worker does first
    nxt = services.request_retrain(project=project, enqueue=False)
    again = services.request_retrain(project=project, enqueue=False)
    assert nxt.pk == again.pk and not nxt.merged and again.merged and nxt.status == JobStatus.CREATED
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
        submit.submit(assignment=assignment, user=annotator, payload=payload)

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
