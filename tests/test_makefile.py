"""The Makefile's targets, read with `make -n` (what each would run, without running it)."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _dry_run(target: str) -> str:
    result = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_make_run_installs_no_browser_and_make_test_still_does():
    """Was: `make run` ran all of `make setup`, Chromium included: on a machine without
    /usr/bin/chromium, as a user who may not apt-get (or off Debian), the demo never started
    (`apt-get update` failed) although nothing it serves needs a browser."""
    run = _dry_run("run")
    assert "apt-get" not in run and "chromium" not in run.lower(), run
    assert "manage.py run_dev" in run
    for target in ("setup", "test"):
        assert "apt-get install" in _dry_run(target), target
