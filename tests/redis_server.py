"""A private `redis-server` for tests that stop and restart Redis: never the one other tests share.

The server listens on a free port on 127.0.0.1, keeps nothing on disk, and is stopped at the end
of the block even when the test fails.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PrivateRedis:
    def __init__(self, workdir: Path) -> None:
        if shutil.which("redis-server") is None:
            raise RuntimeError("redis-server is not installed (Debian package redis-server)")
        self.port = free_port()
        self.workdir = workdir
        self.process: subprocess.Popen | None = None
        self.shared_url = ""  # the Redis the rest of the suite uses, for tests that check it stayed up

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def start(self) -> None:
        """Start (or restart, on the same port) and wait until it answers."""
        assert self.process is None or self.process.poll() is not None, "already running"
        self.process = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no",
             "--dir", str(self.workdir), "--logfile", str(self.workdir / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while not self.ping():
            if self.process.poll() is not None or time.monotonic() > deadline:
                log = (self.workdir / "redis.log").read_text() if (self.workdir / "redis.log").exists() else ""
                raise RuntimeError(f"private redis-server on port {self.port} did not start:\n{log[-2000:]}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)


@contextmanager
def private_redis(workdir: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(workdir)
    server.start()
    try:
        yield server
    finally:
        server.stop()
