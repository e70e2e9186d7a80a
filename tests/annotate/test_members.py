"""Roles and users: the add_member service and command, labeler pseudonyms, DRF tokens."""

import uuid
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import LabelerProfile, Membership, Project
from annotate.services.members import add_member, labeler_uuid_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def project():
    return Project.objects.create(slug="mem", name="Members")


def run(*args: str) -> str:
    out = StringIO()
    call_command("add_member", *args, stdout=out)
    return out.getvalue()


def test_labeler_uuid_is_stable_and_pseudonymous():
    user = get_user_model().objects.create_user("alice", email="alice@example.com")
    first = labeler_uuid_for(user=user)
    assert str(uuid.UUID(first)) == first
    assert labeler_uuid_for(user=user) == first
    assert "alice" not in first
    other = get_user_model().objects.create_user("bob")
    assert labeler_uuid_for(user=other) != first


def test_add_member_service_is_idempotent(project):
    user = get_user_model().objects.create_user("carol")
    membership, created = add_member(project=project, user=user, role="lead")
    assert created and membership.role == "lead"
    assert LabelerProfile.objects.filter(user=user).exists()
    _, created = add_member(project=project, user=user, role="lead")
    assert not created
    _, created = add_member(project=project, user=user, role="annotator")  # a second role is fine
    assert created
    assert Membership.objects.filter(user=user, project=project).count() == 2
    with pytest.raises(ValueError):
        add_member(project=project, user=user, role="boss")


def test_a_lead_can_use_the_admin_and_an_annotator_cannot(project, client):
    lead = get_user_model().objects.create_user("lead-x", password="pw-lead-123")
    annotator = get_user_model().objects.create_user("ann-x", password="pw-ann-123")
    add_member(project=project, user=lead, role="lead")
    add_member(project=project, user=annotator, role="annotator")
    add_member(project=project, user=lead, role="lead")  # twice: still fine

    client.force_login(lead)
    assert client.get("/admin/annotate/solution/").status_code == 200
    assert client.get("/admin/ml/trainingrun/").status_code == 200
    assert client.get("/admin/auth/user/").status_code == 403  # users stay with superusers
    client.force_login(annotator)
    assert client.get("/admin/annotate/solution/").status_code == 302  # to the admin login


def test_command_creates_user_membership_and_profile(project):
    out = run(
        "--project",
        "mem",
        "--user",
        "dave",
        "--role",
        "annotator",
        "--create-user",
        "--password",
        "pw-dave-123",
        "--email",
        "dave@example.com",
    )
    assert "Created user 'dave'" in out and "Added dave to mem as annotator" in out
    user = get_user_model().objects.get(username="dave")
    assert user.check_password("pw-dave-123") and user.email == "dave@example.com"
    assert Membership.objects.filter(project=project, user=user, role="annotator").exists()
    assert LabelerProfile.objects.filter(user=user).exists()

    out = run("--project", "mem", "--user", "dave", "--role", "annotator")
    assert "already annotator in mem" in out
    assert Membership.objects.filter(user=user).count() == 1


def test_command_without_password_leaves_it_unusable(project):
    run("--project", "mem", "--user", "erin", "--role", "ml_engineer", "--create-user")
    assert not get_user_model().objects.get(username="erin").has_usable_password()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--project", "nope", "--user", "x", "--role", "lead", "--create-user"], "No project with slug 'nope'"),
        (["--project", "mem", "--user", "ghost", "--role", "lead"], "pass --create-user"),
        (["--project", "mem", "--user", "x", "--role", "boss", "--create-user"], "Unknown role 'boss'"),
    ],
)
def test_command_errors(project, args, message):
    with pytest.raises(CommandError, match=message):
        run(*args)
    assert not Membership.objects.exists()
    assert not get_user_model().objects.filter(username__in=["x", "ghost"]).exists()


def test_drf_token_for_a_member_opens_the_api(project):
    run("--project", "mem", "--user", "frank", "--role", "ml_engineer", "--create-user")
    out = StringIO()
    call_command("drf_create_token", "frank", stdout=out)
    key = Token.objects.get(user__username="frank").key
    assert key in out.getvalue()

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    response = client.get("/api/v1/projects/")
    assert response.status_code == 200
    assert response.json() == [
        {**response.json()[0], "slug": "mem", "roles": ["ml_engineer"]},
    ]
    client.credentials(HTTP_AUTHORIZATION="Token wrong")
    # 401 with a challenge: token authentication comes first in REST_FRAMEWORK settings.
    response = client.get("/api/v1/projects/")
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"
