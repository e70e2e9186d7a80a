"""The embedded default (`make run`) as a real process: SQLite file + filesystem broker + file cache.

Tests that start `manage.py run_dev` or `gunicorn` on it use `embedded_env(var_dir)`, so the
processes never touch the PostgreSQL and Redis the rest of the suite uses.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EMBEDDED_SETTINGS = "config.settings.local"


def embedded_env(var_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL"}}
    env.update(DJANGO_SETTINGS_MODULE=EMBEDDED_SETTINGS, STEPLABEL_VAR_DIR=str(var_dir))
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def manage(env: dict[str, str], *args: str, input: str | None = None) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, input=input
    )
    if result.returncode != 0:
        raise AssertionError(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def wait_until_serving(url: str, *, timeout: float, process: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the server exited with code {process.returncode}")
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except urllib.error.HTTPError:
            return  # any HTTP answer means it serves
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"nothing served {url} within {timeout}s")
