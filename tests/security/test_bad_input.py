"""Bad input on every write endpoint: no 5xx across thousands of generated requests.

Hypothesis drives submit, draft, heartbeat, skip, export jobs, imports, training runs and PRM
scoring with malformed JSON, wrong types, huge strings, unknown fields, out-of-range indexes and
unicode oddities (NUL, unpaired surrogates, bidi overrides, BOM, astral characters). Every answer
must be below 500, and a 400 must say what was wrong (a JSON object of messages, by field where
the body was an object). The whole file runs in well under three minutes.
"""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.celery_worker import purge_broker
from tests.security.world import World, build_world

pytestmark = pytest.mark.django_db

ODD_TEXT = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "a\x00b",
        "\ud800",
        "x\udfffy",
        "\u202eevil",
        "\ufeffbom",
        "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
        "é" * 3,
        "$\\frac{1}{0}$",
        "<script>alert(1)</script>",
        "' OR 1=1 --",
        "a" * 25_000,
        "\n" * 100,
    ]
)
TEXT = st.one_of(st.text(max_size=40), ODD_TEXT)
NUMBER = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0, -1, 1, 2, 10**12, 2**63, -(2**63) - 1]),
)
SCALAR = st.one_of(st.none(), st.booleans(), NUMBER, TEXT)
JSON = st.recursive(
    SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=12,
)


def _maybe(strategy):
    """A field's value: usually from `strategy`, sometimes any JSON at all."""
    return st.one_of(strategy, strategy, strategy, JSON)


def _object(required: dict, optional: dict | None = None):
    """A JSON object with known keys (each sometimes missing or of the wrong type) and unknown ones."""
    fields = {key: _maybe(value) for key, value in required.items()}
    optional_fields = {key: _maybe(value) for key, value in (optional or {}).items()}
    base = st.fixed_dictionaries({}, optional={**fields, **optional_fields})
    extra = st.dictionaries(TEXT, JSON, max_size=2)
    return st.builds(lambda known, unknown: {**unknown, **known}, base, extra)


COMPLETION = _object({"text": TEXT, "rating": st.sampled_from([-1, 0, 1, None, 2, "1", 1.5, True]), "flagged": JSON})
STEP = _object(
    {
        "index": st.one_of(st.integers(min_value=-3, max_value=6), st.sampled_from([2**40, "0", 0.0, None])),
        "rating": st.sampled_from([-1, 0, 1, None, 2, -2, "1", 1.0, True, []]),
        "flagged": st.sampled_from([True, False, None, "yes", 0]),
    },
    {
        "alternatives": st.lists(COMPLETION, max_size=3),
        "human_completion": st.one_of(TEXT, st.none(), _object({"text": TEXT})),
    },
)
SUBMIT = _object(
    {
        "idempotency_key": st.one_of(TEXT, st.integers()),
        "finish_reason": st.sampled_from(["solution", "found_error", "give_up", "bad_problem", "", "SOLUTION", None]),
        "total_time_ms": NUMBER,
        "steps": st.lists(STEP, max_size=5),
    },
    {"reason": TEXT},
)
EXPORT = _object(
    {},
    {
        "format": st.sampled_from(["prm800k", "trl", "csv", "", None]),
        "generation": st.one_of(TEXT, st.lists(NUMBER, max_size=3)),
        "since": TEXT,
        "labeler": TEXT,
        "qc": st.sampled_from(["include", "exclude", "only", "all"]),
        "screening": st.sampled_from(["include", "exclude", "only", 1]),
        "finish_reason": st.one_of(TEXT, st.sampled_from(["solution,give_up", "nope"])),
        "split": st.sampled_from(["train", "test", "dev"]),
        "min_agreement": NUMBER,
        "neutral": st.sampled_from(["positive", "negative", "drop", "maybe"]),
        "alternatives": st.sampled_from(["branch", "drop", "keep"]),
        "include_history": st.sampled_from([True, False, "true", "maybe", 1, None]),
        "gzip": st.sampled_from([True, False, "yes", 2]),
    },
)
TRAINING = _object({}, {"config": st.one_of(st.dictionaries(TEXT, JSON, max_size=4), JSON)})
SCORE = _object(
    {
        "project": st.one_of(st.just("{slug}"), TEXT),
        "problem": TEXT,
        "solutions": st.lists(st.lists(TEXT, max_size=4), max_size=3),
    }
)
RAW_BODY = st.one_of(
    st.binary(max_size=200),
    st.sampled_from([b"{", b"[1,", b'{"a": NaN}', b'{"a": Infinity}', b"\xff\xfe", b'"\\ud800"', b"null", b"1e999"]),
)
SETTINGS = settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture
def world() -> World:
    built = build_world()
    clients = {kind: built.api_client(kind) for kind in ("annotator", "lead", "ml_engineer")}
    built.api_client = clients.__getitem__  # one client per kind for all examples
    yield built
    purge_broker()  # export jobs and training runs the valid examples queued


def _fill(value, slug: str):
    if value == "{slug}":
        return slug
    if isinstance(value, dict):
        return {k: _fill(v, slug) for k, v in value.items()}
    return value


def _check(response, body) -> None:
    assert response.status_code < 500, (response.status_code, body)
    if response.status_code == 400:
        data = response.json()
        assert isinstance(data, dict) and data, data  # messages keyed by field (or an import job's errors)


def _send(client, method: str, url: str, body, *, raw: bool = False):
    if raw:
        return getattr(client, method)(url, body, content_type="application/json")
    try:
        encoded = json.dumps(body)
    except (TypeError, ValueError):
        return None
    return getattr(client, method)(url, encoded, content_type="application/json")


