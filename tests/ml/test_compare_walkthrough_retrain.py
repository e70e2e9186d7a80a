"""`manage.py retrain --wait` on a compare project says what its reward model was trained on and
how it did (ML engineer walkthrough): it printed "succeeded on 17 step labels" (they were
preferences) and "Held-out: none (too few problems)" beside a log line with 2 held-out pairs, as it
read only a PRM's metric names."""

import io

import pytest
from django.core.management import call_command
from django.test import override_settings

from ml.models import TrainingRun
from tests.ml.reward_helpers import planted_compare_project


@pytest.mark.django_db
def test_retrain_wait_on_a_compare_project_reports_preferences_and_held_out_pairwise_accuracy(tmp_path):
    project = planted_compare_project("duelcmd", 40, labeled=30)
    out = io.StringIO()
    with override_settings(MEDIA_ROOT=tmp_path):
        call_command("retrain", project="duelcmd", wait=True, config='{"max_epochs": 3}', stdout=out)
    run = TrainingRun.objects.get(project=project)
    heldout = run.metrics["heldout"]
    assert heldout["n_pairs"] > 0, run.metrics
    last = out.getvalue().strip().splitlines()[-1]
    assert f"Run {run.pk} succeeded on 30 preferences and is active" in last
    accuracy = f"{heldout['pairwise_accuracy']:.3f}"
    low, high = (f"{x:.2f}" for x in heldout["pairwise_accuracy_ci"])
    assert f"Held-out: pairwise accuracy {accuracy} (95% interval {low}-{high}) on {heldout['n_pairs']} pairs." in last
    assert "step labels" not in last and "too few problems" not in last
    assert "open pairs reordered" in out.getvalue() or "open pair reordered" in out.getvalue()


@pytest.mark.django_db
def test_retrain_wait_on_a_compare_project_without_held_out_pairs_says_so(tmp_path):
    project = planted_compare_project("duelnone", 4, labeled=2)
    out = io.StringIO()
    with override_settings(MEDIA_ROOT=tmp_path):
        config = '{"max_epochs": 2, "heldout_fraction": 0.0}'  # every problem trains: nothing held out
        call_command("retrain", project="duelnone", wait=True, config=config, stdout=out)
    run = TrainingRun.objects.get(project=project)
    last = out.getvalue().strip().splitlines()[-1]
    assert f"Run {run.pk} succeeded on 2 preferences and is active" in last
    assert "Held-out: none (no held-out pairs)." in last
    assert "2 open pairs reordered" in out.getvalue()
