"""`make run`: migrate, load the demo, then run the web server and a real Celery worker together.

With no environment set this is the embedded default (SQLite in var/, Celery's filesystem broker
in var/celery). Ctrl-C (or SIGTERM) stops both processes; if either dies, the other is stopped too.
"""

import ctypes
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import OperationalError, connection
from kombu.utils.url import maybe_sanitize_url

from annotate.management.commands.load_demo import DEMO_PASSWORD, DEMO_USERS


def _die_with_parent() -> None:
    """Runs in the child before exec: Linux sends it SIGTERM if this command is killed outright."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _check_port_free(host: str, port: int) -> None:
    """Fail before migrating and before the banner when another process listens on host:port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gunicorn binds: TIME_WAIT is no conflict
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise CommandError(
                f"Cannot serve on {host}:{port}: {exc.strerror}. Another process is using the port; stop it, "
                f"or pick another port: `PORT={port + 1} make run` (or `manage.py run_dev --port {port + 1}`)."
            ) from None


def _check_database() -> None:
    """Fail with what to do, not a driver traceback, when the database cannot be opened (a
    PostgreSQL DATABASE_URL naming a database nobody created yet, or a server that is down)."""
    try:
        connection.ensure_connection()
    except OperationalError as exc:
        db = settings.DATABASES["default"]
        where = f"{db['NAME']} on {db.get('HOST') or 'localhost'}:{db.get('PORT') or 5432}"
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        hint = ""
        if db["ENGINE"].endswith("postgresql"):
            hint = (
                f" Create it once with `createdb -h {db.get('HOST') or 'localhost'} -U {db.get('USER') or 'postgres'} "
                f"{db['NAME']}`, or unset DATABASE_URL for the embedded SQLite."
            )
        raise CommandError(f"Cannot open the database {where}: {reason}.{hint}") from None


class Command(BaseCommand):
    help = "Run Steplabel for development: migrate, load the demo, start gunicorn and a Celery worker."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument("--no-demo", action="store_true", help="Skip loading the demo data.")

    def handle(self, *args, host: str, port: int, no_demo: bool, **options) -> None:
        _check_port_free(host, port)
        _check_database()
        call_command("migrate", interactive=False, verbosity=0)
        self.stdout.write("Database migrated.")
        if not no_demo:
            call_command("load_demo", stdout=self.stdout, stderr=self.stderr)
        call_command("collectstatic", interactive=False, verbosity=0)

        bin_dir = Path(sys.executable).parent
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings.local"),
        }
        commands = {
            # config/gunicorn.py (threaded workers, exports stream to slow clients), sized for SQLite:
            # one writer at a time whatever the concurrency, so 2 processes x 4 threads are plenty.
            "web": [str(bin_dir / "gunicorn"), "-c", "config/gunicorn.py", "--bind", f"{host}:{port}",
                    "--workers", "2", "--threads", "4"],
            # -B: beat inside the worker, so the job sweep (CELERY_BEAT_SCHEDULE) runs here too and a
            # job whose worker was killed is sent again; a deployment runs beat on its own (compose).
            "worker": [str(bin_dir / "celery"), "-A", "config", "worker", "-Q", "default,ml,autolabel",
                       "--concurrency", "1", "--loglevel", "INFO",
                       "-B", "--schedule", str(settings.VAR_DIR / "celerybeat-schedule")],
        }  # fmt: skip
        processes: dict[str, subprocess.Popen] = {}
        stopping = False

        def stop(signum: int, frame: object) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        try:
            for name, argv in commands.items():
                # Own process group: Ctrl-C reaches only us, and we stop the children in order.
                processes[name] = subprocess.Popen(
                    argv, cwd=settings.BASE_DIR, env=env, start_new_session=True, preexec_fn=_die_with_parent
                )
            self._banner(host, port, processes)
            while not stopping:
                for name, process in processes.items():
                    if process.poll() is not None:
                        raise CommandError(f"The {name} process exited with code {process.returncode}.")
                time.sleep(0.5)
        finally:
            self.stdout.write("\nStopping web server and worker...")
            for process in processes.values():
                if process.poll() is None:
                    process.terminate()
            deadline = time.monotonic() + 15
            for process in processes.values():
                try:
                    process.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            self.stdout.write("Stopped.")

    def _banner(self, host: str, port: int, processes: dict[str, subprocess.Popen]) -> None:
        database = settings.DATABASES["default"]
        users = ", ".join(f"{name} ({role.value})" for name, role in DEMO_USERS)
        # The SQLite database lives in the var dir: without it the printed command makes the token in another one.
        var_dir = os.environ.get("STEPLABEL_VAR_DIR")
        var = f"STEPLABEL_VAR_DIR={shlex.quote(var_dir)} " if var_dir else ""
        lines = [
            "",
            "=" * 72,
            f"Steplabel is running at http://{host}:{port}/",
            f"  admin:    http://{host}:{port}/admin/   API: http://{host}:{port}/api/v1/docs/",
            f"  logins:   admin (superuser), {users}",
            f"  password: {DEMO_PASSWORD} for all of them",
            f"  API token: http://{host}:{port}/account/token/ (as mlengineer), or",
            f"             {var}DJANGO_SETTINGS_MODULE=config.settings.local"
            " .venv/bin/python manage.py drf_create_token mlengineer",
            f"  database: {database['ENGINE'].rsplit('.', 1)[-1]} {database['NAME']}",
            f"  broker:   {maybe_sanitize_url(settings.CELERY_BROKER_URL)}",  # its password masked, as Celery logs it
            f"  web pid {processes['web'].pid}, worker pid {processes['worker'].pid}; Ctrl-C stops both.",
            "=" * 72,
            "",
        ]
        self.stdout.write("\n".join(lines))
