"""Schemathesis against /api/v1/schema/: generated requests to every operation, in process.

Every answer must be below 500 and match the response schema the API documents. Half of the
cases are pointed at a real project and real ids so they reach past the 404s into validation.
"""

import io
import random
from pathlib import Path

import pytest
import schemathesis
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from annotate.models import Membership, Project, Role

FIXTURES = Path(__file__).resolve().parents[1] / "annotate" / "fixtures"


def _load_schema():
    from config.wsgi import application

    return schemathesis.openapi.from_wsgi("/api/v1/schema/", application)


schema = _load_schema()


@pytest.fixture(autouse=True)
def _keep_test_connection():
    """Like Django's test client: keep the test's connection (and transaction) across requests."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def token(db) -> str:
    call_command(
        "import_prm800k", str(FIXTURES / "plain.jsonl"), project="fuzz", no_progress=True, stdout=io.StringIO()
    )
    project = Project.objects.get(slug="fuzz")
    user = get_user_model().objects.create_user("fuzzer")
    for role in (Role.ANNOTATOR, Role.LEAD, Role.ML_ENGINEER):
        Membership.objects.create(project=project, user=user, role=role)
    return Token.objects.create(user=user).key


@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_never_errors_and_matches_its_schema(case, token):
    if case.path_parameters and random.random() < 0.5:
        if "slug" in case.path_parameters:
            case.path_parameters["slug"] = "fuzz"
        if "id" in case.path_parameters:
            case.path_parameters["id"] = random.randint(1, 3)
    case.call_and_validate(
        headers={"Authorization": f"Token {token}"},
        checks=[not_a_server_error, response_schema_conformance],
    )
