"""A small team on the embedded default: 10 annotators claim and submit 20 tasks each, at once,
through the HTTP API of a real `make run` (run_dev: gunicorn + Celery worker on one SQLite file).

Target (issue 11): 0 error answers, 0 duplicated labels, every submit answered with its result.
Before SQLite was opened with IMMEDIATE transactions, WAL and a busy timeout, hundreds of these
requests answered 500 (`database is locked`).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter

import pytest

from tests.embedded import ROOT, embedded_env, free_port, manage, wait_until_serving

pytestmark = pytest.mark.slow

ANNOTATORS = 10
TASKS_EACH = 20
SOLUTIONS = ANNOTATORS * TASKS_EACH + 20  # a few spare: nobody runs out before their 20th

TEAM_SCRIPT = """
import json
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from annotate.models import Project, Role
from annotate.services.members import add_member

project = Project.objects.get(slug="team")
tokens = {}
for i in range(%d):
    user = get_user_model().objects.create_user(f"annotator{i}")
    add_member(project=project, user=user, role=Role.ANNOTATOR)
    tokens[user.username] = Token.objects.create(user=user).key
print(json.dumps(tokens))
"""


def call(method: str, url: str, token: str, body: dict | None = None) -> tuple[int, dict | None]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Authorization", f"Token {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            raw = response.read()
            return response.status, (json.loads(raw) if raw else None)
    except urllib.error.HTTPError as exc:
        return exc.code, {"error": exc.read().decode(errors="replace")[:300]}


def test_ten_annotators_label_twenty_tasks_each_on_sqlite(tmp_path):
    env = embedded_env(tmp_path / "var")
    records = tmp_path / "team.jsonl"
    with records.open("w") as out:
        for i in range(SOLUTIONS):
            out.write(
                json.dumps(
                    {
                        "problem": f"What is ${i} + {i}$?",
                        "ground_truth_answer": str(2 * i),
                        "steps": [f"Add {i} to itself.", f"${i} + {i} = {2 * i}$.", f"# Answer\n\n{2 * i}"],
                        "answer": str(2 * i),
                        "source_id": f"team-{i}",
                    }
                )
                + "\n"
            )
    manage(env, "migrate", "--noinput", "-v", "0")
    manage(env, "import_prm800k", str(records), "--project", "team")
    tokens = json.loads(manage(env, "shell", "-c", TEAM_SCRIPT % ANNOTATORS).strip().splitlines()[-1])

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log_path = tmp_path / "run_dev.log"
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [sys.executable, "manage.py", "run_dev", "--no-demo", "--port", str(port)],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    statuses: Counter[tuple[str, int]] = Counter()
    submits: list[dict] = []
    failures: list[str] = []
    lock = threading.Lock()

    def annotate(name: str, token: str) -> None:
        task = None
        done = attempts = 0
        while done < TASKS_EACH and attempts < 3 * TASKS_EACH:  # errors are counted, then the loop goes on
            attempts += 1
            if task is None:
                code, task = call("GET", f"{base}/api/v1/projects/team/tasks/next/", token)
                with lock:
                    statuses[("next", code)] += 1
                if code != 200:
                    failures.append(f"{name} next -> {code} {task}")
                    task = None
                    continue
            payload = {
                "idempotency_key": str(uuid.uuid4()),
                "finish_reason": "solution",
                "total_time_ms": 1000,
                "steps": [{"index": step["index"], "rating": 1, "flagged": False} for step in task["steps"]],
            }
            code, result = call("POST", f"{base}/api/v1/assignments/{task['id']}/submit/", token, payload)
            with lock:
                statuses[("submit", code)] += 1
                if code == 201 and result and result.get("annotation_id"):
                    submits.append({"annotator": name, "assignment": task["id"], **result})
                else:
                    failures.append(f"{name} submit {task['id']} -> {code} {result}")
                    task = None
                    continue
            done += 1
            task = result["next"]  # claimed in the same response; None -> GET next again

    try:
        wait_until_serving(f"{base}/accounts/login/", timeout=180, process=server)
        started = time.monotonic()
        threads = [threading.Thread(target=annotate, args=item) for item in tokens.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=600)
        elapsed = time.monotonic() - started
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
    log = log_path.read_text()
    print(f"{len(submits)} submits by {ANNOTATORS} annotators in {elapsed:.1f}s; answers {dict(statuses)}")

    assert not failures, (len(failures), dict(statuses), failures[:3])
    assert "database is locked" not in log
    assert {code for (_, code) in statuses} == {200, 201}, statuses
    # Every submit answered with its own new annotation; no solution labeled twice.
    assert len(submits) == ANNOTATORS * TASKS_EACH
    assert len({s["annotation_id"] for s in submits}) == len(submits)
    assert len({s["assignment"] for s in submits}) == len(submits)
    check = manage(
        env,
        "shell",
        "-c",
        "from annotate.models import Annotation; from django.db.models import Count;"
        "print(Annotation.objects.count(), Annotation.objects.values('solution').distinct().count(),"
        " Annotation.objects.values('solution').annotate(n=Count('id')).filter(n__gt=1).count())",
    )
    assert check.strip().splitlines()[-1].split() == [str(len(submits)), str(len(submits)), "0"], check
