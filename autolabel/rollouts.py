"""Monte Carlo step estimates from an OpenAI-compatible completions server (no Django here).

Math-Shepherd (Wang et al., 2024): complete the solution from each step prefix N times; the share
of completions whose final answer is right is the step's soft estimate, and the step is `+` when
any completion is right. OmegaPRM (Luo et al., 2024) finds the first step whose estimate is zero
by binary search over prefixes instead of rolling out from every step: a prefix that still
reaches the answer vouches for every step in it, and (under the same assumption) one that cannot
condemns every later step.
"""

from __future__ import annotations

import http.client
import json
import random
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

from autolabel.endpoint_policy import EndpointRefused, connect_checked
from prm800k.labels import boxed_answer

_ANSWER_HEADING = re.compile(r"#\s*Answer\s*\n+\s*(.+?)\s*(?:\n|$)")
_ANSWER_IS = re.compile(r"[Tt]he (?:final )?answer is:?\s*\$?(.+?)\$?\s*(?:\.\s*)?(?:\n|$)")
# An agent's (ReAct) "Final Answer: X" or a line "Answer: X", bold or not: a trace's rollouts end so.
_ANSWER_LINE = re.compile(
    r"(?m)^[ \t]*(?:\*\*)?(?:[Ff]inal )?[Aa]nswer(?:\*\*)?:(?:\*\*)?[ \t]*\$?(.+?)\$?[ \t]*\.?[ \t]*$"
)


# An agent trace's steps by type, as a ReAct transcript: a model continues a prefix that says which
# text was the tool's output and which the agent's own, and ends with a "Final Answer:" line that
# extract_answer reads. Without them the observations read as the agent's words.
TRACE_PREFIXES = {
    "thought": "Thought: ",
    "tool_call": "Action: ",
    "observation": "Observation: ",
    "answer": "Final Answer: ",
}


def build_prompt(problem: str, steps: list[str], types: list[str] | None = None) -> str:
    """The prefix a completion continues: the problem, then the steps so far, one per line (a
    trace's each after its type, `types`: Thought, Action, Observation, Final Answer)."""
    lines = [step.rstrip() for step in steps]
    if types:
        lines = [TRACE_PREFIXES.get(kind, "") + line for kind, line in zip(types, lines, strict=True)]
    return problem.rstrip() + "\n\n" + "\n".join(lines) + "\n"


def extract_answer(text: str) -> str | None:
    """The final answer of a completion: PRM800K's '# Answer', 'The answer is: X', a line
    'Final Answer: X' or 'Answer: X' (agents), or a \\boxed{}."""
    for pattern in (_ANSWER_HEADING, _ANSWER_IS, _ANSWER_LINE):
        found = pattern.findall(text)
        if found:
            return found[-1].strip() or None
    return boxed_answer(text)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None  # urllib then raises the 3xx as an HTTPError: a redirect could point inside the network


class _CheckedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = connect_checked  # the address checked is the address connected


class _CheckedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = connect_checked  # TLS still verifies the name, not the address


class _CheckedHTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req):
        return self.do_open(_CheckedHTTPConnection, req)


class _CheckedHTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req):
        return self.do_open(_CheckedHTTPSConnection, req, context=self._context)


# No proxy from the environment: a proxy would resolve the server's name itself, past the check.
_OPENER = urllib.request.build_opener(
    _NoRedirects, _CheckedHTTPHandler, _CheckedHTTPSHandler, urllib.request.ProxyHandler({})
)


def _server_message(body: bytes) -> str:
    """The error message of an OpenAI-compatible error body ({"error": {"message": ...}} or
    {"message": ...}), cut short; never the raw body: a job's error is shown to the project."""
    try:
        payload = json.loads(body)
    except ValueError:
        return ""
    if not isinstance(payload, dict):
        return ""
    error = payload.get("error")
    message = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else None
    message = message if isinstance(message, str) else payload.get("message")
    return f": {message[:200]}" if isinstance(message, str) and message else ""


class EndpointError(Exception):
    """The completions server failed in a way retries cannot fix (or retries ran out)."""


