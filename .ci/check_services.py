"""Wait until the PostgreSQL and Redis that the tests use answer; exit 1 with a clear message if not.

Reads DATABASE_URL and CELERY_BROKER_URL with the same defaults as config.settings.test. Run with
the project's venv (psycopg and redis are installed there). WAIT_SECONDS bounds the wait.
"""

import os
import sys
import time
from urllib.parse import urlparse

import psycopg
import redis

DATABASE_URL = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/steplabel")
BROKER_URL = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/15")
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
WAIT_SECONDS = float(os.environ.get("WAIT_SECONDS", "30" if IN_CI else "5"))

START_PG = "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"
START_REDIS = 'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no'


def check_postgres() -> None:
    url = urlparse(DATABASE_URL)
    if not url.scheme.startswith("postgres"):
        raise RuntimeError(f"DATABASE_URL is {url.scheme}://, but the tests need PostgreSQL")
    # The maintenance database: the test database itself is created by pytest-django.
    with psycopg.connect(
        host=url.hostname or "127.0.0.1", port=url.port or 5432, user=url.username or "postgres",
        password=url.password, dbname="postgres", connect_timeout=2,
    ) as conn:  # fmt: skip
        conn.execute("SELECT 1")


def check_redis() -> None:
    if not BROKER_URL.startswith("redis"):
        raise RuntimeError(f"CELERY_BROKER_URL is {BROKER_URL.split(':', 1)[0]}://, but the tests need Redis")
    redis.Redis.from_url(BROKER_URL, socket_connect_timeout=2, socket_timeout=2).ping()


def wait(name: str, where: str, check, how_to_start: str) -> bool:
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            check()
            print(f"{name} answers at {where}")
            return True
        except Exception as exc:  # noqa: BLE001 - any failure means "not reachable yet"
            if time.monotonic() >= deadline:
                if IN_CI:
                    print(f"FATAL (CI=true): {name} at {where} is not reachable after {WAIT_SECONDS:.0f}s: {exc}",
                          file=sys.stderr)  # fmt: skip
                    print("  The test suite needs it and must not skip; .ci/run starts it.", file=sys.stderr)
                else:
                    print(f"ERROR: {name} at {where} is not reachable: {exc}", file=sys.stderr)
                    print(f"  Start it with:  {how_to_start}", file=sys.stderr)
                    print("  (or point the tests at another server with the environment variable shown)",
                          file=sys.stderr)  # fmt: skip
                return False
            time.sleep(0.5)


def main() -> int:
    pg = urlparse(DATABASE_URL)
    ok = wait("PostgreSQL", f"{pg.hostname}:{pg.port or 5432} (DATABASE_URL)", check_postgres, START_PG)
    broker = urlparse(BROKER_URL)
    ok &= wait("Redis", f"{broker.hostname}:{broker.port or 6379} (CELERY_BROKER_URL)", check_redis, START_REDIS)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
