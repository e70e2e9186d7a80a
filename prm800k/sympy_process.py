"""sympy in a child process with a hard time limit (prm800k.sympy_worker runs in the child).

A thread cannot be stopped and SIGALRM only works on the main thread, so a runaway simplification
inside a web request, a Celery task or an import thread used to run for as long as it liked.
A child process can be killed: when it does not answer within the timeout it is, and the next
question starts a fresh one. Pure Python, no Django.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

SYMBOLIC_TIMEOUT_S = 5.0
STARTUP_TIMEOUT_S = 60.0  # importing sympy in a fresh interpreter on a busy machine


class Undecided(Exception):
    """sympy did not answer in time (or ran out of memory): the answer stays ungraded."""


_WORKER = Path(__file__).with_name("sympy_worker.py")


class SympyProcess:
    """One long-lived child running sympy_worker.py; killed and replaced when an answer is late."""

    def __init__(self, *, timeout_s: float = SYMBOLIC_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._owner_pid = 0
        self._buffer = b""
        self.restarts = 0

    def equal(self, a: str, b: str) -> bool:
        with self._lock:
            process = self._running()
            try:
                assert process.stdin is not None
                process.stdin.write(json.dumps([a, b]).encode() + b"\n")
                process.stdin.flush()
                line = self._read_line(process, self.timeout_s)
            except (OSError, Undecided):
                self._kill()
                raise Undecided(f"sympy gave no answer within {self.timeout_s:g} s") from None
            if line == b"null":
                raise Undecided("sympy ran out of memory")
            return line == b"true"

    def close(self) -> None:
        with self._lock:
            self._kill()

    def _running(self) -> subprocess.Popen[bytes]:
        # A forked worker (Celery prefork, gunicorn) must not share its parent's pipes: start its own.
        if self._process is not None:
            if self._owner_pid != os.getpid():
                self._process = None  # inherited across a fork: the parent's child, not ours
            elif self._process.poll() is not None:
                self._kill()
        if self._process is None:
            self._buffer = b""
            self._process = subprocess.Popen(
                [sys.executable, "-I", str(_WORKER)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,
            )
            self._owner_pid = os.getpid()
            self.restarts += 1
            try:
                if self._read_line(self._process, STARTUP_TIMEOUT_S) != b"ready":
                    raise Undecided("the sympy process did not start")
            except (OSError, Undecided):
                self._kill()
                raise Undecided("the sympy process did not start") from None
        return self._process

    def _read_line(self, process: subprocess.Popen[bytes], timeout_s: float) -> bytes:
        assert process.stdout is not None
        fd = process.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise Undecided("timed out")
            chunk = os.read(fd, 4096)
            if not chunk:
                raise Undecided("the sympy process exited")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.strip()

    def _kill(self) -> None:
        process, self._process = self._process, None
        if process is not None and self._owner_pid == os.getpid():
            process.kill()
            process.wait()
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()
