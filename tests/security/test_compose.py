"""docker-compose.yml read against the settings it configures (Docker itself does not run here)."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's ${NAME}, ${NAME:-default} and ${NAME:?error} with the given .env."""

    def one(match: re.Match) -> str:
        name, op, arg = match.group(1), match.group(2), match.group(3)
        if env.get(name):
            return env[name]
        assert op != ":?", f"{name} is required: {arg}"
        return arg or ""

    return re.sub(r"\$\{(\w+)(?:(:-|:\?)([^}]*))?\}", one, value)


def _production_setting(env: dict[str, str], code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_web_healthcheck_is_answered_when_allowed_hosts_names_the_real_host():
    """Was: ALLOWED_HOSTS set to the site's name (as .env.example asks) and the healthcheck's
    request to 127.0.0.1 got 400 (DisallowedHost), so `web` never became healthy."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    dotenv = {"SECRET_KEY": secrets.token_urlsafe(50), "ALLOWED_HOSTS": "steplabel.example.com"}
    app_env = {k: _interpolate(str(v), dotenv) for k, v in compose["x-app"]["environment"].items()}
    test = compose["services"]["web"]["healthcheck"]["test"]
    headers = [test[i + 1] for i, arg in enumerate(test) if arg == "-H"]
    host = next((h.split(":", 1)[1].strip() for h in headers if h.lower().startswith("host:")), None)
    if host is None:  # curl sends the URL's host
        host = re.match(r"https?://([^/]+)", test[-1]).group(1)
    env = {**app_env, "DATABASE_URL": "sqlite:///:memory:", "CELERY_BROKER_URL": "memory://", "CACHE_URL": ""}
    env["STEPLABEL_VAR_DIR"] = str(ROOT / "var")
    code = (
        "import json; from django.conf import settings as s; "
        "from django.http.request import validate_host as v, split_domain_port as d; "
        f"print(json.dumps([s.ALLOWED_HOSTS, v(d({host!r})[0], s.ALLOWED_HOSTS)]))"
    )
    allowed, ok = json.loads(_production_setting(env, code))
    assert "steplabel.example.com" in allowed
    assert ok, (host, allowed)
    # Left unset, the site still answers on this machine's names.
    unset = {
        k: _interpolate(str(v), {"SECRET_KEY": dotenv["SECRET_KEY"]})
        for k, v in compose["x-app"]["environment"].items()
    }
    allowed, ok = json.loads(_production_setting({**env, "ALLOWED_HOSTS": unset["ALLOWED_HOSTS"]}, code))
    assert ok and "127.0.0.1" in allowed


def _dockerignored(path: str) -> bool:
    """Whether .dockerignore keeps `path` out of the build context (Docker's rules: patterns match
    from the context root, `**` spans folders, a later `!pattern` takes a path back in)."""
    import fnmatch

    ignored = False
    for line in (ROOT / ".dockerignore").read_text().splitlines():
        pattern = line.strip()
        if not pattern or pattern.startswith("#"):
            continue
        negate = pattern.startswith("!")
        pattern = pattern.lstrip("!").strip("/")
        parts = path.split("/")
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]  # a matched folder takes its files
        candidates = [pattern, pattern.replace("**/", "")] if pattern.startswith("**/") else [pattern]
        if any(fnmatch.fnmatchcase(p, c) for p in prefixes for c in candidates):
            ignored = not negate
    return ignored


def test_the_dot_env_file_with_the_secrets_stays_out_of_the_image_and_of_git():
    """Was: README says `cp .env.example .env` and put SECRET_KEY and POSTGRES_PASSWORD in it, but
    .dockerignore did not name `.env`, so the Dockerfile's `COPY . .` baked both secrets into the
    image as /app/.env (every pushed or shared image carried them), and git did not ignore it."""
    assert _dockerignored(".env")
    assert _dockerignored(".venv/bin/python") and not _dockerignored("config/settings/base.py")
    assert not _dockerignored(".env.example")  # the template holds no secret
    result = subprocess.run(["git", "check-ignore", "-q", ".env"], cwd=ROOT)
    assert result.returncode == 0, ".env is not ignored by git"


APP_SERVICES = ("migrate", "web", "worker", "ml-worker", "autolabel-worker", "beat")


def _container_env(service: dict, dotenv: dict[str, str]) -> dict[str, str]:
    """What compose puts in a container's environment: its env_file(s), then `environment` over them."""
    env: dict[str, str] = {}
    files = service.get("env_file") or []
    for entry in [files] if isinstance(files, (str, dict)) else files:
        path = entry["path"] if isinstance(entry, dict) else entry
        if Path(path).name == ".env":
            env.update(dotenv)
    env.update({k: _interpolate(str(v), dotenv) for k, v in (service.get("environment") or {}).items()})
    return env


def test_every_setting_put_in_dot_env_reaches_the_app_containers():
    """Was: compose read .env only to fill in its own ${...} (SECRET_KEY, ALLOWED_HOSTS, ...): a
    setting of README's configuration table put there (THROTTLE_EXPORT, IMPORT_MAX_BYTES,
    ML_TRAINING_CONFIG, WEB_CONCURRENCY, ...) never reached web or the workers, and changed nothing
    without a word."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    dotenv = {
        "SECRET_KEY": secrets.token_urlsafe(50),
        "THROTTLE_EXPORT": "7/hour",
        "IMPORT_MAX_BYTES": "1234567",
        "ML_STALE_RUN_SECONDS": "77",
        "ML_TRAINING_CONFIG": '{"epochs": 3}',
        "WEB_CONCURRENCY": "5",
        "AUTOLABEL_ALLOWED_HOSTS": "vllm",
        # compose's own wiring wins over a stray value: the containers' database is the postgres service
        "DATABASE_URL": "sqlite:///elsewhere.sqlite3",
    }
    for name in APP_SERVICES:
        env = _container_env(compose["services"][name], dotenv)
        for key in ("THROTTLE_EXPORT", "IMPORT_MAX_BYTES", "ML_STALE_RUN_SECONDS", "ML_TRAINING_CONFIG"):
            assert env.get(key) == dotenv[key], (name, key)
        assert env["DATABASE_URL"].startswith("postgres://steplabel:"), name
        assert env["DJANGO_SETTINGS_MODULE"] == "config.settings.production", name
    env = _container_env(compose["services"]["web"], dotenv)
    env.update({"DATABASE_URL": "sqlite:///:memory:", "CELERY_BROKER_URL": "memory://", "CACHE_URL": ""})
    env["STEPLABEL_VAR_DIR"] = str(ROOT / "var")
    code = (
        "import json; from django.conf import settings as s; "
        "print(json.dumps([s.REST_FRAMEWORK['DEFAULT_THROTTLE_RATES']['export'], s.IMPORT_MAX_BYTES, "
        "s.ML_STALE_RUN_SECONDS, s.ML_TRAINING_CONFIG, s.AUTOLABEL_ALLOWED_HOSTS]))"
    )
    assert json.loads(_production_setting(env, code)) == ["7/hour", 1234567, 77, {"epochs": 3}, ["vllm"]]


def _published(compose: dict, dotenv: dict[str, str]) -> list[tuple[str, str, str]]:
    """(host address, host port, container port) of each port web publishes."""
    out = []
    for entry in compose["services"]["web"].get("ports", []):
        parts = _interpolate(str(entry), dotenv).split(":")
        out.append(tuple(parts) if len(parts) == 3 else ("0.0.0.0", *parts))
    return out


def test_web_is_published_on_loopback_only_unless_the_operator_says_otherwise():
    """Was: `ports: "8000:8000"` published gunicorn on every interface while TRUSTED_PROXIES=1
    trusted the last X-Forwarded-For entry: anyone who reached port 8000 directly, past the HTTPS
    proxy, wrote that entry themselves and picked a fresh login-lockout key for every guess."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    example = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            key, value = line.split("=", 1)
            example[key.strip()] = value.strip()
    for dotenv in ({"SECRET_KEY": "x"}, {**example, "SECRET_KEY": "x"}):
        assert int(_interpolate(str(compose["x-app"]["environment"]["TRUSTED_PROXIES"]), dotenv)) >= 1
        assert _published(compose, dotenv) == [("127.0.0.1", dotenv.get("WEB_PORT", "8000"), "8000")], dotenv
    # A proxy on another machine: the operator opens it on purpose (and firewalls it).
    opened = _published(compose, {"SECRET_KEY": "x", "WEB_BIND": "0.0.0.0", "WEB_PORT": "9000"})
    assert opened == [("0.0.0.0", "9000", "8000")]


def test_the_image_hands_all_of_its_data_folder_to_the_app_user():
    """collectstatic loads settings, which create STEPLABEL_VAR_DIR's folders (/data/celery/...) as
    root; a plain chown of /data left them root-owned under the app user."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "STEPLABEL_VAR_DIR=/data" in dockerfile
    collect = dockerfile.index("collectstatic")
    handover = dockerfile.index("chown -R steplabel /data")
    assert collect < handover < dockerfile.index("USER steplabel")
