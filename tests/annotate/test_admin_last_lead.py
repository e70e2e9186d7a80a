"""The admin keeps a project's last lead, as the members page does: a lead (staff, scoped to their
projects) cannot delete their own lead membership, demote it, or drop it from the project's
inline, until another lead exists."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotate.admin.people import NEEDS_A_LEAD
from annotate.models import Membership, Project, Role
from annotate.services.members import add_member

pytestmark = pytest.mark.django_db


@pytest.fixture
def lead_client(client):
    project = Project.objects.create(slug="algebra", name="Algebra")
    lead = get_user_model().objects.create_user("lena", password="pw-steplabel-test")
    add_member(project=project, user=lead, role=Role.LEAD)  # staff, in the Leads group
    client.force_login(lead)
    client.membership = Membership.objects.get(project=project, user=lead)
    return client


def _url(view: str, *args) -> str:
    return reverse(f"admin:annotate_membership_{view}", args=args)


def test_the_last_lead_membership_cannot_be_deleted_or_demoted_in_the_admin(lead_client):
    mine = lead_client.membership
    change = lead_client.get(_url("change", mine.pk))
    assert change.status_code == 200 and _url("delete", mine.pk) not in change.content.decode()
    assert lead_client.post(_url("delete", mine.pk), {"post": "yes"}).status_code == 403
    demoted = lead_client.post(
        _url("change", mine.pk), {"user": mine.user_id, "project": mine.project_id, "role": "annotator"}
    )
    assert demoted.status_code == 200 and NEEDS_A_LEAD in demoted.content.decode()
    mine.refresh_from_db()
    assert mine.role == Role.LEAD

    inline = lead_client.post(
        reverse("admin:annotate_project_change", args=[mine.project_id]),
        {
            "slug": "algebra", "name": "Algebra", "task_kind": "steps", "labeling_mode": "phase2",
            "selection_strategy": "answer_stratified", "overlap": 1, "qc_rate": 0, "retrain_every": 500,
            "control_share": 0.1, "current_generation": 0,
            "memberships-TOTAL_FORMS": 1, "memberships-INITIAL_FORMS": 1,
            "memberships-0-id": mine.pk, "memberships-0-project": mine.project_id,
            "memberships-0-user": mine.user_id, "memberships-0-role": "lead", "memberships-0-DELETE": "on",
        },
    )  # fmt: skip
    assert inline.status_code == 200 and NEEDS_A_LEAD in inline.content.decode()
    assert Membership.objects.filter(pk=mine.pk).exists()

    other = get_user_model().objects.create_user("otto")
    Membership.objects.create(project=mine.project, user=other, role=Role.LEAD)
    assert lead_client.post(_url("delete", mine.pk), {"post": "yes"}).status_code == 302
    assert not Membership.objects.filter(pk=mine.pk).exists()
