"""Management commands of the model loop: `retrain` (queued or --wait) and `simulate_active_learning`."""

import io
import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import override_settings
from django.utils import timezone

from core.models import JobStatus
from ml.models import TrainingRun
from ml.prm.data import DATA
from tests.ml.loop_helpers import TINY, planted_project

PROCESSBENCH = DATA / "processbench" / "math.json"


@pytest.mark.django_db
def test_retrain_wait_says_when_a_leads_rollback_held_the_run_back(tmp_path):
    """Was: 'succeeded ... and is active' under a log line saying it was not activated."""
    project = planted_project("held", labeled=50, open_=10)
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY):
        call_command("retrain", project="held", wait=True, stdout=io.StringIO())
        chosen = TrainingRun.objects.get(project=project, is_active=True)
        # The lead's rollback to it lands after the next run is asked for (activated_at after its request).
        lead = get_user_model().objects.create(username="lead-held")
        TrainingRun.objects.filter(pk=chosen.pk).update(
            activated_by=lead, activated_at=timezone.now() + timedelta(hours=1)
        )
        out = io.StringIO()
        call_command("retrain", project="held", wait=True, stdout=out)
    run = TrainingRun.objects.filter(project=project).latest("pk")
    assert run.status == JobStatus.SUCCEEDED and not run.is_active
    assert f"Run {run.pk} succeeded on" in out.getvalue()
    assert f"is not active: a lead chose run {chosen.pk} meanwhile (activate it to use it)" in out.getvalue()
    assert "and is active" not in out.getvalue()


@pytest.mark.django_db
def test_retrain_queues_a_run_then_wait_trains_it_here(tmp_path, django_capture_on_commit_callbacks):
    project = planted_project("cmd", labeled=50, open_=10)
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=False) as enqueued:
        call_command("retrain", project="cmd", stdout=out)
    run = TrainingRun.objects.get(project=project)
    assert run.status == JobStatus.CREATED and len(enqueued) == 1
    assert f"Training run {run.pk} queued" in out.getvalue()

    out = io.StringIO()
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY):
        call_command("retrain", project="cmd", wait=True, stdout=out)
    text = out.getvalue()
    run.refresh_from_db()
    assert run.status == JobStatus.SUCCEEDED and run.is_active, run.error
    assert "joined the waiting run" in text and "epoch=" in text and "generation 1" in text
    assert TrainingRun.objects.filter(project=project).count() == 1

    with pytest.raises(CommandError, match="No project"):
        call_command("retrain", project="nope")
    with pytest.raises(CommandError, match="unknown training config"):
        call_command("retrain", project="cmd", config='{"bogus": 1}')


def _tiny_simulation(tmp_path, *, strategies: str, seeds: int) -> None:
    """One round on 80 ProcessBench solutions with a small head: seconds, into tmp_path."""
    call_command(
        "simulate_active_learning",
        data=PROCESSBENCH,
        strategies=strategies,
        rounds=1,
        seeds=seeds,
        limit=80,
        round_share=0.2,
        seed_share=0.2,
        head=json.dumps({"k": 3, "steps": 30}),
        out_dir=tmp_path / "sim",
        results=tmp_path / "results",
        quiet=True,
        stdout=io.StringIO(),
    )


@pytest.mark.skipif(not PROCESSBENCH.exists(), reason="shared data not present")
def test_simulate_writes_curves_efficiency_intervals_and_a_png(tmp_path):
    _tiny_simulation(tmp_path, strategies="random,uncertainty,value", seeds=2)
    name = PROCESSBENCH.stem
    results = json.loads((tmp_path / "sim" / f"{name}.json").read_text())
    assert set(results["per_seed"]) == {"random", "uncertainty", "value"}
    for curves in results["per_seed"].values():
        assert len(curves) == 2 and all(len(c) == 2 and c[0]["labels"] > 0 for c in curves)
        assert all("first_error_f1" in p and "auroc_negative" in p for c in curves for p in c)
    md = (tmp_path / "results" / "simulation.md").read_text()
    assert f"| {name} | value |" in md and "95% CI" in md and "nAULC" in md
    assert (tmp_path / "results" / f"simulation_{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(CommandError, match="--strategies: unknown"):
        call_command("simulate_active_learning", data=PROCESSBENCH, strategies="best", out_dir=tmp_path)
    with pytest.raises(CommandError, match="--datasets: unknown"):
        call_command("simulate_active_learning", datasets="nope", out_dir=tmp_path)
    # no round: no strategy picks anything, and every one read "1.00x" of random
    with pytest.raises(CommandError, match="--rounds must be >= 1"):
        call_command("simulate_active_learning", data=PROCESSBENCH, rounds=0, out_dir=tmp_path)


@pytest.mark.django_db
def test_train_base_prm_writes_a_checkpoint_that_a_project_run_fine_tunes_from(tmp_path):
    """PRM800K records in, a base checkpoint out; a deployment that names it warm-starts every run."""
    from ml.prm.synthetic import planted_solutions

    lines = []
    for pid, problem, steps, first_error, _correct in planted_solutions(300, seed=7):
        stop = len(steps) if first_error < 0 else first_error + 1
        rated = [
            {
                "completions": [{"text": s, "rating": -1 if i == first_error else 1, "flagged": False}],
                "chosen_completion": None if i == first_error else 0,
            }
            for i, s in enumerate(steps[:stop])
        ]
        lines.append(json.dumps({"question": {"problem": f"{pid}: {problem}"}, "label": {"steps": rated}}))
    data = tmp_path / "base.jsonl"
    data.write_text("\n".join(lines) + "\n")
    out = io.StringIO()
    base = tmp_path / "models" / "base.pt"
    call_command("train_base_prm", data=[data], out=base, config=json.dumps(TINY), stdout=out, stderr=io.StringIO())
    assert base.is_file() and "held-out AUROC(-1)" in out.getvalue()
    with pytest.raises(CommandError, match="no such file"):
        call_command("train_base_prm", data=[tmp_path / "none.jsonl"], out=base)

    project = planted_project("warm", labeled=30, open_=10)
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG={**TINY, "base_checkpoint": str(base)}):
        call_command("retrain", project="warm", wait=True, stdout=io.StringIO())
    run = TrainingRun.objects.get(project=project)
    assert run.status == JobStatus.SUCCEEDED and run.is_active, run.error
    assert run.config["base_checkpoint"] == str(base)

    # a base that does not fit fails the run with the setting's message, not a traceback
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG={**TINY, "base_checkpoint": str(tmp_path / "x.pt")}):
        with pytest.raises(CommandError, match="failed") as failed:
            call_command("retrain", project="warm", wait=True, stdout=io.StringIO())
    message = str(failed.value)
    assert "Training config: base_checkpoint: no such file" in message and "Traceback" not in message


