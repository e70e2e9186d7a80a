"""The benchmark's own database: created, migrated and dropped; the environment the server and
this process run Django in; the annotators and their tokens; a checkpoint after the bulk load."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PG = "postgres://postgres@127.0.0.1:5432"


def server_env(db: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=f"{PG}/{db}",
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DEBUG="0",  # DEBUG would record every query in memory
        DB_CONN_MAX_AGE="600",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        LOG_LEVEL="WARNING",
        CELERY_BROKER_URL=os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/4"),
        PYTHONPATH=str(ROOT),
    )
    return env


def recreate_database(db: str) -> None:
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{db}"')
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=server_env(db), check=True)


def drop_database(db: str) -> None:
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')


def setup_django(db: str) -> None:
    for key, value in server_env(db).items():
        os.environ[key] = value
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def make_users(n: int) -> list[tuple[int, str]]:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    User = get_user_model()
    users = User.objects.bulk_create([User(username=f"bench{i}") for i in range(n)])
    return [(u.pk, Token.objects.create(user=u).key) for u in users]


def settle_database() -> None:
    """Bring the bulk load to a steady state before any measurement: VACUUM ANALYZE (else autovacuum
    of the just-inserted millions of rows runs during a measured window, as it would not on a queue
    that grew over weeks), then CHECKPOINT so the write-back does not land in a measured run."""
    import psycopg

    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")
        conn.execute("CHECKPOINT")
