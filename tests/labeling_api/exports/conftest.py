"""Fixtures of the export and import API tests: the edge-case PRM800K file imported as project
`exp`, and a client per role (plus an outsider and an anonymous one)."""

import io

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from annotate.models import Project, Role
from tests.api_clients import member_client
from tests.labeling_api.exports.helpers import FIXTURES


@pytest.fixture
def project(db) -> Project:
    call_command(
        "import_prm800k", str(FIXTURES / "edge_cases.jsonl"), project="exp", no_progress=True, stdout=io.StringIO()
    )
    return Project.objects.get(slug="exp")


@pytest.fixture
def clients(project):
    other = Project.objects.create(slug="other")
    return {
        "lead": member_client(project, "lead", Role.LEAD),
        "ml": member_client(project, "ml", Role.ML_ENGINEER),
        "annotator": member_client(project, "annotator", Role.ANNOTATOR),
        "outsider": member_client(other, "outsider", Role.LEAD),
        "none": APIClient(),
    }
