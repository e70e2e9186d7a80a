"""The gunicorn server under test, started on the benchmark's database and stopped with its
process group."""

from __future__ import annotations

import argparse
import http.client
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from queue_bench.database import ROOT, server_env

SERVER_LOG = Path("/tmp/bench_queue_gunicorn.log")


def start_server(args: argparse.Namespace) -> subprocess.Popen:
    command = [
        str(Path(sys.executable).with_name("gunicorn")),
        "config.wsgi:application",
        "--bind",
        f"127.0.0.1:{args.port}",
        "--workers",
        str(args.workers),
        "--worker-class",
        args.worker_class,
        "--threads",
        str(args.threads),
        "--keep-alive",
        "30",
        "--log-level",
        "warning",
    ]
    log = open(SERVER_LOG, "a")  # noqa: SIM115 - handed to the child process
    server = subprocess.Popen(
        command, cwd=ROOT, env=server_env(args.db), start_new_session=True, stdout=log, stderr=subprocess.STDOUT
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=2)
            conn.request("GET", "/api/v1/projects/")
            conn.getresponse().read()
            return server
        except OSError:
            time.sleep(0.3)
    stop_server(server)
    raise RuntimeError("gunicorn did not start")


def stop_server(server: subprocess.Popen) -> None:
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
