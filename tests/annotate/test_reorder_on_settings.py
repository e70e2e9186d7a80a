"""A strategy or control-share change before any model queues the open solutions again under the
new settings, as an import would (annotate.services.reorder), through a real worker."""

from __future__ import annotations

import random

import pytest
from django.test import override_settings

from annotate.models import QueueOrigin, Role, Solution, Strategy
from annotate.services.projects import update_settings
from annotate.services.reorder import reorder_before_any_model
from tests.celery_worker import celery_worker, purge_broker, wait_for
from tests.factories import make_user
from tests.ml.loop_helpers import planted_project


def _queue(project) -> list[Solution]:
    return list(Solution.objects.filter(project=project, is_open=True).order_by("-priority", "id"))


@pytest.mark.django_db
def test_a_model_based_strategy_queues_wrong_answers_first_and_random_is_random():
    project = planted_project("cold-reorder", labeled=0, open_=60, strategy=Strategy.ANSWER_STRATIFIED)
    lead = make_user("lead-cold", project=project, role=Role.LEAD)
    update_settings(project=project, user=lead, selection_strategy=Strategy.CONVINCING_WRONG)
    assert reorder_before_any_model(project_id=project.pk, rng=random.Random(0)) == 60
    queue = _queue(project)
    assert {s.strategy for s in queue} == {QueueOrigin.COLD_START}
    tiers = [s.answer_correct is False for s in queue]
    assert any(tiers) and tiers == sorted(tiers, reverse=True)  # every wrong answer before any right one

    update_settings(project=project, user=lead, selection_strategy=Strategy.RANDOM, control_share=0.3)
    assert reorder_before_any_model(project_id=project.pk, rng=random.Random(1)) == 60
    queue = _queue(project)
    assert {s.strategy for s in queue} == {"random"}  # no control share under random
    assert [s.answer_correct is False for s in queue] != tiers

    update_settings(project=project, user=lead, selection_strategy=Strategy.ANSWER_STRATIFIED)
    assert reorder_before_any_model(project_id=project.pk, rng=random.Random(2)) == 60
    origins = {s.strategy for s in _queue(project)}
    assert origins <= {"answer_stratified", QueueOrigin.CONTROL} and "answer_stratified" in origins


@pytest.mark.django_db
def test_a_queue_a_model_ordered_is_left_to_the_model_loop():
    project = planted_project("model-ordered", labeled=0, open_=10)
    Solution.objects.filter(project=project).update(model_run_id=7, priority=0.5, strategy="convincing_wrong")
    assert reorder_before_any_model(project_id=project.pk) == 0
    assert {s.strategy for s in _queue(project)} == {"convincing_wrong"}


@pytest.mark.django_db(transaction=True)
def test_the_worker_reorders_after_the_settings_page_saves(tmp_path):
    project = planted_project("cold-worker", labeled=0, open_=30, strategy=Strategy.CONVINCING_WRONG)
    lead = make_user("lead-cold-worker", project=project, role=Role.LEAD)
    purge_broker()
    with override_settings(MEDIA_ROOT=tmp_path), celery_worker(queues="default"):
        update_settings(project=project, user=lead, selection_strategy=Strategy.RANDOM)
        wait_for(
            lambda: {s.strategy for s in _queue(project)} == {"random"}, timeout=60, message="the queue in random order"
        )


@pytest.mark.django_db(transaction=True)
def test_solutions_reopened_by_a_higher_overlap_are_queued_under_the_current_settings(tmp_path):
    """Was: raising the overlap reopened labeled solutions with the strategy and priority they were
    first queued with (a strategy no longer set), so the queue and the savings estimate mixed them in."""
    project = planted_project("reopen-order", labeled=20, open_=10, strategy=Strategy.RANDOM)
    Solution.objects.filter(project=project, is_open=False).update(strategy="convincing_wrong", priority=9.0)
    lead = make_user("lead-reopen", project=project, role=Role.LEAD)
    purge_broker()
    with override_settings(MEDIA_ROOT=tmp_path), celery_worker(queues="default"):
        update_settings(project=project, user=lead, overlap=2)
        assert len(_queue(project)) == 30  # the 20 labeled ones are open again
        wait_for(
            lambda: {s.strategy for s in _queue(project)} == {"random"},
            timeout=60,
            message="every open solution queued under random",
        )
    assert max(s.priority for s in _queue(project)) < 9.0
