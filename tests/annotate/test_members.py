"""Roles and users: the add_member service and command, labeler pseudonyms, DRF tokens."""

import uuid
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import LabelerProfile, Membership, Project, Role
from annotate.services import team
from annotate.services.members import LEADS_GROUP, add_member, labeler_uuid_for

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


# --- the admin rights of the lead role go with the user's last lead role -------------------------


def _lead_page(client, project, lead, **post):
    client.force_login(lead)
    return client.post(f"/projects/{project.slug}/members/", post, follow=True)


def _admin_rights(user) -> tuple[bool, bool]:
    user.refresh_from_db()
    return user.is_staff, user.groups.filter(name=LEADS_GROUP).exists()


@pytest.fixture
def leads(project):
    """The project's lead and a second person the lead adds as lead (and annotator) on the members page."""
    lead = get_user_model().objects.create_user("lead-a")
    other = get_user_model().objects.create_user("lead-b")
    add_member(project=project, user=lead, role="lead")
    return lead, other


@pytest.mark.parametrize("removal", ["remove_role", "remove"])
def test_taking_the_last_lead_role_withdraws_staff_and_the_leads_group(project, client, leads, removal):
    lead, other = leads
    _lead_page(client, project, lead, action="add", username="lead-b", roles=["lead", "annotator"])
    assert _admin_rights(other) == (True, True)
    client.force_login(other)
    assert ">Admin</a>" in client.get("/").content.decode()

    post = {"action": removal, "user": other.pk} | (
        {"role": "lead"} if removal == "remove_role" else {"confirm": "yes"}
    )
    _lead_page(client, project, lead, **post)

    assert _admin_rights(other) == (False, False)
    assert not Membership.objects.filter(user=other, role=Role.LEAD).exists()
    client.force_login(other)
    assert ">Admin</a>" not in client.get("/").content.decode()
    assert client.get("/admin/annotate/solution/").status_code == 302  # to the admin login
    assert _admin_rights(lead) == (True, True)  # the acting lead keeps theirs


def test_a_lead_of_another_project_keeps_staff_and_the_leads_group(project, client, leads):
    lead, other = leads
    elsewhere = Project.objects.create(slug="elsewhere", name="Elsewhere")
    add_member(project=elsewhere, user=other, role="lead")
    _lead_page(client, project, lead, action="add", username="lead-b", roles=["lead"])
    _lead_page(client, project, lead, action="remove", user=other.pk, confirm="yes")
    assert not Membership.objects.filter(project=project, user=other).exists()
    assert _admin_rights(other) == (True, True)
    client.force_login(other)
    assert client.get("/admin/annotate/solution/").status_code == 200


def test_a_lead_role_changed_or_deleted_in_the_admin_withdraws_them_too(project, leads):
    lead, other = leads
    add_member(project=project, user=other, role="lead")
    membership = Membership.objects.get(project=project, user=other, role=Role.LEAD)
    membership.role = Role.ANNOTATOR
    membership.save()
    assert _admin_rights(other) == (False, False)
    add_member(project=project, user=other, role="lead")
    Membership.objects.filter(project=project, user=other, role=Role.LEAD).delete()  # queryset: signals per row
    assert _admin_rights(other) == (False, False)


def test_superusers_and_staff_for_another_reason_keep_staff(project, leads):
    lead, _ = leads
    root = get_user_model().objects.create_superuser("root", password="pw-root-123")
    support = get_user_model().objects.create_user("support")
    support.user_permissions.add(Permission.objects.get(codename="view_user"))
    for person in (root, support):
        add_member(project=project, user=person, role="lead")
        team.remove_member(project=project, actor=lead, user_id=person.pk, role="lead")
    assert _admin_rights(root) == (True, True)  # a superuser keeps everything
    assert _admin_rights(support) == (True, False)  # permissions of their own: still staff, not a lead
    assert get_user_model().objects.get(pk=root.pk).is_superuser


def test_deleting_a_lead_user_cascades_without_error(project, leads):
    lead, other = leads
    add_member(project=project, user=other, role="lead")
    other.delete()
    assert not get_user_model().objects.filter(username="lead-b").exists()
