"""The admin shows a lead only their projects: list filters, add forms' initial values from the
query string, foreign-key lookups; and the actions a lead uses there do what they say.

Was: the project list filter listed every project's slug on 12 list pages; add forms pre-filled
from the query string rendered another project's problem text and any username (superusers'
included); the "add annotation" form answered 500; "Reopen for relabeling" at overlap 1 reported
success and changed nothing.
"""

from __future__ import annotations

import pytest

from annotate.models import Assignment, AuditEvent, Membership, Project, Role, Solution
from annotate.services.members import add_member
from config.permissions_matrix import ADMIN_MODELS
from tests.api_clients import member_client
from tests.factories import make_project, make_solutions, make_user, payload
from tests.security.world import build_world

pytestmark = pytest.mark.django_db


def _secret_world():
    world = build_world()
    other = world.other
    secret_solution = make_solutions(other, 1)[0]
    secret_solution.problem.text = "SECRET-PROBLEM-TEXT of the other project"
    secret_solution.problem.save()
    other_member = make_user("other-project-annotator-name", project=other)
    return world, other, secret_solution, other_member


def test_list_filters_offer_only_the_leads_projects():
    world, other, _, _ = _secret_world()
    second = make_project("second-of-the-lead")  # a filter shows only with two or more choices
    add_member(project=second, user=world.users["lead"], role=Role.LEAD)
    lead = world.session_client("lead")
    pages = [
        f"/admin/{label.replace('.', '/')}/"
        for label, model in ADMIN_MODELS.items()
        if model.audience == "project" and label != "annotate.project"
    ]
    with_filter = 0
    for url in pages:
        response = lead.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        assert other.slug not in html, url
        with_filter += second.slug in html and "__id__exact=" in html
    assert with_filter >= 12, with_filter  # the project filter is there, with the lead's project only


def test_add_forms_ignore_query_string_values_outside_the_leads_projects():
    world, other, secret, other_member = _secret_world()
    lead = world.session_client("lead")
    superuser = world.users["superuser"]
    urls = [
        f"/admin/annotate/solution/add/?problem={secret.problem_id}",
        f"/admin/annotate/assignment/add/?solution={secret.pk}&annotator={superuser.pk}&project={other.pk}",
        f"/admin/annotate/membership/add/?user={superuser.pk}&project={other.pk}",
        f"/admin/annotate/membership/add/?user={other_member.pk}",
        f"/admin/annotate/step/?solution__id__exact={secret.pk}",
    ]
    for url in urls:
        html = lead.get(url).content.decode()
        assert "SECRET-PROBLEM-TEXT" not in html, url
        assert superuser.username not in html, url
        assert other_member.username not in html, url
        assert other.slug not in html, url
    # A member of the lead's own project is still offered, pre-filled.
    own = world.users["annotator"]
    html = lead.get(f"/admin/annotate/membership/add/?user={own.pk}").content.decode()
    assert own.username in html
    # A superuser sees everything, as before.
    html = world.session_client("superuser").get(f"/admin/annotate/solution/add/?problem={secret.problem_id}")
    assert "SECRET-PROBLEM-TEXT" in html.content.decode()


def test_posted_ids_outside_the_scope_are_refused():
    world, other, secret, other_member = _secret_world()
    lead = world.session_client("lead")
    before = world.project.memberships.count()
    for user in (world.users["superuser"], other_member):
        response = lead.post(
            "/admin/annotate/membership/add/", {"project": world.project.pk, "user": user.pk, "role": "annotator"}
        )
        assert response.status_code == 200 and b"Select a valid choice" in response.content
    assert world.project.memberships.count() == before


def test_annotations_are_not_added_by_hand():
    """Annotations come from submits and imports; the add form answered 500 (no submit time)."""
    world = build_world()
    for kind in ("lead", "superuser"):
        assert world.session_client(kind).get("/admin/annotate/annotation/add/").status_code == 403
    assert b"annotation/add/" not in world.session_client("lead").get("/admin/annotate/annotation/").content


def test_reopen_at_overlap_one_serves_the_solution_again():
    world = build_world()
    project = world.project  # overlap 1
    first = member_client(project, "first-labeler", Role.ANNOTATOR)
    task = first.get(f"/api/v1/projects/{project.slug}/tasks/next/").json()
    submitted = first.post(f"/api/v1/assignments/{task['id']}/submit/?next=false", payload([1, 1, 1]), format="json")
    assert submitted.status_code == 201
    solution_id = Assignment.objects.get(pk=task["id"]).solution_id
    labeled = Solution.objects.get(pk=solution_id)
    assert not labeled.is_open and labeled.annotation_count == 1

    response = world.session_client("lead").post(
        "/admin/annotate/solution/", {"action": "reopen_for_relabeling", "_selected_action": [solution_id]}, follow=True
    )
    assert "one more label" in response.content.decode()
    labeled.refresh_from_db()
    assert labeled.is_open

    # Another annotator is served it (the first one never again), and the second label closes it.
    second = member_client(project, "second-labeler", Role.ANNOTATOR)
    served = []
    while (response := second.get(f"/api/v1/projects/{project.slug}/tasks/next/")).status_code == 200:
        body = response.json()
        served.append(Assignment.objects.get(pk=body["id"]).solution_id)
        submitted = second.post(
            f"/api/v1/assignments/{body['id']}/submit/?next=false",
            payload([1, 1, 1], key=str(body["id"])),
            format="json",
        )
        assert submitted.status_code == 201
    assert solution_id in served
    labeled.refresh_from_db()
    assert labeled.annotation_count == 2 and not labeled.is_open