@dataclass(slots=True)
class CompletionClient:
    """POST {base_url}/completions with retries and exponential backoff (stdlib urllib)."""

    base_url: str
    model: str
    max_tokens: int = 1024
    temperature: float = 0.7
    timeout_s: float = 600.0
    max_retries: int = 4
    backoff_s: float = 1.0
    on_retry: Callable[[str], None] | None = None

    def complete(self, prompt: str, n: int) -> list[str]:
        """n completion texts of `prompt`; asks again for the rest when a server returns fewer (llama.cpp)."""
        texts: list[str] = []
        while len(texts) < n:
            got = self._request(prompt, n - len(texts))
            if not got:
                raise EndpointError(f"{self.base_url}/completions returned no choices")
            texts.extend(got)
        return texts[:n]

    def _request(self, prompt: str, n: int) -> list[str]:
        body = json.dumps(
            {
                "model": self.model,
                "prompt": prompt,
                "n": n,
                "max_tokens": self.max_tokens,
                "temperature": self.temperature,
            }
        ).encode()
        url = self.base_url.rstrip("/") + "/completions"
        for attempt in range(self.max_retries + 1):
            request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
            try:
                with _OPENER.open(request, timeout=self.timeout_s) as response:
                    payload = json.loads(response.read())
                return _completion_texts(payload)
            except urllib.error.HTTPError as exc:
                reason = f"{url}: HTTP {exc.code}{_server_message(exc.read(4096))}"
                if exc.code < 500 and exc.code != 429:
                    raise EndpointError(reason) from None  # a bad model name or request: retrying won't help
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
                reason = f"{url}: {getattr(exc, 'reason', exc)}"
            except EndpointRefused as exc:  # the name now resolves inside the network: no retry
                raise EndpointError(f"base_url {exc}") from None
            except MalformedAnswer as exc:
                raise EndpointError(f"{url}: not a completions answer ({exc})") from None
            except ValueError as exc:
                reason = f"{url}: not a completions answer ({exc})"
            if attempt == self.max_retries:
                raise EndpointError(f"{reason} (after {self.max_retries + 1} tries)")
            if self.on_retry:
                self.on_retry(reason)
            time.sleep(self.backoff_s * 2**attempt * (0.5 + random.random()))
        raise AssertionError("unreachable")


class MalformedAnswer(ValueError):
    """Valid JSON in another shape than a completions answer: asking again gets the same."""


def _completion_texts(payload: object) -> list[str]:
    """The texts of an OpenAI completions answer, {"choices": [{"text": ...}, ...]}; ValueError
    naming what is off otherwise (a list or a choice without text failed the job with a bare
    AttributeError that named neither the server nor the answer)."""
    choices = payload.get("choices") if isinstance(payload, dict) else None
    if not isinstance(choices, list):
        raise MalformedAnswer(f"expected an object with a list of choices, got {_shape(payload)}")
    texts = []
    for number, choice in enumerate(choices):
        if not isinstance(choice, dict):
            raise MalformedAnswer(f"choices[{number}] is {_shape(choice)}, not an object")
        text = choice.get("text")
        if text is not None and not isinstance(text, str):
            raise MalformedAnswer(f"choices[{number}].text is {_shape(text)}, not text")
        texts.append(text or "")
    return texts


def _shape(value: object) -> str:
    shown = json.dumps(value)[:60]
    return f"{type(value).__name__} {shown}"


# ---------------------------------------------------------------------------------------------
# Which prefixes to roll out from
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class StepResult:
    index: int
    label: int  # +1 / -1
    estimate: float | None  # None: inferred, not measured
    n_completions: int = 0
    n_correct: int = 0
    inferred: bool = False


def search(
    *, n_steps: int, measured: dict[int, float], answer_correct: bool | None, mode: str
) -> tuple[int | None, int | None]:
    """(next step index to roll out from or None when done, first step labeled `-` or None).

    `measured` maps step index -> estimate of the prefixes rolled out so far (the last step's is
    1 or 0 without rollouts when the final answer was graded). Deterministic in `measured`, so a
    restarted job resumes the same search from what it stored.
    """
    if mode == "full":
        missing = [index for index in range(n_steps) if index not in measured]
        if missing:
            return missing[0], None
        return None, next((i for i in range(n_steps) if measured[i] == 0), None)
    if answer_correct is True:
        return None, None  # the solution itself reaches the answer from every prefix: all `+`
    lo = 0
    # A wrong graded answer is the last prefix's zero. The start depends on the grading alone (not on
    # what was measured), so re-deriving the search from stored estimates retraces the same path.
    hi = n_steps - 1 if answer_correct is False else n_steps
    # Invariant: the steps before lo are vouched for; step hi (when < n_steps) has estimate 0.
    while lo < hi:
        mid = (lo + hi) // 2
        if mid not in measured:
            return mid, None
        if measured[mid] > 0:
            lo = mid + 1
        else:
            hi = mid
    return None, (lo if lo < n_steps else None)


def labels_from(*, n_steps: int, measured: dict[int, StepResult], first_zero: int | None) -> list[StepResult]:
    """Every step's result: measured ones as they are, the rest inferred from the first zero."""
    results: list[StepResult] = []
    for index in range(n_steps):
        if index in measured:
            results.append(measured[index])
        else:
            bad = first_zero is not None and index >= first_zero
            results.append(StepResult(index=index, label=-1 if bad else 1, estimate=None, inferred=True))
    return results
