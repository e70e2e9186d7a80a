"""A small OpenAI-compatible completions server for tests: the stand-in for vLLM or llama.cpp.

Deterministic: a completion of a prompt that contains a planted wrong step ends in a wrong answer,
one that contains a "shaky" step is right for the first half of its choices, any other is right.
The right answer is found by the problem text (`answers`), so one server serves a whole project.
It runs in a thread of the test process; workers reach it over HTTP like any real server.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Behaviour:
    answers: dict[str, str]  # problem text (prefix of the prompt) -> right answer
    wrong_markers: tuple[str, ...] = ("WRONG",)
    shaky_markers: tuple[str, ...] = ("SHAKY",)
    delay_s: float = 0.0
    fail_first: int = 0  # answer the first requests with 503 (retries with backoff get past them)
    max_n: int | None = None  # llama.cpp-like: at most this many choices per request
    model: str = "stand-in"
    canned: tuple[int, dict[str, str], bytes] | None = None  # (status, headers, body) for every request
    requests: list[dict] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def complete(self, prompt: str, n: int) -> list[str]:
        truth = next((answer for problem, answer in self.answers.items() if prompt.startswith(problem)), None)
        wrong = any(marker in prompt for marker in self.wrong_markers)
        shaky = any(marker in prompt for marker in self.shaky_markers)
        texts = []
        for i in range(n):
            right = truth is not None and not wrong and (not shaky or i < n // 2)
            answer = truth if right else "-12345"
            texts.append(f"We continue from here and finish.\n# Answer\n\n{answer}")
        return texts


class _Handler(BaseHTTPRequestHandler):
    behaviour: Behaviour

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        b = self.behaviour
        if self.path.rstrip("/") != "/v1/completions":
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with b.lock:
            b.requests.append(payload)
            number = len(b.requests)
        if b.canned is not None:
            status, headers, data = b.canned
            self.send_response(status)
            for name, value in {**headers, "Content-Length": str(len(data))}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            return None
        if number <= b.fail_first:
            return self._send(503, {"error": {"message": "warming up"}})
        if payload.get("model") != b.model:
            return self._send(404, {"error": {"message": f"The model `{payload.get('model')}` does not exist."}})
        if b.delay_s:
            time.sleep(b.delay_s)
        n = int(payload.get("n", 1))
        if b.max_n is not None:
            n = min(n, b.max_n)
        texts = b.complete(payload["prompt"], n)
        self._send(
            200,
            {
                "id": f"cmpl-{number}",
                "object": "text_completion",
                "model": b.model,
                "choices": [{"index": i, "text": t, "finish_reason": "stop"} for i, t in enumerate(texts)],
            },
        )


@contextmanager
def stand_in_server(behaviour: Behaviour) -> Iterator[str]:
    """Serve on 127.0.0.1 (a free port) for the block; yields the base URL (…/v1)."""
    handler = type("Handler", (_Handler,), {"behaviour": behaviour})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="stand-in-completions", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
