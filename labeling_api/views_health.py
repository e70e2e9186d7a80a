"""Service health: can the web reach the database and the Celery broker, and what is waiting.

While the broker (Redis) is down the web keeps serving claims and submits; export jobs and
training runs are accepted and wait in `created` until the sweep sends them. This endpoint tells
a lead, an outside monitor or a load balancer that the service is degraded, and a signed-in
caller how much work is waiting in their projects.

Anyone may ask, without a login: `database`, `broker` and `degraded` hold nothing private. The
`waiting` counts are per user (the projects the caller leads or engineers), so an anonymous caller
gets no `waiting` key at all. Each probe opens a broker connection (1 s timeout) and runs a query,
so anonymous callers share one probe per web process for PROBE_REUSE_SECONDS instead of each
running their own: a flood of anonymous calls costs the broker and the database at most one
connection each per process in that time. That is why there is no rate limit here: a throttle's
counters live in Redis too (it lets everything through while Redis is down, when a probe costs the
most), and its 429 would make a load balancer or a monitor report a healthy web as down.
"""

from __future__ import annotations

import threading
import time

from django.db import connection
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate import selectors
from ml import selectors as ml_selectors

# How long anonymous callers share one probe of the database and the broker, per web process.
PROBE_REUSE_SECONDS = 5.0
_probe_lock = threading.Lock()
_last_probe: tuple[float, bool, bool] | None = None  # (monotonic time it ended, database, broker)


def broker_reachable(*, timeout: float = 1.0) -> bool:
    from config.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=timeout)
        return True
    except Exception:  # any transport error means "not reachable now"
        return False


def database_reachable() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except Exception:
        return False


def shared_probe() -> tuple[bool, bool]:
    """(database, broker) as probed at most PROBE_REUSE_SECONDS ago in this process; callers that
    arrive while a probe runs wait for it rather than start their own."""
    global _last_probe
    with _probe_lock:
        if _last_probe is None or time.monotonic() - _last_probe[0] >= PROBE_REUSE_SECONDS:
            database, broker = database_reachable(), broker_reachable()
            _last_probe = (time.monotonic(), database, broker)
        return _last_probe[1], _last_probe[2]


class HealthView(APIView):
    # Open to anonymous callers (see the module docstring); a token or a session, when sent, is
    # still read (a wrong token is a 401), and only then are the caller's waiting jobs counted.
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="health",
        summary="Is the service degraded?",
        description=(
            "No login needed (for load balancers and monitors; the answer is 200 whenever the web answers, "
            "degraded or not). `database` and `broker`: reachable now (for an anonymous caller, as probed at "
            f"most {PROBE_REUSE_SECONDS:g} s ago by this web process). `degraded` is true while either is not. "
            "`waiting`: only for a signed-in caller (token or session), absent for an anonymous one."
        ),
        responses={
            200: inline_serializer(
                "Health",
                {
                    "database": serializers.BooleanField(),
                    "broker": serializers.BooleanField(),
                    "degraded": serializers.BooleanField(),
                    "waiting": serializers.DictField(
                        child=serializers.IntegerField(),
                        required=False,
                        help_text="Signed-in callers only (absent for anonymous ones): `exports` and "
                        "`training_runs` not yet picked up by a worker, in the projects the caller leads or "
                        "engineers (all projects for superusers); they start once the broker is back.",
                    ),
                },
            )
        },
    )
    def get(self, request: Request) -> Response:
        signed_in = request.user.is_authenticated
        database, broker = (database_reachable(), broker_reachable()) if signed_in else shared_probe()
        body: dict = {"database": database, "broker": broker, "degraded": not (database and broker)}
        if signed_in:
            waiting = {"exports": 0, "training_runs": 0}
            if database:
                ids = selectors.job_project_ids(user=request.user)
                waiting["exports"] = selectors.waiting_exports(project_ids=ids)
                waiting["training_runs"] = ml_selectors.waiting_runs(project_ids=ids)
            body["waiting"] = waiting
        response = Response(body)
        response["Cache-Control"] = "no-store"
        return response
