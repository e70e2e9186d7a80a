"""README "Active learning" states how often stuck and lost training runs are swept: it said every 5
minutes while beat ran the sweep every minute (found walking the active-learning loop)."""

import re
from datetime import timedelta
from pathlib import Path

from django.conf import settings

from ml.services.runs import sweep_stale_runs

README = Path(__file__).resolve().parents[2] / "README.md"
WORDS = {"every minute": 60.0}


def _section() -> str:
    text = README.read_text()
    return text[text.index("## Active learning") : text.index("## Dashboard for leads")]


def test_the_readme_gives_the_sweep_interval_that_beat_uses():
    found = re.search(r"that Celery beat runs (every minute|every \d+ minutes)", " ".join(_section().split()))
    assert found, "README's Active learning no longer says how often the job sweep runs"
    stated = WORDS.get(found.group(1)) or 60.0 * int(found.group(1).split()[1])
    entry = next(e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == "core.tasks.sweep_jobs")
    assert entry["schedule"] == stated
    assert "ml.services.sweep_training_runs" in settings.JOB_SWEEPERS


def test_the_readme_gives_the_wait_before_a_lost_run_is_sent_again():
    section = " ".join(_section().split())
    assert "waiting over 2 minutes with none running" in section
    default = sweep_stale_runs.__kwdefaults__["waiting_after"]
    assert default == timedelta(minutes=2)
