"""Dashboard model and queue sections: runs, the learning curve with held-out sizes, the queue's
composition (the campaign of tests/annotate/stats_campaign.py).
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from annotate.selectors.stats import project_stats
from ml.models import TrainingRun
from ml.selectors import model_summary
from tests.annotate.stats_campaign import NOW

pytestmark = pytest.mark.django_db


def test_model_learning_curve_and_queue(campaign):
    stats = project_stats(project=campaign["project"], now=NOW)
    model = model_summary(project=campaign["project"])  # merged into the API's answer by the view
    r1, r2, r3, r4 = (r.pk for r in campaign["runs"])
    assert [r["id"] for r in model["runs"]] == [r1, r2, r3, r4]
    assert model["active_run"]["id"] == r2 and model["active_run"]["is_active"] is True
    assert model["latest_run"]["id"] == r4 and model["latest_run"]["status"] == "running"
    assert model["in_progress"] is True
    assert model["runs"][2]["error"] == "ValueError: boom"
    assert model["curve_metrics"] == ["auroc_negative", "accuracy", "first_error_f1", "ece"]
    assert model["learning_curve"] == [
        {"run": r1, "label_count": 100, "auroc_negative": 0.6, "accuracy": 0.5, "first_error_f1": 0.3, "ece": 0.2},
        {"run": r2, "label_count": 300, "auroc_negative": 0.7, "accuracy": 0.6, "first_error_f1": 0.4, "ece": 0.1},
    ]
    savings = stats["queue"].pop("savings")
    assert stats["queue"] == {
        "selection_strategy": "answer_stratified",  # the default
        "open_by_strategy": [
            {"strategy": "convincing_wrong", "open": 1},
            {"strategy": "random", "open": 1},
            {"strategy": "uncertainty", "open": 1},
        ],
    }
    # no control labelings in this campaign: the savings estimate says so instead of guessing
    assert savings["status"] == "not_enough_data" and savings["n_control"] == 0 and savings["labels_saved"] is None
    # the dashboard's "the share is at its most" reads the bound the project's validator enforces
    project = campaign["project"]
    project.control_share = savings["max_control_share"]
    project.full_clean()
    project.control_share = savings["max_control_share"] + 0.01
    with pytest.raises(ValidationError, match="control_share"):
        project.full_clean()


def test_learning_curve_shows_heldout_size_intervals_and_when_it_is_too_small(campaign):
    project = campaign["project"]
    tiny = {"accuracy": 1.0, "first_error_f1": 1.0, "n_steps": 6, "n_solutions": 2}
    tiny |= {"accuracy_ci": [0.61, 1.0], "first_error_f1_ci": [0.0, 1.0]}
    big = {"accuracy": 0.8, "first_error_f1": 0.6, "n_steps": 900, "n_solutions": 120}
    big |= {"accuracy_ci": [0.77, 0.83], "first_error_f1_ci": [0.52, 0.68]}
    runs = [
        TrainingRun.objects.create(project=project, label_count=n, status="succeeded", metrics={"heldout": m})
        for n, m in ((19, tiny), (5000, big))
    ]
    curve = model_summary(project=project)["learning_curve"]
    points = {p["run"]: p for p in curve}
    assert points[runs[0].pk] == {"run": runs[0].pk, "label_count": 19, **tiny, "too_small": True}
    assert points[runs[1].pk] == {"run": runs[1].pk, "label_count": 5000, **big, "too_small": False}
    # Runs trained before the size was stored show no verdict rather than a wrong one.
    assert "too_small" not in points[campaign["runs"][0].pk]
