"""gunicorn settings for the web process: `gunicorn -c config/gunicorn.py` (Dockerfile, compose, make run).

Threaded workers (gthread), because streamed exports last as long as the client reads: a sync
worker cannot report to the arbiter while it writes a response, so gunicorn's `timeout` (30 s by
default) killed it mid-stream and the client got a cut body. A gthread worker's main loop reports
every second whatever its threads do, so `timeout` only restarts a worker whose loop is stuck,
and a slow or large export streams to its end. Each setting can be set from the environment.
"""

import os

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
# gunicorn 25+ opens a control socket at ~/.gunicorn/gunicorn.ctl by default: every instance of
# one user shared that path (two demos side by side, the tests' servers). Off unless a path is set.
control_socket_disable = not os.environ.get("GUNICORN_CONTROL_SOCKET")
if not control_socket_disable:
    control_socket = os.environ["GUNICORN_CONTROL_SOCKET"]
