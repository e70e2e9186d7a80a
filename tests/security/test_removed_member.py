"""A member the lead removed can no longer write labels, through any assignment endpoint.

Everything goes through HTTP: the annotator with a real DRF token, the lead through the admin's
delete page with a session, the export through the API. Was: submit/skip on an old assignment
answered 201/200 after the removal and handed out the next task, and the label reached the export.
"""

import json

import pytest
from django.test import Client
from django.utils import timezone

from annotate.models import Assignment, AssignmentStatus, Membership, Role
from annotate.services.members import add_member
from tests.api_clients import member_client
from tests.factories import make_project, make_solutions, make_user, payload

pytestmark = pytest.mark.django_db


def _exported_problems(lead_client, slug: str) -> list[str]:
    response = lead_client.get(f"/api/v1/projects/{slug}/export/?format=prm800k")
    assert response.status_code == 200
    lines = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines() if line.strip()]
    return sorted(line["question"]["problem"] for line in lines if "problem" in line.get("question", {}))


@pytest.mark.parametrize("path", ["admin", "members page"])
def test_removed_annotator_cannot_submit_skip_or_claim_and_the_export_is_unchanged(path):
    project = make_project("removal", overlap=1, lease_minutes=30)
    make_solutions(project, 3)
    annotator = member_client(project, "leaving", Role.ANNOTATOR)
    lead_user = make_user("boss")
    add_member(project=project, user=lead_user, role=Role.LEAD)
    lead_api = member_client(project, "boss-api", Role.LEAD)

    # Work before the removal: submit A (next: B), skip B (next: C), C stays open.
    first = annotator.get(f"/api/v1/projects/{project.slug}/tasks/next/").json()
    submitted = annotator.post(f"/api/v1/assignments/{first['id']}/submit/", payload([1, 1, 1], key="a"), format="json")
    assert submitted.status_code == 201
    second = submitted.json()["next"]
    skipped = annotator.post(f"/api/v1/assignments/{second['id']}/skip/")
    assert skipped.status_code == 200
    open_task = skipped.json()["next"]
    before = _exported_problems(lead_api, project.slug)
    assert len(before) == 1

    # The lead removes the annotator, in the admin or on the project's members page.
    lead = Client()
    lead.force_login(lead_user)
    membership = Membership.objects.get(project=project, user=annotator.user)
    if path == "admin":
        removed = lead.post(f"/admin/annotate/membership/{membership.pk}/delete/", {"post": "yes"})
    else:
        removed = lead.post(
            f"/projects/{project.slug}/members/", {"action": "remove", "user": annotator.user.pk, "confirm": "yes"}
        )
    assert removed.status_code in (200, 302) and not Membership.objects.filter(pk=membership.pk).exists()

    # Their open lease was released at once: the solution is claimable by someone else.
    held = Assignment.objects.get(pk=open_task["id"])
    assert held.status == AssignmentStatus.EXPIRED and held.lease_expires_at <= timezone.now()
    colleague = member_client(project, "colleague", Role.ANNOTATOR)
    served = []
    task = colleague.get(f"/api/v1/projects/{project.slug}/tasks/next/").json()
    while task is not None:  # skip through the queue (the skipped B comes first, free for others)
        served.append(Assignment.objects.get(pk=task["id"]).solution_id)
        task = colleague.post(f"/api/v1/assignments/{task['id']}/skip/").json()["next"]
    assert held.solution_id in served

    # Every endpoint on every old assignment (open, skipped, submitted) and the claim: 404.
    n_assignments = Assignment.objects.filter(annotator=annotator.user).count()
    calls = [
        ("post", f"/api/v1/assignments/{open_task['id']}/submit/", payload([1, 1, 1], key="c")),
        ("post", f"/api/v1/assignments/{first['id']}/submit/", payload([1, 1, 1], key="a")),
        ("post", f"/api/v1/assignments/{second['id']}/submit/", payload([1, 1, 1], key="b")),
        ("post", f"/api/v1/assignments/{open_task['id']}/skip/", None),
        ("post", f"/api/v1/assignments/{second['id']}/skip/", None),
        ("post", f"/api/v1/assignments/{first['id']}/skip/", None),
        ("post", f"/api/v1/assignments/{open_task['id']}/heartbeat/", None),
        ("put", f"/api/v1/assignments/{open_task['id']}/draft/", {"x": 1}),
    ]
    for method, url, body in calls:
        response = getattr(annotator, method)(url, body, format="json")
        assert response.status_code == 404, (url, response.status_code, response.content[:300])
        assert b"problem" not in response.content
    assert annotator.get(f"/api/v1/projects/{project.slug}/tasks/next/").status_code == 404
    assert Assignment.objects.filter(annotator=annotator.user).count() == n_assignments  # nothing handed out
    assert Assignment.objects.get(pk=open_task["id"]).draft is None

    assert _exported_problems(lead_api, project.slug) == before


def test_a_member_changed_to_ml_engineer_loses_labeling_at_once():
    """Role change (not removal): the assignment endpoints answer 403 and the lease is released."""
    project = make_project("rolechange", overlap=1)
    make_solutions(project, 2)
    annotator = member_client(project, "switcher", Role.ANNOTATOR)
    task = annotator.get(f"/api/v1/projects/{project.slug}/tasks/next/").json()
    membership = Membership.objects.get(project=project, user=annotator.user)
    membership.role = Role.ML_ENGINEER
    membership.save()

    assert Assignment.objects.get(pk=task["id"]).status == AssignmentStatus.EXPIRED
    response = annotator.post(f"/api/v1/assignments/{task['id']}/submit/", payload([1, 1, 1]), format="json")
    assert response.status_code == 403 and "annotators and leads" in response.json()["detail"]
    assert not Assignment.objects.filter(pk=task["id"], status=AssignmentStatus.SUBMITTED).exists()
