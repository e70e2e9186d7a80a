"""`make run` end to end: run_dev on the embedded default (SQLite + filesystem broker) serves the
login page and the API, runs a worker that consumes tasks, and Ctrl-C stops both processes."""

import io
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import embedded

ROOT = Path(__file__).resolve().parents[2]
TOKEN_COMMAND = ".venv/bin/python manage.py drf_create_token mlengineer"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def embedded_env(tmp_path):
    return embedded.embedded_env(tmp_path / "var")


def manage(env: dict[str, str], *args: str) -> str:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    ).stdout


def test_run_dev_serves_demo_with_a_worker_and_stops_on_ctrl_c(embedded_env, tmp_path):
    port = free_port()
    log_path = tmp_path / "run_dev.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "manage.py", "run_dev", "--port", str(port)],
            cwd=ROOT, env=embedded_env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for(lambda: "Ctrl-C stops both" in log_path.read_text(), 120, "the banner")
        banner = log_path.read_text()
        assert f"{base}/" in banner and "steplabel-demo" in banner and "annotator1" in banner
        assert "sqlite3" in banner and "filesystem://" in banner
        # The token command as printed works from a plain shell (manage.py defaults to production settings),
        # on this server's database: the var dir it runs with holds the SQLite file.
        var = f"STEPLABEL_VAR_DIR={embedded_env['STEPLABEL_VAR_DIR']} "
        assert (
            f"{var}DJANGO_SETTINGS_MODULE=config.settings.local .venv/bin/python manage.py drf_create_token" in banner
        )

        status, body = wait_for(lambda: _up(f"{base}/accounts/login/"), 30, "the web server")
        assert status == 200 and 'name="username"' in body

        token = re.search(r"Generated token (\w+)", manage(embedded_env, "drf_create_token", "annotator1")).group(1)
        status, body = get(f"{base}/api/v1/projects/", {"Authorization": f"Token {token}"})
        assert status == 200 and '"slug":"demo"' in body.replace(" ", "")

        # The worker is a real process consuming the filesystem broker: a built-in task runs.
        worker_pid = int(re.search(r"worker pid (\d+)", banner).group(1))
        os.kill(worker_pid, 0)
        subprocess.run(
            [sys.executable, "-c", "from config.celery import app; app.send_task('celery.accumulate', args=(4242,))"],
            cwd=ROOT, env=embedded_env, check=True,
        )  # fmt: skip
        wait_for(lambda: re.search(r"celery.accumulate\[.*\] succeeded.*4242", log_path.read_text()), 60, "the task")
        # Beat runs inside the worker (-B), so the job sweep is scheduled in the dev stack too.
        var_dir = Path(embedded_env["STEPLABEL_VAR_DIR"])
        wait_for(lambda: list(var_dir.glob("celerybeat-schedule*")), 60, "beat's schedule file")
        assert "beat: Starting..." in log_path.read_text()
        web_pid = int(re.search(r"web pid (\d+)", banner).group(1))
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    log = log_path.read_text()
    assert "Stopped." in log
    assert "No hostname was supplied" not in log  # the default broker URL names its host
    for pid in (web_pid, worker_pid):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.parametrize(("var_dir", "prefix"), [(None, ""), ("/srv/my var", "STEPLABEL_VAR_DIR='/srv/my var' ")])
def test_the_banners_token_command_names_the_var_dir_the_server_runs_with(monkeypatch, var_dir, prefix):
    """Without it, the printed command made the token in var/'s database, not the server's."""
    from annotate.management.commands.run_dev import Command

    if var_dir is None:
        monkeypatch.delenv("STEPLABEL_VAR_DIR", raising=False)
    else:
        monkeypatch.setenv("STEPLABEL_VAR_DIR", var_dir)
    out = io.StringIO()
    Command(stdout=out)._banner("127.0.0.1", 8000, {"web": SimpleNamespace(pid=1), "worker": SimpleNamespace(pid=2)})
    (line,) = [x.strip() for x in out.getvalue().splitlines() if "drf_create_token" in x]
    assert line == f"{prefix}DJANGO_SETTINGS_MODULE=config.settings.local {TOKEN_COMMAND}"


def test_the_banner_masks_the_brokers_password(settings):
    """The operations walkthrough: `make run` on Redis printed the broker URL, password and all."""
    from annotate.management.commands.run_dev import Command

    settings.CELERY_BROKER_URL = "redis://:s3cret-pass@127.0.0.1:6379/0"
    out = io.StringIO()
    Command(stdout=out)._banner("127.0.0.1", 8000, {"web": SimpleNamespace(pid=1), "worker": SimpleNamespace(pid=2)})
    (line,) = [x.strip() for x in out.getvalue().splitlines() if x.strip().startswith("broker:")]
    assert line == "broker:   redis://:**@127.0.0.1:6379/0"


def _up(url: str):
    try:
        return get(url)
    except OSError:
        return None


def test_run_dev_refuses_a_port_in_use_before_the_banner(embedded_env):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "manage.py", "run_dev", "--port", str(port)],
            cwd=ROOT, env=embedded_env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert result.returncode != 0
    assert f"Cannot serve on 127.0.0.1:{port}" in result.stderr and "Address already in use" in result.stderr
    assert f"PORT={port + 1} make run" in result.stderr
    assert "Steplabel is running" not in result.stdout and "Database migrated" not in result.stdout


def test_run_dev_names_a_database_nobody_created_and_how_to_create_it(embedded_env):
    """Found by the README audit: `make run` against PostgreSQL whose database was not created yet
    died with a psycopg traceback. It now says which database and the command that creates it."""
    env = {**embedded_env, "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/steplabel_never_created"}
    result = subprocess.run(
        [sys.executable, "manage.py", "run_dev", "--port", str(free_port())],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode != 0
    assert "Cannot open the database steplabel_never_created on 127.0.0.1:5432" in result.stderr, result.stderr
    assert "createdb -h 127.0.0.1 -U postgres steplabel_never_created" in result.stderr
    assert "Traceback" not in result.stderr and "Database migrated" not in result.stdout


def test_management_commands_print_no_axes_banner(embedded_env):
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=embedded_env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert "AXES" not in result.stderr and "AXES" not in result.stdout
