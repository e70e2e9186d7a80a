"""The production stack as an operator runs it: a real gunicorn on `config.settings.production`
against the test's PostgreSQL database (README "Real stack")."""

from __future__ import annotations

import re
import secrets
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import connection
from rest_framework.authtoken.models import Token

from tests.embedded import ROOT, free_port, wait_until_serving

pytestmark = pytest.mark.django_db(transaction=True)


def _database_url() -> str:
    db = connection.settings_dict
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@contextmanager
def production_gunicorn(tmp_path, **env: str) -> Iterator[str]:
    """One gunicorn worker with one thread (so one database connection), production settings."""
    import os

    port = free_port()
    environ = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DATABASE_URL": _database_url(),
        "STEPLABEL_VAR_DIR": str(tmp_path / "var"),
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "1",
        "GUNICORN_THREADS": "1",
        "SECURE_SSL_REDIRECT": "false",  # no HTTPS proxy in front here
        **env,
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.py"],
        cwd=ROOT,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(f"{base}/api/v1/health/", timeout=60, process=server)
        yield base
    finally:
        server.terminate()
        print(server.communicate(timeout=30)[0].decode(errors="replace"))  # the server's log, shown on failure


def _get(url: str, token: str) -> int:
    headers = {"Authorization": f"Token {token}", "X-Forwarded-Proto": "https"}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_a_database_restart_costs_no_request_its_500(tmp_path, django_user_model):
    """Was: web processes keep their connection DB_CONN_MAX_AGE (60 s) and never checked it before
    reuse. After PostgreSQL restarted (an upgrade, a failover, a firewall dropping idle connections),
    the first request on each kept connection answered 500 (`terminating connection due to
    administrator command`): up to WEB_CONCURRENCY x GUNICORN_THREADS failed requests, submits
    among them."""
    user = django_user_model.objects.create_user("ops", password="pw-ops-steplabel")
    token = Token.objects.create(user=user).key
    with production_gunicorn(tmp_path) as base:
        assert _get(f"{base}/api/v1/projects/", token) == 200  # the worker's connection is now kept
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            assert cursor.fetchone()[0] >= 1
        assert [_get(f"{base}/api/v1/projects/", token) for _ in range(3)] == [200, 200, 200]


def _seconds(duration: str) -> float:
    """Compose's duration (`40s`, `10m`, `1m30s`) in seconds."""
    units = {"h": 3600, "m": 60, "s": 1}
    parts = re.findall(r"(\d+(?:\.\d+)?)(h|m|s)", duration)
    assert parts and "".join(n + u for n, u in parts) == duration, duration
    return sum(float(n) * units[u] for n, u in parts)


def test_compose_gives_a_stopping_web_and_its_job_workers_the_time_to_finish():
    """Was: compose left Docker's 10 s stop timeout: `docker compose up -d --build` (the README's
    upgrade) or `docker compose stop` killed gunicorn before its own 30 s graceful timeout, and a
    worker mid-import or mid-export or mid-training was killed, its job left `running` until the
    sweep's deadline (imports 6 h, exports 2 h, training runs 1 h) before anything ran it again."""
    import yaml

    from annotate.services.exports.jobs import EXPORT_RUNNING_DEADLINE

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    graceful = int(re.search(r'"GUNICORN_GRACEFUL_TIMEOUT", "(\d+)"', (ROOT / "config/gunicorn.py").read_text())[1])
    assert _seconds(services["web"].get("stop_grace_period", "10s")) > graceful
    for name in ("worker", "ml-worker"):
        grace = _seconds(services[name].get("stop_grace_period", "10s"))
        assert 300 <= grace < EXPORT_RUNNING_DEADLINE.total_seconds(), name


def test_a_worker_waits_out_a_long_redis_outage():
    """Was: Celery's default of 100 reconnection tries (2, 4, ... then every 30 s: about 47 minutes)
    ended with `Unrecoverable error` and the worker process exited; when Redis came back, nothing
    consumed the queues unless a supervisor restarted it (a worker run with
    `broker_connection_max_retries = 2` exits within seconds of Redis stopping, so the limit is what
    decides). The app every worker loads retries for ever."""
    from config.celery import app

    assert app.conf.broker_connection_max_retries is None
    assert app.conf.broker_connection_retry is True


def test_check_deploy_says_when_the_static_files_are_not_collected_or_stale(settings, tmp_path):
    """Was: production serves hashed static names from collectstatic's manifest, and nothing said
    when it was missing (gunicorn started outside the Docker image without `collectstatic`) or
    stale (an upgrade whose new bundle was never collected): `check --deploy` was clean while every
    page answered 500 (`Missing staticfiles manifest entry`), its error page too."""
    from django.core.checks import run_checks
    from django.core.management import call_command

    source = tmp_path / "bundle"
    (source / "steplabel").mkdir(parents=True)
    (source / "steplabel" / "pages.js").write_text("console.log(1);\n")
    settings.STATICFILES_DIRS = [source]
    settings.STATIC_ROOT = tmp_path / "static"
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }

    def ids() -> set[str]:
        return {message.id for message in run_checks(include_deployment_checks=True)}

    assert "steplabel.W003" in ids()
    call_command("collectstatic", interactive=False, verbosity=0)
    assert not {"steplabel.W003", "steplabel.W004"} & ids()
    (source / "steplabel" / "chunk-new.js").write_text("console.log(2);\n")  # an upgrade's new file
    assert "steplabel.W004" in ids()
    call_command("collectstatic", interactive=False, verbosity=0)
    assert "steplabel.W004" not in ids()


def test_compose_serves_the_static_files_the_image_collected():
    """STATIC_ROOT is a setting, and every setting in .env reaches the containers: the stack pins it
    to where the Dockerfile's collectstatic wrote (the app's WORKDIR), or web would serve none."""
    import yaml

    dockerfile = (ROOT / "Dockerfile").read_text()
    app_stage = dockerfile.split("AS app", 1)[1]
    workdir = re.search(r"^WORKDIR (\S+)$", app_stage, flags=re.MULTILINE)[1]
    collect = next(line for line in app_stage.splitlines() if "collectstatic" in line)
    assert "STATIC_ROOT" not in collect  # so it collects to the settings' default, BASE_DIR/static_build
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert compose["x-app"]["environment"]["STATIC_ROOT"] == f"{workdir}/static_build"
    for name in ("web", "worker", "ml-worker", "autolabel-worker", "beat", "migrate"):
        assert compose["services"][name]["environment"]["STATIC_ROOT"] == f"{workdir}/static_build", name


def test_compose_keeps_web_listening_where_its_published_port_points():
    """Was: GUNICORN_BIND in .env reached the web container (every setting there does), so an
    operator who set it to 127.0.0.1:8000 for a loopback-only site got a web that Docker's port
    mapping could not reach (it connects to the container's own address), while the healthcheck,
    which curls 127.0.0.1 from inside, still passed. WEB_BIND is the host side's setting."""
    import yaml

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    web = compose["services"]["web"]
    container_port = str(web["ports"][0]).rsplit(":", 1)[1]
    assert web["environment"]["GUNICORN_BIND"] == f"0.0.0.0:{container_port}"
    assert f"http://127.0.0.1:{container_port}/" in web["healthcheck"]["test"][-1]
