"""The active-learning loop in the app: examples from annotations, inline retrains on PostgreSQL:
activation and queue reordering, failure, rollback and the strategies' priorities. Single flight,
the real worker and auto-retrain are in test_loop_worker.py. Training is kept tiny."""

from __future__ import annotations

import pytest
from django.test import override_settings

from annotate.models import Annotation, Problem, Project, Role, Solution, Step, Strategy
from annotate.services import queue
from core.models import JobStatus
from ml import services
from ml.models import StepScore, TrainingRun
from ml.prm.answer_input import GRADE_STRATA
from ml.prm.metrics import MOST_PROBABLE
from ml.selectors import model_summary
from prm800k.labels import label_counters
from prm800k.records import dumps_label_steps
from tests.factories import make_user
from tests.ml.loop_helpers import TINY, assert_convincing_wrong_order, content_hash, open_queue, planted_project

# --- examples ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_examples_are_every_rated_completion_with_its_main_line_context():
    project = Project.objects.create(slug="ex")
    problem = Problem.objects.create(project=project, text="What is 2+2?", content_hash=content_hash("ex"))
    solution = Solution.objects.create(project=project, problem=problem, content_hash=content_hash("ex", 1), n_steps=3)
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
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY, ML_STORE_STEP_SCORES=True):
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
    # the threshold was chosen with the 80 labeled solutions weighted to the project's 110
    weighting = m["threshold_weights"]
    assert weighting["population"] == 110 and 0 < weighting["min"] <= weighting["max"]
    # the head reads the graded answer, so each stratum the labels hold got its own threshold
    graded = {GRADE_STRATA[a.solution.answer_correct] for a in Annotation.objects.filter(project=project)}
    by_grade = m["thresholds_by_grade"]
    assert set(by_grade) == graded and "wrong" in graded
    # a graded-wrong answer always holds an error: it is read at its most probable first error, on
    # every step the pool holds, not over a threshold
    assert by_grade["wrong"] == MOST_PROBABLE
    assert all(0 < t < 1 for g, t in by_grade.items() if g != "wrong")
    # beside the PRM's held-out F1: a reader with no PRM (one constant first error per graded
    # answer, fitted on the training solutions), which the dashboard's curve note compares it with
    assert 0.0 <= m["heldout"]["grade_only_f1"] <= 1.0
    point = model_summary(project=project)["learning_curve"][-1]
    assert point["grade_only_f1"] == m["heldout"]["grade_only_f1"] and point["run"] == done.pk
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

    # A run that crashes (its checkpoint cannot be written: a directory stands at its path) fails
    # with the exception's type and message (the traceback goes to the worker's log, not to the
    # members who list runs); the previous model stays active and the queue and generation do not move.
    with override_settings(MEDIA_ROOT=tmp_path):
        bad = services.request_retrain(project=project, config={"seed": 5}, enqueue=False)
        blocked = tmp_path / f"models/inl/run-{bad.pk}.pt"
        blocked.mkdir(parents=True)
        bad = services.run_training(run_id=bad.pk)
    assert bad.status == JobStatus.FAILED and not bad.is_active
    assert bad.error.startswith("IsADirectoryError: ") and "Traceback" not in bad.error, bad.error
    assert "worker's log" in bad.error
    assert TrainingRun.objects.get(is_active=True, project=project) == done
    project.refresh_from_db()
    assert project.current_generation == 1
    assert blocked.is_dir() and not any(blocked.parent.glob(".tmp-*"))  # no checkpoint, no temp file left
    # a second call for a finished run does nothing (idempotent task)
    assert services.run_training(run_id=bad.pk) is None
    assert services.run_training(run_id=10**9) is None


@pytest.mark.django_db
def test_a_retrain_before_any_label_fails_with_words_a_lead_can_act_on(tmp_path):
    """Pressing "Retrain now" before anyone labeled: the run fails saying there is nothing to train on
    yet and what to do, not with a Python exception's name and a pointer to the worker's log."""
    project = planted_project("nolabels", labeled=0, open_=10)
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY):
        run = services.request_retrain(project=project, enqueue=False)
        done = services.run_training(run_id=run.pk)
    assert done.status == JobStatus.FAILED and not done.is_active
    assert done.error.startswith("Nothing to train on yet: the project has no rated steps."), done.error
    assert "worker's log" not in done.error and "Error" not in done.error
    assert not list(tmp_path.rglob("*.pt"))


@pytest.mark.django_db
def test_rollback_activates_an_earlier_model_and_rescores_with_it(tmp_path):
    project = planted_project("rb", labeled=60, open_=20, strategy=Strategy.UNCERTAINTY)
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY, ML_STORE_STEP_SCORES=True):
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
def test_a_run_asked_for_before_a_rollback_finishes_without_undoing_it(tmp_path):
    """The lead rolls back while a run waits (or trains): that run succeeds but the lead's choice stays
    active, with the queue in its order; a retrain asked for after the rollback takes over as usual."""
    project = planted_project("rbhold", labeled=60, open_=15, strategy=Strategy.UNCERTAINTY)
    lead = make_user("rbhold-lead")
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY, ML_STORE_STEP_SCORES=True):
        first = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
        services.run_training(run_id=services.request_retrain(project=project, config={"seed": 7}, enqueue=False).pk)
        in_flight = services.request_retrain(project=project, config={"seed": 8}, enqueue=False)
        services.rollback(project=project, run=first, by=lead)
        services.rescore_after_activation(run_id=first.pk, previous_id=None)
        queue_before = [(s.pk, s.priority, s.model_run_id, s.generation) for s in open_queue(project)]
        held = services.run_training(run_id=in_flight.pk)

        assert held.status == JobStatus.SUCCEEDED and not held.is_active
        assert held.metrics["held_back_by"] == first.pk
        first.refresh_from_db()
        assert first.is_active and first.activated_by == lead
        assert [(s.pk, s.priority, s.model_run_id, s.generation) for s in open_queue(project)] == queue_before
        assert not StepScore.objects.filter(training_run=held).exists()  # only the active model's scores stay
        runs = {r["id"]: r for r in model_summary(project=project)["runs"]}
        assert runs[held.pk]["note"].startswith(f"Not activated: a lead made run #{first.pk} the active model")
        assert runs[first.pk]["note"] == ""

        # the lead may still take the held-back run, and a later request trains and takes over as usual
        services.rollback(project=project, run=held, by=lead)
        after = services.run_training(
            run_id=services.request_retrain(project=project, config={"seed": 9}, enqueue=False).pk
        )
    assert after.is_active and "held_back_by" not in after.metrics
    assert {s.model_run_id for s in open_queue(project)} == {after.pk}


@pytest.mark.django_db
def test_a_request_that_joins_a_waiting_run_after_a_rollback_lets_it_take_over(tmp_path):
    project = planted_project("rbjoin", labeled=60, open_=10)
    lead = make_user("rbjoin-lead")
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY):
        first = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
        services.run_training(run_id=services.request_retrain(project=project, config={"seed": 7}, enqueue=False).pk)
        waiting = services.request_retrain(project=project, config={"seed": 8}, enqueue=False)
        services.rollback(project=project, run=first, by=lead)
        joined = services.request_retrain(project=project, user=lead, enqueue=False)  # "Retrain now" after it
        assert joined.pk == waiting.pk and joined.merged
        done = services.run_training(run_id=waiting.pk)
    assert done.is_active and "held_back_by" not in done.metrics


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
