"""A lead's admin edits to gold, QC and screening marks, open or closed, and a problem's answer leave
an audit row: who, when, the old and the new value (annotate.admin.audited). Left alone in earlier
notes: a lead could mark or unmark gold in the admin, moving every gold score, with no trace.
Real admin forms over HTTP (PostgreSQL); the rows are read as a superuser reads them, in the admin."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import Annotation, Assignment, AuditEvent, Comparison, Project, Role, Solution
from tests.api_clients import member_client
from tests.factories import make_solutions
from tests.security.test_admin_identity import _lead_of, duel, form_data  # noqa: F401  (duel: a fixture)

pytestmark = pytest.mark.django_db


def test_marking_a_solution_gold_and_changing_its_problems_answer_are_recorded():
    algebra = Project.objects.create(slug="algebra")
    solution = make_solutions(algebra, 1)[0]
    lead = _lead_of(algebra)
    url = f"/admin/annotate/solution/{solution.pk}/change/"
    data = form_data(lead.get(url))
    assert lead.post(url, data).status_code == 302  # saved unchanged: no row
    assert not AuditEvent.objects.exists()

    assert lead.post(url, {**data, "is_gold": "on", "is_quality_control": "on"}).status_code == 302
    event = AuditEvent.objects.get()
    assert event.action == "solution.changed" and event.project == algebra
    assert event.actor.username == "two-project-lead"
    assert event.details == {
        "id": solution.pk,
        "changes": {"is_gold": [False, True], "is_quality_control": [False, True]},
    }

    problem_url = f"/admin/annotate/problem/{solution.problem_id}/change/"
    before = solution.problem.ground_truth_answer
    data = form_data(lead.get(problem_url))
    assert lead.post(problem_url, {**data, "ground_truth_answer": "17"}).status_code == 302
    latest = AuditEvent.objects.order_by("-id").first()
    assert latest.action == "problem.changed"
    assert latest.details["changes"] == {"ground_truth_answer": [before, "17"]}

    # a superuser reads them in the admin's audit log; no lead or annotator sees the log
    root = Client()
    root.force_login(get_user_model().objects.create_superuser("boss", "boss@example.org", "pw"))
    page = root.get("/admin/annotate/auditevent/").content.decode()
    assert "solution.changed" in page and "problem.changed" in page
    assert lead.get("/admin/annotate/auditevent/").status_code == 403
    annotator = member_client(algebra, "alg-ann", Role.ANNOTATOR)
    assert annotator.get("/admin/annotate/auditevent/").status_code == 302  # not staff: to the login page


def test_unmarking_a_gold_pair_is_recorded(duel):  # noqa: F811
    lead = _lead_of(duel)
    pair = Comparison.objects.filter(project=duel).order_by("id").first()
    url = f"/admin/annotate/comparison/{pair.pk}/change/"
    data = form_data(lead.get(url))
    assert lead.post(url, {**data, "is_gold": "on", "gold_preference": "B"}).status_code == 302
    data = form_data(lead.get(url))
    data.pop("is_gold")
    assert lead.post(url, {**data, "gold_preference": ""}).status_code == 302
    marked, unmarked = AuditEvent.objects.filter(action="comparison.changed").order_by("id")
    assert marked.details["changes"] == {"is_gold": [False, True], "gold_preference": ["", "B"]}
    assert unmarked.details["changes"] == {"is_gold": [True, False], "gold_preference": ["B", ""]}
    assert marked.project == duel and unmarked.details["id"] == pair.pk


# --- deletions -------------------------------------------------------------------------------


def _labeled(project: Project, n: int = 2) -> list:
    """`n` solutions, each labeled once through the API (overlap 1: each is closed after it)."""
    from tests.factories import payload

    solutions = make_solutions(project, n)
    annotator = member_client(project, f"{project.slug}-ann", Role.ANNOTATOR)
    for i in range(n):
        task = annotator.get(f"/api/v1/projects/{project.slug}/tasks/next/").json()
        submit = f"/api/v1/assignments/{task['assignment_id']}/submit/"
        assert annotator.post(submit, payload([1, -1, None], key=f"k{i}"), format="json").status_code == 201
    return solutions


def _superuser() -> Client:
    root = Client()
    root.force_login(get_user_model().objects.create_superuser("boss", "boss@example.org", "pw"))
    return root


def test_a_lead_cannot_delete_labels_nor_rows_that_carry_them_but_deletes_an_unlabeled_one():
    algebra = Project.objects.create(slug="algebra", overlap=1)
    labeled = _labeled(algebra)[0]
    spare = make_solutions(algebra, 1)[0]
    lead = _lead_of(algebra)
    annotation = Annotation.objects.get(solution=labeled)
    assert lead.get(f"/admin/annotate/annotation/{annotation.pk}/delete/").status_code == 403
    # the solution's delete page names what it would take and that the lead may not take it
    page = lead.get(f"/admin/annotate/solution/{labeled.pk}/delete/")
    assert "your account doesn't have permission to delete the following types of objects" in page.content.decode()
    assert lead.post(f"/admin/annotate/solution/{labeled.pk}/delete/", {"post": "yes"}).status_code == 403
    assert Annotation.objects.filter(pk=annotation.pk).exists() and Solution.objects.filter(pk=labeled.pk).exists()
    # a list action cannot take them either
    changelist = lead.post(
        "/admin/annotate/solution/",
        {"action": "delete_selected", "_selected_action": [labeled.pk], "post": "yes"},
    )
    assert changelist.status_code == 403 and Solution.objects.filter(pk=labeled.pk).exists()

    steps = spare.steps.count()
    assert lead.post(f"/admin/annotate/solution/{spare.pk}/delete/", {"post": "yes"}).status_code == 302
    event = AuditEvent.objects.get(action="solution.deleted")
    assert event.actor.username == "two-project-lead" and event.project == algebra
    assert event.details["id"] == spare.pk and event.details["row"]["problem_id"] == spare.problem_id
    assert event.details["with"] == {"annotate.Step": steps}


def test_a_superusers_label_deletion_is_recorded_whole_and_its_solution_is_served_again():
    algebra = Project.objects.create(slug="algebra", overlap=1)
    first, second = _labeled(algebra)
    assert not Solution.objects.get(pk=first.pk).is_open
    doomed = Annotation.objects.get(solution=first)
    root = _superuser()
    assert root.post(f"/admin/annotate/annotation/{doomed.pk}/delete/", {"post": "yes"}).status_code == 302
    first.refresh_from_db()
    assert first.annotation_count == 0 and first.is_open  # missing its label again: queued
    event = AuditEvent.objects.get(action="annotation.deleted")
    assert event.project == algebra and event.details["id"] == doomed.pk
    row = event.details["row"]
    assert row["label_steps"] == doomed.label_steps and row["labeler_uuid"] == doomed.labeler_uuid
    assert row["solution_id"] == first.pk and row["finish_reason"] == doomed.finish_reason
    # the annotator is served it again
    annotator = member_client(algebra, "algebra-ann2", Role.ANNOTATOR)
    task = annotator.get("/api/v1/projects/algebra/tasks/next/").json()
    assert Assignment.objects.get(pk=task["assignment_id"]).solution_id == first.pk
    second.refresh_from_db()
    assert second.annotation_count == 1 and not second.is_open


def test_a_deleted_projects_trail_outlives_it():
    doomed = Project.objects.create(slug="doomed")
    _labeled(doomed, 1)
    lead = _lead_of(doomed)
    solution = Solution.objects.get(project=doomed)
    data = form_data(lead.get(f"/admin/annotate/solution/{solution.pk}/change/"))
    lead.post(f"/admin/annotate/solution/{solution.pk}/change/", {**data, "is_gold": "on"})
    assert AuditEvent.objects.filter(action="solution.changed", project=doomed).exists()
    assert lead.post(f"/admin/annotate/project/{doomed.pk}/delete/", {"post": "yes"}).status_code == 403  # labels
    root = _superuser()
    assert root.post(f"/admin/annotate/project/{doomed.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not Project.objects.filter(slug="doomed").exists()
    gone = AuditEvent.objects.get(action="project.deleted")
    assert gone.project is None and gone.details["row"]["slug"] == "doomed"
    assert gone.details["with"]["annotate.Annotation"] == 1 and gone.details["with"]["annotate.Solution"] == 1
    kept = AuditEvent.objects.get(action="solution.changed")
    assert kept.project is None and kept.details["id"] == solution.pk  # the edit's row stays


def test_a_superusers_preference_deletion_reopens_its_pair(duel):  # noqa: F811
    from annotate.models import Preference

    Project.objects.filter(pk=duel.pk).update(overlap=1)
    annotator = member_client(duel, "duel-ann", Role.ANNOTATOR)
    task = annotator.get("/api/v1/projects/duel/tasks/next/").json()
    body = {"idempotency_key": "p1", "preference": "A", "strength": 2, "total_time_ms": 900}
    answered = annotator.post(f"/api/v1/assignments/{task['assignment_id']}/submit/", body, format="json")
    assert answered.status_code == 201, answered.content
    pair = Preference.objects.get().comparison
    assert pair.annotation_count == 1 and not pair.is_open
    lead = _lead_of(duel)
    preference = Preference.objects.get(comparison=pair)
    assert lead.get(f"/admin/annotate/preference/{preference.pk}/delete/").status_code == 403
    assert _superuser().post(f"/admin/annotate/preference/{preference.pk}/delete/", {"post": "yes"}).status_code == 302
    pair.refresh_from_db()
    assert pair.annotation_count == 0 and pair.is_open
    event = AuditEvent.objects.get(action="preference.deleted")
    assert event.details["row"]["shown"] == "A" and event.details["row"]["comparison_id"] == pair.pk


def test_a_step_is_never_deleted_alone_but_goes_with_its_solution():
    """A lead deleted one step of a labeled solution in the admin: the labels, which rate steps by
    position, then stood under the next step's text in every export, and no event said so."""
    algebra = Project.objects.create(slug="algebra", overlap=1)
    labeled = _labeled(algebra, 1)[0]
    spare = make_solutions(algebra, 1)[0]
    step = labeled.steps.order_by("index")[1]
    lead = _lead_of(algebra)
    for client in (lead, _superuser()):
        assert client.get(f"/admin/annotate/step/{step.pk}/delete/").status_code == 403
        assert client.post(f"/admin/annotate/step/{step.pk}/delete/", {"post": "yes"}).status_code == 403
        listing = client.get("/admin/annotate/step/")
        assert listing.status_code == 200 and "delete_selected" not in listing.content.decode()
        bulk = client.post(
            "/admin/annotate/step/", {"action": "delete_selected", "_selected_action": [step.pk], "post": "yes"}
        )
        assert bulk.status_code in (200, 302)  # "No action selected": the action is not offered
        change = client.get(f"/admin/annotate/step/{step.pk}/change/").content.decode()
        assert f"/admin/annotate/step/{step.pk}/delete/" not in change
    assert labeled.steps.count() == labeled.n_steps
    # a solution still goes whole, its steps with it
    assert lead.post(f"/admin/annotate/solution/{spare.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not Solution.objects.filter(pk=spare.pk).exists()


def test_a_submitted_claim_is_kept_from_leads_and_a_deleted_claim_is_recorded():
    """A lead deleted the submitted claim behind a label: the claim query then saw no claim of that
    annotator on the solution and, once it had room, served it to them again (a second label)."""
    algebra = Project.objects.create(slug="algebra", overlap=1)
    labeled = _labeled(algebra, 1)[0]
    open_one = make_solutions(algebra, 1)[0]
    submitted = Assignment.objects.get(solution=labeled)
    lead = _lead_of(algebra)
    assert lead.get(f"/admin/annotate/assignment/{submitted.pk}/delete/").status_code == 403
    assert lead.post(f"/admin/annotate/assignment/{submitted.pk}/delete/", {"post": "yes"}).status_code == 403
    bulk = lead.post(
        "/admin/annotate/assignment/", {"action": "delete_selected", "_selected_action": [submitted.pk], "post": "yes"}
    )
    assert bulk.status_code == 403 and Assignment.objects.filter(pk=submitted.pk).exists()
    # room again (overlap 2): the annotator who labeled it is not served it a second time
    Project.objects.filter(pk=algebra.pk).update(overlap=2)
    Solution.objects.filter(pk=labeled.pk).update(is_open=True)
    annotator = APIClient()
    annotator.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get(user=submitted.annotator).key}")
    task = annotator.get("/api/v1/projects/algebra/tasks/next/").json()
    claim = Assignment.objects.get(pk=task["assignment_id"])
    assert claim.solution_id == open_one.pk
    # an open claim (a stuck lease) a lead may delete, and the deletion is recorded
    assert lead.post(f"/admin/annotate/assignment/{claim.pk}/delete/", {"post": "yes"}).status_code == 302
    event = AuditEvent.objects.get(action="assignment.deleted")
    assert event.project == algebra and event.details["row"]["solution_id"] == open_one.pk
    assert event.actor.username == "two-project-lead"
    # a superuser may delete a submitted one, recorded too
    assert _superuser().post(f"/admin/annotate/assignment/{submitted.pk}/delete/", {"post": "yes"}).status_code == 302
    assert AuditEvent.objects.filter(action="assignment.deleted", details__id=submitted.pk).exists()


