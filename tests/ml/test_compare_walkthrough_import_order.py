"""Pairs imported into a compare project that has a reward model are scored by it (lead
walkthrough): they kept their import priority (2.9 for a right-vs-wrong pair) above every pair the
model had scored (at most 1: its uncertainty), so they were served first whatever the model
thought, and had no P(A better) until the next run. The step path scores an import's solutions
with the active model; pairs had no such step (ml.services_auto skipped compare projects)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import override_settings

from annotate.models import Comparison
from annotate.services import imports
from ml import services
from tests.celery_worker import celery_worker, purge_broker, wait_for
from tests.ml.reward_helpers import planted_compare_project


@pytest.mark.django_db(transaction=True)
def test_an_import_into_a_compare_project_with_a_reward_model_is_ordered_by_it(tmp_path: Path):
    project = planted_compare_project("pairs-later", 30, labeled=20)
    lines = tmp_path / "new.jsonl"
    lines.write_text(
        "".join(
            json.dumps({"problem": "What is 5+5?", "ground_truth_answer": "10", "steps": steps}) + "\n"
            for steps in (["Five and five.", "# Answer\n\n10"], ["Five and five is eleven.", "# Answer\n\n11"])
        )
    )
    with override_settings(MEDIA_ROOT=tmp_path):
        run = services.request_retrain(project=project, config={"max_epochs": 3}, enqueue=False)
        assert services.run_training(run_id=run.pk).status == "succeeded"
        before = set(Comparison.objects.filter(project=project).values_list("pk", flat=True))
        purge_broker()
        with celery_worker(queues="ml"):
            assert imports.import_file(project=project, path=lines).pairs_created == 1
            new = Comparison.objects.filter(project=project).exclude(pk__in=before)
            assert new.get().model_probability is None  # as imported: the reason's priority
            wait_for(lambda: new.get().model_probability is not None, timeout=90, message="the reward model's order")
    # one scale with the pairs the model scored before: its uncertainty, not the import's tiers (up to 3)
    assert max(Comparison.objects.filter(project=project, is_open=True).values_list("priority", flat=True)) <= 1.0
