"""Service health: can the web reach the database and the Celery broker, and what is waiting.

While the broker (Redis) is down the web keeps serving claims and submits; export jobs and
training runs are accepted and wait in `created` until the sweep sends them. This endpoint tells
a lead (or a monitor) that the service is degraded and how much work is waiting in the caller's
projects.
"""

from __future__ import annotations

from django.db import connection
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate import selectors
from ml import selectors as ml_selectors


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


class HealthView(APIView):
    @extend_schema(
        operation_id="health",
        summary="Is the service degraded?",
        description=(
            "`database` and `broker`: reachable now. `degraded` is true while either is not. `waiting`: export "
            "jobs and training runs not yet picked up by a worker, in the projects the caller leads or "
            "engineers (all projects for superusers); they start once the broker is back."
        ),
        responses={
            200: inline_serializer(
                "Health",
                {
                    "database": serializers.BooleanField(),
                    "broker": serializers.BooleanField(),
                    "degraded": serializers.BooleanField(),
                    "waiting": serializers.DictField(child=serializers.IntegerField()),
                },
            )
        },
    )
    def get(self, request: Request) -> Response:
        database, broker = database_reachable(), broker_reachable()
        waiting = {"exports": 0, "training_runs": 0}
        if database:
            ids = selectors.job_project_ids(user=request.user)
            waiting["exports"] = selectors.waiting_exports(project_ids=ids)
            waiting["training_runs"] = ml_selectors.waiting_runs(project_ids=ids)
        response = Response(
            {"database": database, "broker": broker, "degraded": not (database and broker), "waiting": waiting}
        )
        response["Cache-Control"] = "no-store"
        return response
