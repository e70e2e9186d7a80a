"""gunicorn settings for the web process: `gunicorn -c config/gunicorn.py` (Dockerfile, compose, make run).

Threaded workers (gthread), because streamed exports last as long as the client reads: a sync
worker cannot report to the arbiter while it writes a response, so gunicorn's `timeout` (30 s by
default) killed it mid-stream and the client got a cut body. A gthread worker's main loop reports
every second whatever its threads do, so `timeout` only restarts a worker whose loop is stuck,
and a slow or large export streams to its end. Each setting can be set from the environment.
"""

import os
import re

from gunicorn.glogging import Logger

wsgi_app = "config.wsgi"
bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
worker_class = "gthread"
# Processes x threads = requests served at once; a streaming export holds one thread meanwhile.
workers = int(os.environ.get("WEB_CONCURRENCY", "3"))
threads = int(os.environ.get("GUNICORN_THREADS", "8"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "120"))
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "30"))
keepalive = 5
accesslog = "-"


# Paths that carry a secret: an invite link is a one-use password while it lives (7 days), and the
# access log kept it, in the request line and in the Referer of the invite page's own asset requests
# (the same pattern as config/log_filters.py, which Django's request log uses; importing the config
# package here would load the Celery app into the gunicorn master).
SECRET_IN_PATH = re.compile(r"(/invite/)[^/?#\s\"]+")


def _redact(text: str) -> str:
    return SECRET_IN_PATH.sub(r"\1<redacted>", text)


class RedactingLogger(Logger):
    """Access lines with the secret part of such paths replaced by `<redacted>`."""

    def atoms(self, resp, req, environ, request_time):
        atoms = super().atoms(resp, req, environ, request_time)
        return {key: _redact(value) if isinstance(value, str) else value for key, value in atoms.items()}


logger_class = RedactingLogger

# gunicorn 25+ opens a control socket at ~/.gunicorn/gunicorn.ctl by default: every instance of
# one user shared that path (two demos side by side, the tests' servers). Off unless a path is set.
control_socket_disable = not os.environ.get("GUNICORN_CONTROL_SOCKET")
if not control_socket_disable:
    control_socket = os.environ["GUNICORN_CONTROL_SOCKET"]
