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


def test_make_bench_runs_the_benches_and_stops_at_the_first_failure(tmp_path):
    """Was: `bench/*.py`, table builders included: warm_start_table.py (needs --cold, --warm) and
    config_switch_prm.py (needs a switch) failed, the loop went on, and its status was the last
    script's, so `make bench` could end 0 after a failed bench."""
    planned = _dry_run("bench")
    assert "bench/bench_prm.py" in planned and "bench/bench_loop.py" in planned
    assert "warm_start_table" not in planned and "config_switch_prm" not in planned
    scripts = []
    for name, body in (("ok", "print('ran ok')"), ("fails", "raise SystemExit(3)"), ("after", "print('ran after')")):
        (tmp_path / f"{name}.py").write_text(body + "\n")
        scripts.append(str(tmp_path / f"{name}.py"))
    done = subprocess.run(
        ["make", "-o", "python-deps", "bench", f"BENCH_SCRIPTS={' '.join(scripts)}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "ran ok" in done.stdout and "ran after" not in done.stdout
