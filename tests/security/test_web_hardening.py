"""Web hardening: login lockout (django-axes), the CSP header, self-hosted API docs, per-token rate
limits on expensive endpoints, and `check --deploy` with the production settings."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.test import Client, override_settings
from django.urls import reverse

from tests.security.world import build_world

ROOT = Path(__file__).resolve().parents[2]

# a fixed key that passes the production settings' randomness bar (5+ different characters)
RANDOM_KEY = "s" * 40 + "-x7Yq2#pL9&vR4!zM8"


def _rates(**rates: str) -> dict:
    from django.conf import settings

    return {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], **rates},
    }


def _own_cache() -> dict:
    """The Redis cache under a key prefix of this test's own: counters of other tests (or other
    xdist workers, whose users have the same ids) do not mix in. No FLUSHDB: the broker shares the db."""
    from django.conf import settings

    return {"default": {**settings.CACHES["default"], "KEY_PREFIX": f"t-{uuid.uuid4().hex}"}}


# ---------------------------------------------------------------------------------------------
# Login throttling
# ---------------------------------------------------------------------------------------------


@pytest.mark.django_db
@override_settings(AXES_FAILURE_LIMIT=5)
def test_login_locks_after_five_failures_per_username_and_ip():
    world = build_world()
    user = world.users["annotator"]
    client = Client(REMOTE_ADDR="10.0.0.7")
    url = reverse("login")
    for _ in range(4):
        response = client.post(url, {"username": user.username, "password": "wrong"})
        assert response.status_code == 200 and b"Please enter a correct username and password" in response.content
    locked = client.post(url, {"username": user.username, "password": "wrong"})
    assert locked.status_code == 429
    assert b"Too many failed logins" in locked.content
    # Locked even with the right password, from that address...
    again = client.post(url, {"username": user.username, "password": "pw-steplabel-test"})
    assert again.status_code == 429
    # ...but the same user from another address, and another user from this one, still log in.
    other_ip = Client(REMOTE_ADDR="10.0.0.8").post(url, {"username": user.username, "password": "pw-steplabel-test"})
    assert other_ip.status_code == 302
    lead = world.users["lead"]
    assert client.post(url, {"username": lead.username, "password": "pw-steplabel-test"}).status_code == 302


@pytest.mark.django_db
def test_behind_a_trusted_proxy_the_lockout_keys_on_the_client_not_the_proxy(settings):
    """Behind a proxy every login came from the proxy's address: five wrong passwords from anyone
    locked the username out for everyone. With TRUSTED_PROXIES=1 the key is the address the proxy
    saw; what the client writes into X-Forwarded-For itself is not read."""
    settings.AXES_FAILURE_LIMIT = 3
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}  # TRUSTED_PROXIES=1
    world = build_world()
    user = world.users["annotator"]
    url = reverse("login")

    def via_proxy(client_address: str, forged: str = "") -> Client:
        chain = f"{forged}, {client_address}" if forged else client_address
        return Client(REMOTE_ADDR="172.18.0.2", HTTP_X_FORWARDED_FOR=chain)

    # an attacker who changes the forged part each time is still one address
    for n in range(3):
        response = via_proxy("203.0.113.9", forged=f"10.9.9.{n}").post(
            url, {"username": user.username, "password": "x"}
        )
    assert response.status_code == 429
    assert (
        via_proxy("203.0.113.9").post(url, {"username": user.username, "password": "pw-steplabel-test"}).status_code
        == 429
    )
    # the user, behind the same proxy from their own address, still signs in
    own = via_proxy("198.51.100.4").post(url, {"username": user.username, "password": "pw-steplabel-test"})
    assert own.status_code == 302


@pytest.mark.django_db
def test_without_trusted_proxies_a_forwarded_header_is_not_read(settings):
    settings.AXES_FAILURE_LIMIT = 3
    world = build_world()
    user = world.users["annotator"]
    url = reverse("login")
    for n in range(3):
        client = Client(REMOTE_ADDR="10.0.0.20", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}")
        response = client.post(url, {"username": user.username, "password": "x"})
    assert response.status_code == 429  # a new forged address per try does not escape the lockout


@pytest.mark.django_db
@override_settings(AXES_FAILURE_LIMIT=5)
def test_successful_login_resets_the_failure_count():
    world = build_world()
    user = world.users["annotator"]
    url = reverse("login")
    client = Client(REMOTE_ADDR="10.0.0.9")
    for _ in range(4):
        client.post(url, {"username": user.username, "password": "wrong"})
    assert client.post(url, {"username": user.username, "password": "pw-steplabel-test"}).status_code == 302
    client = Client(REMOTE_ADDR="10.0.0.9")
    for _ in range(4):
        assert client.post(url, {"username": user.username, "password": "wrong"}).status_code == 200
    assert client.post(url, {"username": user.username, "password": "pw-steplabel-test"}).status_code == 302


@pytest.mark.django_db
@override_settings(AXES_FAILURE_LIMIT=5)
def test_admin_login_is_throttled_too():
    world = build_world()
    client = Client(REMOTE_ADDR="10.0.0.10")
    for _ in range(5):
        response = client.post(reverse("admin:login"), {"username": world.users["lead"].username, "password": "x"})
    assert response.status_code == 429


# ---------------------------------------------------------------------------------------------
# Headers
# ---------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_pages_carry_a_strict_content_security_policy():
    world = build_world()
    for client, url in (
        (Client(), reverse("login")),
        (world.session_client("annotator"), reverse("workspace", args=[world.project.slug])),
        (world.session_client("lead"), reverse("dashboard", args=[world.project.slug])),
        (Client(), reverse("api-docs")),
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        policy = dict(
            part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";") if part.strip()
        )
        assert policy["default-src"] == "'self'"
        assert policy["script-src"] == "'self'"
        assert policy["style-src"] == "'self' 'unsafe-inline'"
        assert policy["img-src"] == "'self' data:"
        assert policy["object-src"] == "'none'"
        assert policy["frame-ancestors"] == "'none'"
        assert policy["base-uri"] == "'self'"


@pytest.mark.django_db
def test_api_docs_are_self_hosted_without_inline_script():
    response = Client().get(reverse("api-docs"))
    html = response.content.decode()
    assert "cdn.jsdelivr.net" not in html and "unpkg.com" not in html
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in html
    # Every <script> has a src: the init script comes from ?script.
    assert html.count("<script") == html.count("<script src=")
    script = Client().get(reverse("api-docs") + "?script=")
    assert script.status_code == 200 and b"SwaggerUIBundle" in script.content


# ---------------------------------------------------------------------------------------------
# Rate limits per token
# ---------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_expensive_endpoints_answer_429_past_their_rate():
    world = build_world()
    slug = world.project.slug
    calls = {
        "export": [
            ("get", f"/api/v1/projects/{slug}/export/", None),
            ("post", f"/api/v1/projects/{slug}/exports/", {"format": "nope"}),
        ],
        "retrain": [("post", f"/api/v1/projects/{slug}/training-runs/", {"config": "bad"})],
        "score": [("post", "/api/v1/prm/score/", {"project": slug, "problem": "x", "solutions": [["y"]]})],
    }
    with override_settings(
        CACHES=_own_cache(), REST_FRAMEWORK=_rates(export="3/minute", retrain="3/minute", score="3/minute")
    ):
        for scope, requests in calls.items():
            lead, ml = world.api_client("lead"), world.api_client("ml_engineer")
            for i in range(3):
                method, url, body = requests[i % len(requests)]
                response = getattr(lead, method)(url, body, format="json")
                assert response.status_code != 429, (scope, i)
                # The scope's other endpoints share the budget; the limit is per token, not global.
                assert getattr(ml, method)(url, body, format="json").status_code != 429
            method, url, body = requests[0]
            refused = getattr(lead, method)(url, body, format="json")
            assert refused.status_code == 429, scope
            assert "throttled" in refused.json()["detail"].lower() and int(refused["Retry-After"]) > 0
        # Cheap reads stay unlimited: the export job list is GET on a throttled view.
        for _ in range(5):
            assert world.api_client("lead").get(f"/api/v1/projects/{slug}/exports/").status_code == 200
        for _ in range(5):
            assert world.api_client("lead").get(f"/api/v1/projects/{slug}/training-runs/").status_code == 200


# ---------------------------------------------------------------------------------------------
# Production settings
# ---------------------------------------------------------------------------------------------


def _check_deploy(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    env = {
        # The browser tests' conftest sets DJANGO_ALLOW_ASYNC_UNSAFE in this process; no deployment does.
        **{k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"},
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "SECRET_KEY": "k" * 20 + "-deploy-check-" + "x7Yq2#pL9&vR4!zM8@wN5^sT1*bU6%",
        "ALLOWED_HOSTS": "steplabel.example.org",
        "DATABASE_URL": os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/steplabel"),
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
        # Collected as a deployment does (else steplabel.W003), away from the checkout's static_build.
        "STATIC_ROOT": str(tmp_path / "static"),
    }
    collect = [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"]
    subprocess.run(collect, cwd=ROOT, env=env, check=True, capture_output=True, timeout=300)
    result = _check_deploy(env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout

    # Without DATABASE_URL or CELERY_BROKER_URL a deployment fell back to the embedded SQLite file
    # and filesystem queue without a word (the operations walkthrough): the deploy check names both.
    bare = {k: v for k, v in env.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    result = _check_deploy(bare)
    assert result.returncode != 0
    assert "steplabel.W001" in result.stderr and "DATABASE_URL is not set" in result.stderr
    assert "steplabel.W002" in result.stderr and "CELERY_BROKER_URL is not set" in result.stderr


def test_production_refuses_a_key_that_is_not_random():
    for key in ("a" * 60, "django-insecure-" + "x7Yq2#pL9&vR4!zM8@wN5^sT1*bU6%" * 2):
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.production", "SECRET_KEY": key}
        result = subprocess.run(
            [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        assert result.returncode != 0 and "SECRET_KEY is not random" in result.stderr, key


def test_production_refuses_to_start_without_a_secret_key():
    env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    env["DJANGO_SETTINGS_MODULE"] = "config.settings.production"
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr


def test_production_settings_secure_cookies_and_hsts():
    code = (
        "from django.conf import settings as s;"
        "print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS >= 31536000,"
        " s.SECURE_SSL_REDIRECT, s.DEBUG, s.SESSION_COOKIE_HTTPONLY)"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.production", "SECRET_KEY": RANDOM_KEY}
    result = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.stdout.split() == ["True", "True", "True", "True", "False", "True"], result.stderr


def test_compose_deployment_counts_rate_limits_in_redis():
    """Was: the compose stack set no CACHE_URL, so each web container kept its own file cache of
    rate-limit counters (three gunicorn workers, three limits). The deployment's environment, as
    docker-compose.yml gives it, must configure the Redis cache."""
    import yaml

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    app_env = compose["x-app"]["environment"]
    cache_url = app_env["CACHE_URL"].replace("${CACHE_URL:-", "").rstrip("}")
    assert cache_url.startswith("redis://redis:6379/")
    for service in ("web", "worker", "migrate"):
        assert compose["services"][service]["environment"]["CACHE_URL"] == app_env["CACHE_URL"], service
    env = {
        **{k: v for k, v in os.environ.items() if k != "CACHE_URL"},
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "SECRET_KEY": RANDOM_KEY,
        "CACHE_URL": cache_url,
    }
    code = "from django.conf import settings as s; c = s.CACHES['default']; print(c['BACKEND'], c['LOCATION'])"
    result = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.stdout.split() == ["django.core.cache.backends.redis.RedisCache", cache_url], result.stderr