def test_passing_an_annotator_by_hand_and_removing_a_membership_in_the_admin_are_recorded():
    """A lead's pass decides whose labels count; it and an admin removal of a role left no trace."""
    from annotate.models import AnnotatorStatus, Membership, ScreeningStatus

    algebra = Project.objects.create(slug="algebra")
    annotator = member_client(algebra, "alg-ann", Role.ANNOTATOR).user
    status = AnnotatorStatus.objects.create(
        project=algebra, user=annotator, screening_status=ScreeningStatus.FAILED, screening_agreement=0.5
    )
    lead = _lead_of(algebra)
    url = f"/admin/annotate/annotatorstatus/{status.pk}/change/"
    data = form_data(lead.get(url))
    assert lead.post(url, {**data, "screening_status": ScreeningStatus.PASSED}).status_code == 302
    event = AuditEvent.objects.get(action="annotatorstatus.changed")
    assert event.project == algebra and event.actor.username == "two-project-lead"
    assert event.details["changes"] == {"screening_status": [ScreeningStatus.FAILED, ScreeningStatus.PASSED]}

    membership = Membership.objects.get(project=algebra, user=annotator)
    assert lead.post(f"/admin/annotate/membership/{membership.pk}/delete/", {"post": "yes"}).status_code == 302
    removed = AuditEvent.objects.get(action="membership.deleted")
    assert removed.project == algebra and removed.details["row"]["user_id"] == annotator.pk
    assert removed.details["row"]["role"] == Role.ANNOTATOR


def test_a_membership_removed_from_the_projects_page_in_the_admin_is_recorded():
    from annotate.models import Membership

    algebra = Project.objects.create(slug="algebra")
    annotator = member_client(algebra, "alg-ann", Role.ANNOTATOR).user
    lead = _lead_of(algebra)
    url = f"/admin/annotate/project/{algebra.pk}/change/"
    page = lead.get(url)
    data = form_data(page)
    rows = list(Membership.objects.filter(project=algebra).order_by("id"))
    index = next(
        i
        for i, m in enumerate(page.context["inline_admin_formsets"][0].formset.forms)
        if m.instance.user_id == annotator.pk
    )
    data[f"memberships-{index}-DELETE"] = "on"
    assert lead.post(url, data).status_code == 302
    assert not Membership.objects.filter(project=algebra, user=annotator).exists()
    event = AuditEvent.objects.get(action="membership.deleted")
    assert event.project == algebra and event.details["row"]["user_id"] == annotator.pk
    assert len(rows) == Membership.objects.filter(project=algebra).count() + 1
