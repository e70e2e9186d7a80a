"""A streamed export read slowly, for several times gunicorn's worker timeout, against a real gunicorn.

With config/gunicorn.py (gthread workers) the whole body arrives, equal to the export computed in
process, and `trailer=true` ends it with a line that counts the lines before it. With sync workers
(the old compose setting) the timeout kills the worker mid-stream: the test shows the client can
tell, because the chunked body ends early (IncompleteRead) and no end line arrives.
"""

from __future__ import annotations

import http.client
import json
import os
import runpy
import socket
import subprocess
import sys
import time

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token

from annotate.models import Project, Role
from annotate.services import exports, imports
from annotate.services.members import add_member
from tests.celery_worker import database_url
from tests.embedded import ROOT, free_port, wait_until_serving

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

WORKER_TIMEOUT = 3  # seconds; the reader below takes well over twice that
RECORDS = 1000
READ_BYTES, READ_PAUSE = 16 * 1024, 0.01  # ~1.5 MB/s at most


def record(i: int) -> dict:
    padding = " ".join(f"term{i}_{k}" for k in range(200))  # ~2.5 KB of step text: a ~10 MB export
    steps = [f"Step one of problem {i}: {padding}", f"Step two: {padding}", f"# Answer\n\n{i}"]
    return {
        "labeler": "11111111-1111-4111-8111-111111111111",
        "timestamp": "2022-11-06T03:24:46",
        "generation": 1,
        "is_quality_control_question": False,
        "is_initial_screening_question": False,
        "question": {
            "problem": f"Problem {i}: what is ${i} \\times 1$?",
            "ground_truth_solution": f"$\\boxed{{{i}}}$",
            "ground_truth_answer": str(i),
            "pre_generated_steps": steps,
            "pre_generated_answer": str(i),
            "pre_generated_verifier_score": 0.5,
        },
        "label": {
            "steps": [
                {
                    "completions": [{"text": s, "rating": 1, "flagged": None}],
                    "human_completion": None,
                    "chosen_completion": 0,
                }
                for s in steps
            ],  # fmt: skip
            "total_time": 1000,
            "finish_reason": "solution",
        },
    }


@pytest.fixture
def project_and_token(tmp_path):
    path = tmp_path / "big.jsonl"
    with path.open("w") as out:
        for i in range(RECORDS):
            out.write(json.dumps(record(i)) + "\n")
    project = Project.objects.create(slug="big", name="Big")
    imports.import_file(project=project, path=path)
    user = get_user_model().objects.create_user("engineer")
    add_member(project=project, user=user, role=Role.ML_ENGINEER)
    return project, Token.objects.create(user=user).key


class SmallWindowConnection(http.client.HTTPConnection):
    """A client with a small receive buffer, so the server's writes block while it reads slowly."""

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 * 1024)
        self.sock.settimeout(60)
        self.sock.connect((self.host, self.port))


def slow_read(port: int, token: str, query: str) -> tuple[bytes, str | None, float]:
    """(body read so far, the error that ended it or None, seconds spent reading)."""
    conn = SmallWindowConnection("127.0.0.1", port)
    conn.request("GET", f"/api/v1/projects/big/export/?{query}", headers={"Authorization": f"Token {token}"})
    body, error, started = bytearray(), None, time.monotonic()
    try:
        response = conn.getresponse()
        assert response.status == 200, response.read()[:500]
        while chunk := response.read(READ_BYTES):
            body += chunk
            time.sleep(READ_PAUSE)
    except (http.client.IncompleteRead, ConnectionError) as exc:
        error = type(exc).__name__
    finally:
        conn.close()
    return bytes(body), error, time.monotonic() - started


def gunicorn(port: int, *extra: str) -> subprocess.Popen:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": database_url(),
        "GUNICORN_TIMEOUT": str(WORKER_TIMEOUT),
    }
    argv = [sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.py", "--bind", f"127.0.0.1:{port}"]
    process = subprocess.Popen(
        [*argv, "--workers", "1", *extra], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    wait_until_serving(f"http://127.0.0.1:{port}/accounts/login/", timeout=60, process=process)
    return process


def stop(process: subprocess.Popen) -> str:
    process.terminate()
    try:
        output, _ = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
    return output.decode(errors="replace")


def test_a_slow_reader_gets_the_whole_export_and_its_end_line(project_and_token):
    project, token = project_and_token
    expected = b"".join(exports.iter_chunks(plan=exports.plan_export(project=project, options=exports.ExportOptions())))
    assert len(expected) > 8 * 1024 * 1024  # more than the socket buffers hold (4 MB at most here)
    port = free_port()
    server = gunicorn(port)
    try:
        body, error, seconds = slow_read(port, token, "format=prm800k&trailer=true")
    finally:
        log = stop(server)
    print(f"read {len(body) / 1e6:.1f} MB in {seconds:.1f}s (worker timeout {WORKER_TIMEOUT}s), ended by {error}")
    assert error is None, (error, len(body))
    assert seconds > 2 * WORKER_TIMEOUT, seconds
    assert "WORKER TIMEOUT" not in log
    *records, end = body.splitlines(keepends=True)
    assert b"".join(records) == expected  # the PRM800K lines unchanged, byte for byte
    assert json.loads(end) == {
        exports.END_KEY: {"lines": RECORDS, "format": "prm800k", "cursor": json.loads(end)[exports.END_KEY]["cursor"]}
    }


def test_a_stream_cut_by_a_sync_worker_timeout_is_detectable(project_and_token):
    _, token = project_and_token
    port = free_port()
    # The old setup: a sync worker (threads > 1 would turn it into gthread) blocked writing is killed.
    server = gunicorn(port, "--worker-class", "sync", "--threads", "1")
    try:
        body, error, _ = slow_read(port, token, "format=prm800k&trailer=true")
    finally:
        log = stop(server)
    print(f"sync worker: read {len(body) / 1e6:.1f} MB, ended by {error}")
    assert "WORKER TIMEOUT" in log
    # The chunked body never got its last chunk (or, on a very slow machine, not even its headers).
    assert error in {"IncompleteRead", "RemoteDisconnected"}, error
    assert exports.END_KEY.encode() not in body and body.count(b"\n") < RECORDS


def test_trailer_must_be_a_boolean(project_and_token, client):
    _, token = project_and_token
    response = client.get("/api/v1/projects/big/export/?trailer=maybe", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 400 and "trailer" in response.json()


def test_every_web_server_runs_the_threaded_config():
    """The image, compose's web and `make run` all start gunicorn with config/gunicorn.py (gthread)."""
    config = runpy.run_path(str(ROOT / "config" / "gunicorn.py"))
    assert config["worker_class"] == "gthread" and config["threads"] > 1
    command = '["gunicorn", "-c", "config/gunicorn.py"]'
    assert f"CMD {command}" in (ROOT / "Dockerfile").read_text()
    assert f"command: {command}" in (ROOT / "docker-compose.yml").read_text()
    run_dev = (ROOT / "annotate" / "management" / "commands" / "run_dev.py").read_text()
    assert '"-c", "config/gunicorn.py"' in run_dev