def test_autocomplete_lookups_stay_in_the_leads_projects():
    world, other, _, other_member = _secret_world()
    lead = world.session_client("lead")
    projects = lead.get("/admin/autocomplete/?app_label=annotate&model_name=solution&field_name=project&term=")
    assert projects.status_code == 200
    slugs = {row["text"] for row in projects.json()["results"]}
    assert world.project.slug in str(slugs) and other.slug not in str(slugs)
    # People are not searchable by leads at all (users are for superusers).
    users = lead.get("/admin/autocomplete/?app_label=annotate&model_name=membership&field_name=user&term=")
    assert users.status_code == 403 and other_member.username not in users.content.decode()


def test_a_project_a_lead_adds_in_the_admin_stays_theirs():
    """Was (found by the walkthrough): a lead's "Add project" in the admin saved a project with no
    member, which then vanished from their own admin ("Project ... doesn't exist") and home page:
    only a superuser could reach it again. The lead who adds it becomes its lead."""
    from django.contrib.auth.models import Group

    from annotate.services.projects import PROJECT_CREATORS

    world = build_world()
    lead = world.session_client("lead")
    # A lead outside the Project creators group may not add projects here, as on the New project page.
    assert lead.get("/admin/annotate/project/add/").status_code == 403
    assert b"/admin/annotate/project/add/" not in lead.get("/admin/annotate/project/").content
    world.users["lead"].groups.add(Group.objects.get(name=PROJECT_CREATORS))
    form = {
        "slug": "added-in-admin",
        "name": "Added in the admin",
        "labeling_mode": "phase2",
        "task_kind": "steps",
        "selection_strategy": "answer_stratified",
        "overlap": 1,
        "qc_rate": 0,
        "control_share": 0.1,
        "retrain_every": 500,
        "guidelines": "Rate each step.\r\nStop at the first error.",  # a browser's textarea sends CRLF
        "lease_minutes": 30,
        "screening_required": 0,
        "screening_threshold": 0.75,
        "pairs_per_problem": 3,  # the add form shows the default; a browser sends it back
        "current_generation": 0,
        "memberships-TOTAL_FORMS": 0,
        "memberships-INITIAL_FORMS": 0,
    }
    # Slugs are lowercase, as the create page makes them (else /projects/Added/ and /projects/added/).
    upper = lead.post("/admin/annotate/project/add/", {**form, "slug": "Added-In-Admin"})
    assert upper.status_code == 200 and not Project.objects.filter(slug__iexact="added-in-admin").exists()
    assert upper.context["adminform"].form.errors["slug"] == ["Use lowercase: “added-in-admin”."]
    response = lead.post("/admin/annotate/project/add/", form)
    errors = response.context["adminform"].form.errors if response.status_code == 200 else None
    assert response.status_code == 302, errors
    project = Project.objects.get(slug="added-in-admin")
    assert Membership.objects.filter(project=project, user=world.users["lead"], role=Role.LEAD).exists()
    assert b"added-in-admin" in lead.get("/admin/annotate/project/").content
    # stored with LF, as the settings page stores it: saving settings next reports no guidelines change
    assert project.guidelines == "Rate each step.\nStop at the first error."
    fields = ("name", "task_kind", "selection_strategy", "overlap", "qc_rate", "control_share", "retrain_every")
    settings_form = {k: form[k] for k in fields}
    saved = lead.post(
        "/projects/added-in-admin/settings/", {**settings_form, "overlap": 2, "guidelines": form["guidelines"]}
    )
    assert saved.status_code == 302, saved.context["form"].errors
    event = AuditEvent.objects.filter(project=project).latest("pk")
    assert set(event.details["changes"]) == {"overlap"}


def test_a_lead_adds_members_in_the_admin_from_a_list_of_the_people_in_their_projects():
    """Was (found by the lead walkthrough): the members inline searched users through the users'
    admin, which answers leads 403, so a lead could not pick anyone."""
    world, other, _, other_member = _secret_world()
    lead = world.session_client("lead")
    page = lead.get(f"/admin/annotate/project/{world.project.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "admin-autocomplete" not in html  # a plain list, nothing that asks the users' admin
    assert "Add someone new on the project&#x27;s Members page." in html
    member_names = {m.user.username for m in world.project.memberships.select_related("user")}
    assert all(f">{name}<" in html for name in member_names)
    assert other_member.username not in html  # still no one from outside the lead's projects