@pytest.mark.django_db
def test_retrain_config_refusals_name_the_option_and_the_nearest_key(tmp_path):
    """Was: `--config '[1]'` a TypeError traceback, `--config max_epochs=5` "Expecting value: line 1
    column 1 (char 0)" naming no option, and `max_epoch` refused with no hint (the API gives one)."""
    planted_project("cfg", labeled=5, open_=0)
    with pytest.raises(CommandError, match=r"^--config: must be a JSON object"):
        call_command("retrain", project="cfg", config="[1]")
    with pytest.raises(CommandError, match=r"^--config: not JSON"):
        call_command("retrain", project="cfg", config="max_epochs=5")
    with pytest.raises(CommandError, match=r"^--config: max_epoch: unknown .* \(did you mean max_epochs\?\)"):
        call_command("retrain", project="cfg", config='{"max_epoch": 5}')
    # the deployment's own typo is named as the deployment's, not blamed on --config
    with override_settings(ML_TRAINING_CONFIG={"max_epoch": 5}):
        with pytest.raises(CommandError, match=r"^ML_TRAINING_CONFIG: max_epoch: .*did you mean max_epochs"):
            call_command("retrain", project="cfg", config='{"max_epochs": 2}')
    assert not TrainingRun.objects.filter(project__slug="cfg").exists()


@pytest.mark.parametrize(
    "value, says",
    [("{max_epochs: 5}", "ML_TRAINING_CONFIG is not JSON"), ("[1]", "ML_TRAINING_CONFIG must be a JSON object")],
)
def test_a_bad_ml_training_config_stops_at_start_naming_the_variable(value, says):
    """Was: a JSONDecodeError traceback naming no variable on every command, or (a list) every run
    failing in the worker with "TypeError: 'list' object is not a mapping"."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "ML_TRAINING_CONFIG": value, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert f"ImproperlyConfigured: {says}" in done.stderr


def test_train_base_prm_refuses_a_config_that_is_not_an_object(tmp_path):
    """Was: a TypeError traceback ('list' object is not a mapping) for `--config '[1]'`."""
    data = tmp_path / "any.jsonl"
    data.write_text("")
    with pytest.raises(CommandError, match=r"^--config: must be a JSON object"):
        call_command("train_base_prm", data=[data], out=tmp_path / "b.pt", config="[1]")


def test_simulate_keeps_the_shipped_page_unless_every_set_makes_it(tmp_path):
    """Was: README's `--datasets gsm8k,math --seeds 5`, with the default --results, rewrote
    bench/results/simulation.md and the dashboard's evidence from those two sets alone."""
    from ml.management.commands.simulate_active_learning import DEFAULT_RESULTS, FRONTEND_EVIDENCE

    shipped = (DEFAULT_RESULTS / "simulation.md").read_bytes(), FRONTEND_EVIDENCE.read_bytes()
    with pytest.raises(CommandError, match=r"built from every data set; this run would rebuild them without "):
        call_command("simulate_active_learning", datasets="gsm8k,math", seeds=1, out_dir=tmp_path / "sim")
    with pytest.raises(CommandError, match=r"would rebuild them from a file of your own\. .*--results DIR"):
        call_command("simulate_active_learning", data=Path(__file__), out_dir=tmp_path / "sim")
    assert ((DEFAULT_RESULTS / "simulation.md").read_bytes(), FRONTEND_EVIDENCE.read_bytes()) == shipped
    assert not (tmp_path / "sim").exists() or not any((tmp_path / "sim").iterdir())


@pytest.mark.skipif(not PROCESSBENCH.exists(), reason="shared data not present")
def test_simulate_with_one_seed_gives_no_interval(tmp_path):
    """Was: `--seeds 1` printed '1.00x (1.00–1.00)' and '-0.062 (-0.062–-0.062)': a bootstrap over one
    seed resamples that seed only, so the "95% CI" was the estimate twice, as if it were certain."""
    _tiny_simulation(tmp_path, strategies="random,value", seeds=1)
    md = (tmp_path / "results" / "simulation.md").read_text()
    rows = [line for line in md.splitlines() if line.startswith(f"| {PROCESSBENCH.stem} | ")]
    assert len(rows) >= 2 and all(row.count("(1 seed: no interval)") == 2 for row in rows[:2]), rows
    assert "(1.00–1.00)" not in md