def _url_safe(text: str) -> str:
    """What a URL or form can carry: UTF-8 text (a lone surrogate cannot be percent-encoded); NUL stays."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _assignment_url(world: World, action: str) -> str:
    return f"/api/v1/assignments/{world.rows['annotate.assignment'].pk}/{action}/?next=false"


@settings(SETTINGS, max_examples=1500)
@given(body=st.one_of(SUBMIT, SUBMIT, SUBMIT, JSON))
def test_submit(world, body):
    response = _send(world.api_client("annotator"), "post", _assignment_url(world, "submit"), body)
    if response is not None:
        _check(response, body)


@settings(SETTINGS, max_examples=500)
@given(body=JSON)
def test_draft(world, body):
    response = _send(world.api_client("annotator"), "put", _assignment_url(world, "draft"), body)
    if response is not None:
        _check(response, body)


@settings(SETTINGS, max_examples=400)
@given(action=st.sampled_from(["submit", "draft", "heartbeat", "skip"]), body=RAW_BODY)
def test_assignment_endpoints_with_raw_bodies(world, action, body):
    method = "put" if action == "draft" else "post"
    _check(_send(world.api_client("annotator"), method, _assignment_url(world, action), body, raw=True), body)


@settings(SETTINGS, max_examples=300)
@given(action=st.sampled_from(["heartbeat", "skip"]), body=JSON, next_param=TEXT)
def test_heartbeat_and_skip(world, action, body, next_param):
    url = f"/api/v1/assignments/{world.rows['annotate.assignment'].pk}/{action}/"
    response = _send(world.api_client("annotator"), "post", f"{url}?next={quote(_url_safe(next_param), safe='')}", body)
    if response is not None:
        _check(response, body)


@settings(SETTINGS, max_examples=800)
@given(body=st.one_of(EXPORT, EXPORT, JSON))
def test_export_jobs(world, body):
    response = _send(world.api_client("lead"), "post", f"/api/v1/projects/{world.project.slug}/exports/", body)
    if response is not None:
        _check(response, body)


@settings(SETTINGS, max_examples=400)
@given(
    params=st.dictionaries(
        st.sampled_from(
            list(
                EXPORT_KEYS := [
                    "format",
                    "generation",
                    "since",
                    "labeler",
                    "qc",
                    "screening",
                    "finish_reason",
                    "split",
                    "min_agreement",
                    "neutral",
                    "alternatives",
                    "include_history",
                ]
            )
        ),
        TEXT,
        max_size=4,
    )
)
def test_streamed_export_query(world, params):
    params = {k: _url_safe(v) for k, v in params.items()}
    response = world.api_client("lead").get(f"/api/v1/projects/{world.project.slug}/export/", params)
    _check(response, params)
    if response.status_code == 200:
        b"".join(response.streaming_content)


@settings(SETTINGS, max_examples=300)
@given(
    lines=st.lists(st.one_of(JSON.map(json.dumps), TEXT), max_size=4),
    raw=st.binary(max_size=100),
    use_raw=st.booleans(),
    extra=st.dictionaries(st.sampled_from(["format", "project", "x"]), TEXT, max_size=2),
)
def test_imports(world, lines, raw, use_raw, extra):
    from django.core.files.uploadedfile import SimpleUploadedFile

    try:
        content = raw if use_raw else "\n".join(lines).encode("utf-8", "surrogatepass")
    except UnicodeEncodeError:
        content = raw
    upload = SimpleUploadedFile("data.jsonl", content, content_type="application/jsonl")
    url = f"/api/v1/projects/{world.project.slug}/imports/"
    data = {**{k: _url_safe(v) for k, v in extra.items()}, "file": upload}
    _check(world.api_client("lead").post(url, data, format="multipart"), lines)


@settings(SETTINGS, max_examples=500)
@given(body=st.one_of(TRAINING, TRAINING, JSON))
def test_training_runs(world, body):
    url = f"/api/v1/projects/{world.project.slug}/training-runs/"
    response = _send(world.api_client("lead"), "post", url, body)
    if response is not None:
        _check(response, body)


@settings(SETTINGS, max_examples=800)
@given(body=st.one_of(SCORE, SCORE, JSON))
def test_prm_score(world, body):
    response = _send(world.api_client("ml_engineer"), "post", "/api/v1/prm/score/", _fill(body, world.project.slug))
    if response is not None:
        _check(response, body)


def test_unstorable_text_is_refused_with_the_field_named(world):
    annotator = world.api_client("annotator")
    body = {
        "idempotency_key": "k",
        "finish_reason": "found_error",
        "total_time_ms": 5,
        "steps": [{"index": 0, "rating": -1, "alternatives": [{"text": "a\x00b", "rating": 1}]}],
    }
    response = annotator.post(_assignment_url(world, "submit"), json.dumps(body), content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"steps[0].alternatives[0].text": ["Must not contain NUL (\\u0000) characters."]}
    response = annotator.put(
        _assignment_url(world, "draft"), '{"notes": ["ok", "\\ud800"]}', content_type="application/json"
    )
    assert response.status_code == 400 and list(response.json()) == ["notes[1]"]
    response = world.api_client("lead").get(f"/api/v1/projects/{world.project.slug}/export/?labeler=%00")
    assert response.status_code == 400 and list(response.json()) == ["labeler"]
    response = world.api_client("lead").post(
        f"/api/v1/projects/{world.project.slug}/training-runs/",
        '{"config": {"lr": 1e999}}',
        content_type="application/json",
    )
    assert response.status_code == 400 and list(response.json()) == ["config.lr"]
