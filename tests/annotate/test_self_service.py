"""The lead's and ML engineer's pages through Django's test client on PostgreSQL: who may open
them (the API's policy), what their forms change, what they refuse, and the audit rows they write.
The browser flows (import with a worker, labeling, screenshots) are in tests/e2e/test_self_service.py.
"""

from __future__ import annotations

import io
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import AuditEvent, ImportJob, Invite, Membership, Project, Role, Solution
from annotate.services import team
from annotate.services.projects import PROJECT_CREATORS

PASSWORD = "pw-steplabel-test"
FIXTURE = Path(__file__).parent / "fixtures" / "edge_cases.jsonl"  # labeled PRM800K records
User = get_user_model()

pytestmark = pytest.mark.django_db


def user(name: str, *, creator: bool = False, **extra):
    u = User.objects.create_user(name, password=PASSWORD, email=f"{name}@example.org", **extra)
    if creator:
        u.groups.add(Group.objects.get(name=PROJECT_CREATORS))
    return u


def signed_in(client, u):
    client.force_login(u)
    return client


def project_with(lead, slug: str = "algebra", **roles) -> Project:
    project = Project.objects.create(slug=slug, name="Algebra")
    Membership.objects.create(project=project, user=lead, role=Role.LEAD)
    for role, people in roles.items():
        for person in people:
            Membership.objects.create(project=project, user=person, role=role)
    return project


NEW = {
    "name": "Geometry, round 2",
    "slug": "geometry-round-2",
    "task_kind": "steps",
    "overlap": "2",
    "qc_rate": "0.05",
    "selection_strategy": "uncertainty",
    "retrain_every": "300",
    "guidelines": "# Rate\nUse $x^2$.",
}


def test_the_project_creators_group_exists_after_migrating():
    assert Group.objects.filter(name=PROJECT_CREATORS).exists()


def test_only_creators_see_and_use_create_project(client):
    plain = user("plain")
    signed_in(client, plain)
    assert "Create project" not in client.get("/").content.decode()
    assert client.get("/projects/new/").status_code == 403
    assert client.post("/projects/new/", NEW).status_code == 403
    assert not Project.objects.exists()

    creator = user("creator", creator=True)
    signed_in(client, creator)
    assert "Create project" in client.get("/").content.decode()
    response = client.post("/projects/new/", NEW)
    assert response.status_code == 302 and response["Location"] == "/projects/geometry-round-2/data/"
    project = Project.objects.get(slug="geometry-round-2")
    assert (project.name, project.overlap, project.qc_rate, project.selection_strategy, project.retrain_every) == (
        "Geometry, round 2",
        2,
        0.05,
        "uncertainty",
        300,
    )
    assert list(Membership.objects.filter(project=project).values_list("user__username", "role")) == [
        ("creator", "lead")
    ]
    event = AuditEvent.objects.get(action="project.created")
    assert (event.actor, event.project, event.details["overlap"]) == (creator, project, 2)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("slug", "Bad Slug!", "Enter a valid “slug”"),
        ("slug", "new", "reserved"),
        ("slug", "taken", "exists already"),
        ("overlap", "0", "greater than or equal to 1"),
        ("qc_rate", "1.5", "less than or equal to 1"),
        ("control_share", "0.8", "less than or equal to 0.5"),
        ("retrain_every", "-1", "greater than or equal to 0"),  # 0 is allowed: it turns retraining off
        ("task_kind", "rank", "Select a valid choice"),
        ("name", "", "This field is required"),
    ],
)
def test_create_project_refuses_bad_fields_by_name_and_creates_nothing(client, field, value, message):
    Project.objects.create(slug="taken")
    signed_in(client, user("root", is_superuser=True, is_staff=True))
    response = client.post("/projects/new/", {**NEW, field: value})
    assert response.status_code == 200
    assert message in " ".join(response.context["form"].errors[field])
    assert list(Project.objects.values_list("slug", flat=True)) == ["taken"]
    assert not AuditEvent.objects.exists()


def test_retrain_every_0_turns_automatic_retraining_off_from_the_settings_page(client):
    """Found by the active-learning walkthrough: the README and the dashboard say 0 turns automatic
    retraining off, and the trigger reads it so, but the form refused 0."""
    lead = user("lead")
    project = project_with(lead)
    signed_in(client, lead)
    form = {**NEW, "slug": project.slug, "retrain_every": "0"}
    form.pop("slug")
    response = client.post("/projects/algebra/settings/", form)
    assert response.status_code == 302, response.context["form"].errors if response.context else response
    project.refresh_from_db()
    assert project.retrain_every == 0
    page = client.get("/projects/algebra/settings/").content.decode()
    assert "(0: only when asked)" in page


def test_settings_change_is_saved_and_audited_with_before_and_after(client):
    lead = user("lead")
    project = project_with(lead)
    signed_in(client, lead)
    page = client.get("/projects/algebra/settings/")
    assert page.status_code == 200 and "data-markdown-preview" in page.content.decode()
    assert 'name="control_share"' in page.content.decode()
    data = {**NEW, "name": "Algebra", "overlap": "3", "guidelines": "New rules", "control_share": "0.2"}
    data.pop("slug")
    assert client.post("/projects/algebra/settings/", data).status_code == 302
    project.refresh_from_db()
    assert (project.overlap, project.guidelines, project.control_share) == (3, "New rules", 0.2)
    event = AuditEvent.objects.get(action="project.settings_changed")
    assert event.actor == lead and event.details["changes"]["overlap"] == [1, 3]
    assert event.details["changes"]["guidelines"] == ["", "New rules"]
    assert event.details["changes"]["control_share"] == [0.1, 0.2]


def test_lead_pages_refuse_other_roles_and_hide_the_project_from_non_members(client):
    lead, annotator, ml = user("lead"), user("ann"), user("ml")
    project_with(lead, annotator=[annotator], ml_engineer=[ml])
    outsider_lead = user("other")
    project_with(outsider_lead, slug="other")
    pages = ["settings", "data", "members"]
    signed_in(client, annotator)
    for page in [*pages, "export"]:
        response = client.get(f"/projects/algebra/{page}/")
        assert response.status_code == 403, page
        assert "You may not open this page" in response.content.decode()
    signed_in(client, ml)
    assert [client.get(f"/projects/algebra/{p}/").status_code for p in pages] == [403, 403, 403]
    assert client.get("/projects/algebra/export/").status_code == 200
    signed_in(client, outsider_lead)
    for page in [*pages, "export"]:
        existing = client.get(f"/projects/algebra/{page}/")
        missing = client.get(f"/projects/no-such-project/{page}/")
        assert existing.status_code == missing.status_code == 404, page
        assert "Page not found" in existing.content.decode()


def test_members_add_by_username_or_email_remove_and_keep_one_lead(client):
    lead, ann, ml = user("lead"), user("ann"), user("ml")
    project = project_with(lead)
    signed_in(client, lead)
    response = client.post(
        "/projects/algebra/members/", {"action": "add", "username": "ann", "roles": ["annotator"]}, follow=True
    )
    assert "Added ann as Annotator." in response.content.decode()  # the role's name, as the page shows it
    by_email = client.post(
        "/projects/algebra/members/",
        {"action": "add", "username": "ML@example.org", "roles": ["ml_engineer"]},
        follow=True,
    )
    assert "Added ml as ML engineer." in by_email.content.decode()  # the account's name, not the typed e-mail
    roles = set(Membership.objects.filter(project=project).values_list("user__username", "role"))
    assert roles == {("lead", "lead"), ("ann", "annotator"), ("ml", "ml_engineer")}

    unknown = client.post("/projects/algebra/members/", {"action": "add", "username": "ghost", "roles": ["annotator"]})
    assert "No account is called ghost" in unknown.content.decode()
    no_role = client.post("/projects/algebra/members/", {"action": "add", "username": "ann", "roles": []})
    assert "This field is required" in no_role.content.decode()

    client.post("/projects/algebra/members/", {"action": "remove", "user": ann.pk, "confirm": "yes"})
    assert not Membership.objects.filter(project=project, user=ann).exists()
    last = client.post(
        "/projects/algebra/members/", {"action": "remove", "user": lead.pk, "confirm": "yes"}, follow=True
    )
    assert "A project needs a lead" in last.content.decode()
    assert Membership.objects.filter(project=project, user=lead, role=Role.LEAD).exists()
    # The sole lead who also annotates may drop annotating, not leading; a role they lack is refused.
    Membership.objects.create(project=project, user=lead, role=Role.ANNOTATOR)
    lead_role = client.post(
        "/projects/algebra/members/", {"action": "remove_role", "user": lead.pk, "role": "lead"}, follow=True
    )
    assert "A project needs a lead" in lead_role.content.decode()
    missing = client.post(
        "/projects/algebra/members/", {"action": "remove_role", "user": lead.pk, "role": "ml_engineer"}, follow=True
    )
    assert "That person does not have that role in this project." in missing.content.decode()
    client.post("/projects/algebra/members/", {"action": "remove_role", "user": lead.pk, "role": "annotator"})
    assert list(Membership.objects.filter(project=project, user=lead).values_list("role", flat=True)) == ["lead"]
    actions = list(AuditEvent.objects.order_by("id").values_list("action", "details__user"))
    assert actions == [
        ("member.added", "ann"),
        ("member.added", "ml"),
        ("member.removed", "ann"),
        ("member.removed", "lead"),
    ]
    assert ml.pk  # added by e-mail above


def test_removing_a_member_asks_first_on_a_page_that_needs_no_javascript(client):
    lead, ann = user("lead"), user("ann")
    project = project_with(lead, annotator=[ann], ml_engineer=[ann])
    signed_in(client, lead)
    members = client.get("/projects/algebra/members/").content.decode()
    assert 'name="confirm"' not in members  # the table's Remove only leads to the question

    asked = client.post("/projects/algebra/members/", {"action": "remove", "user": ann.pk})
    html = asked.content.decode()
    assert asked.status_code == 200 and "<h1>Remove ann?</h1>" in html
    assert "loses every role in Algebra: Annotator, ML engineer." in html
    assert '<input type="hidden" name="confirm" value="yes">' in html
    assert 'href="/projects/algebra/members/">Cancel</a>' in html
    assert "This is you" not in html
    assert Membership.objects.filter(project=project, user=ann).count() == 2  # nothing changed yet
    assert not AuditEvent.objects.filter(action="member.removed").exists()

    done = client.post(
        "/projects/algebra/members/", {"action": "remove", "user": ann.pk, "confirm": "yes"}, follow=True
    )
    assert "Removed ann from algebra." in done.content.decode()
    assert not Membership.objects.filter(project=project, user=ann).exists()
    assert AuditEvent.objects.get(action="member.removed").details["roles"] == ["annotator", "ml_engineer"]


def test_a_removal_that_would_be_refused_says_so_before_asking(client):
    lead = user("lead")
    project_with(lead)
    signed_in(client, lead)
    last = client.post("/projects/algebra/members/", {"action": "remove", "user": lead.pk}).content.decode()
    assert "A project needs a lead" in last and "Remove lead?" not in last
    gone = client.post("/projects/algebra/members/", {"action": "remove", "user": 999_999}).content.decode()
    assert "That person is not a member of this project." in gone


def test_a_lead_removing_themselves_is_told_they_lose_the_project(client):
    lead, other = user("lead"), user("other")
    project = project_with(lead)
    Membership.objects.create(project=project, user=other, role=Role.LEAD)  # so lead may leave
    signed_in(client, lead)
    html = client.post("/projects/algebra/members/", {"action": "remove", "user": lead.pk}).content.decode()
    assert "This is you:</strong> you will no longer be able to open this project." in html


def test_a_lead_giving_up_their_own_lead_role_is_asked_first_and_sent_home(client):
    lead, other = user("lead"), user("other")
    project = project_with(lead, annotator=[lead])
    Membership.objects.create(project=project, user=other, role=Role.LEAD)
    signed_in(client, lead)
    asked = client.post("/projects/algebra/members/", {"action": "remove_role", "user": lead.pk, "role": "lead"})
    html = asked.content.decode()
    assert asked.status_code == 200 and "<h1>Give up your Lead role?</h1>" in html
    assert '<input type="hidden" name="role" value="lead">' in html
    assert Membership.objects.filter(project=project, user=lead, role=Role.LEAD).exists()  # nothing changed yet

    done = client.post(
        "/projects/algebra/members/",
        {"action": "remove_role", "user": lead.pk, "role": "lead", "confirm": "yes"},
        follow=True,
    )
    assert done.redirect_chain[-1][0] == "/"  # the members page is for leads only now
    assert "lead is no longer Lead in algebra." in done.content.decode()
    assert list(Membership.objects.filter(project=project, user=lead).values_list("role", flat=True)) == ["annotator"]
    # Another member's single role goes at once, as before (it does not lock the actor out).
    Membership.objects.create(project=project, user=other, role=Role.ANNOTATOR)
    signed_in(client, other)
    client.post("/projects/algebra/members/", {"action": "remove_role", "user": other.pk, "role": "annotator"})
    assert list(Membership.objects.filter(project=project, user=other).values_list("role", flat=True)) == ["lead"]


def test_the_added_message_names_the_roles_as_the_page_does(client):
    lead = user("lead")
    user("ann")
    project_with(lead)
    signed_in(client, lead)
    roles = ["annotator", "lead", "ml_engineer"]
    added = client.post("/projects/algebra/members/", {"action": "add", "username": "ann", "roles": roles}, follow=True)
    assert "Added ann as Annotator, Lead and ML engineer." in added.content.decode()
    again = client.post(
        "/projects/algebra/members/", {"action": "add", "username": "ann", "roles": ["ml_engineer"]}, follow=True
    )
    assert "ann had those roles." in again.content.decode()


def test_after_an_add_the_member_form_comes_back_with_no_username_and_no_role_ticked(client):
    """The next person added gets only the roles the lead ticks for them (Annotator stayed ticked)."""
    lead = user("lead")
    user("ann")
    project_with(lead)
    signed_in(client, lead)
    added = client.post(
        "/projects/algebra/members/", {"action": "add", "username": "ann", "roles": ["annotator", "lead"]}, follow=True
    )
    assert added.redirect_chain == [("/projects/algebra/members/", 302)]
    form = added.content.decode().split('value="add">')[1].split("</form>")[0]
    assert 'name="roles"' in form and 'name="username"' in form
    assert " checked" not in form and 'value="ann"' not in form


def test_invite_link_is_shown_once_works_once_and_expires(client, settings):
    lead = user("lead")
    project = project_with(lead)
    signed_in(client, lead)
    page = client.post(
        "/projects/algebra/members/", {"action": "invite", "invite-roles": ["annotator"]}, follow=True
    ).content.decode()
    link = page.split("data-invite-link>")[1].split("</code>")[0]
    path = link.removeprefix("http://testserver")
    assert path.startswith("/invite/")
    assert "data-invite-link" not in client.get("/projects/algebra/members/").content.decode()
    invite = Invite.objects.get()
    assert path.split("/")[2] not in invite.token_hash  # only a hash is stored

    client.logout()
    form = client.get(path)
    assert form.status_code == 200 and "You are invited as Annotator" in form.content.decode()
    weak = client.post(path, {"username": "newbie", "password1": "123", "password2": "123"})
    assert weak.status_code == 200 and not User.objects.filter(username="newbie").exists()
    good = {"username": "newbie", "email": "", "password1": "Tr1cky-passphrase", "password2": "Tr1cky-passphrase"}
    assert client.post(path, good).status_code == 302
    newbie = User.objects.get(username="newbie")
    assert newbie.check_password("Tr1cky-passphrase")
    assert list(Membership.objects.filter(user=newbie).values_list("project__slug", "role")) == [
        ("algebra", "annotator")
    ]
    assert client.get("/annotate/algebra/").status_code == 200  # signed in as the new user
    client.logout()
    assert client.get(path).status_code == 404
    assert client.post(path, {**good, "username": "second"}).status_code == 404
    assert not User.objects.filter(username="second").exists()

    _, secret = team.create_invite(project=project, actor=lead, roles=["annotator"])
    Invite.objects.filter(used_at__isnull=True).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert client.get(f"/invite/{secret}/").status_code == 404


def test_an_account_holder_joins_with_the_invite_link(client):
    """Found in the walkthroughs: a link sent to someone who had an account only offered to create
    another one. Signed in, they now join with their own account; signed out, the page offers to
    sign in and come back. A member who holds the roles already leaves the link working."""
    lead, ann = user("lead"), user("ann")
    project = project_with(lead, annotator=[ann])
    _, secret = team.create_invite(project=project, actor=lead, roles=["annotator", "lead"])
    path = f"/invite/{secret}/"

    signed_out = client.get(path).content.decode()
    assert f'href="/accounts/login/?next=%2Finvite%2F{secret}%2F"' in signed_out
    assert "data-join-invite" not in signed_out
    assert client.post(path, {"action": "join"}).url == f"/accounts/login/?next=/invite/{secret}/"
    back = client.post(f"/accounts/login/?next={path}", {"username": "ann", "password": PASSWORD})
    assert back.status_code == 302 and back.url == path

    page = client.get(path).content.decode()
    assert "Join as ann</button>" in page and "Or create a new account" in page
    joined = client.post(path, {"action": "join"}, follow=True)
    assert joined.redirect_chain == [("/", 302)]
    assert "You joined Algebra as Lead." in joined.content.decode()  # annotator already held
    assert sorted(Membership.objects.filter(project=project, user=ann).values_list("role", flat=True)) == [
        "annotator",
        "lead",
    ]
    invite = Invite.objects.get()
    assert invite.used_by == ann and invite.used_at is not None
    assert AuditEvent.objects.filter(action="invite.accepted", details__existing_account=True).count() == 1
    assert client.get(path).status_code == 404  # used up
    assert User.objects.count() == 2  # no account was made

    # A member who opens a link meant for someone else gains nothing and leaves it working.
    _, other = team.create_invite(project=project, actor=lead, roles=["annotator"])
    kept = client.post(f"/invite/{other}/", {"action": "join"}, follow=True).content.decode()
    assert "You already hold these roles in Algebra; the link was left unused" in kept
    assert Invite.objects.filter(used_at__isnull=True).count() == 1
    client.logout()
    assert client.get(f"/invite/{other}/").status_code == 200


def test_no_one_signs_up_as_someone_elses_address_and_an_ambiguous_add_is_refused(client):
    """Found by the lead walkthrough: an invitee took `lead@example.org` (the lead's address) as
    their username, and "add lead@example.org" then gave the invitee the roles."""
    lead = user("lead")  # lead@example.org, as every test user's address
    user("ann")
    project = project_with(lead)
    _, secret = team.create_invite(project=project, actor=lead, roles=["annotator"])
    path = f"/invite/{secret}/"
    good = {"email": "", "password1": "Tr1cky-passphrase", "password2": "Tr1cky-passphrase"}
    as_address = client.post(path, {**good, "username": "LEAD@example.org"})
    assert "another account&#x27;s e-mail address" in as_address.content.decode()
    same_email = client.post(path, {**good, "username": "newbie", "email": "Ann@Example.org"})
    assert "An account uses this e-mail address already" in same_email.content.decode()
    assert not User.objects.filter(username__in=["LEAD@example.org", "newbie"]).exists()

    # accounts made before this rule (or by a superuser) can still collide: the add is refused
    User.objects.create_user("lead@example.org", password="x")
    signed_in(client, lead)
    ambiguous = client.post(
        "/projects/algebra/members/", {"action": "add", "username": "lead@example.org", "roles": ["lead"]}
    ).content.decode()
    assert "is one account&#x27;s username and another&#x27;s e-mail address" in ambiguous
    assert not Membership.objects.filter(project=project, user__username="lead@example.org").exists()
    # a username in another case names its account
    added = client.post(
        "/projects/algebra/members/", {"action": "add", "username": "ANN", "roles": ["annotator"]}, follow=True
    )
    assert "Added ann as Annotator." in added.content.decode()


def test_token_is_shown_once_and_rotation_revokes_the_old_one(client):
    ml = user("ml")
    lead = user("lead")
    project_with(lead, ml_engineer=[ml])
    signed_in(client, ml)
    first = client.get("/account/token/").content.decode()
    assert "Create token" in first and "data-token" not in first
    page = client.post("/account/token/", follow=True).content.decode()
    key = Token.objects.get(user=ml).key
    assert f'data-token="{key}"' in page
    assert (
        f"curl -sS --fail-with-body -D algebra-prm800k.headers -H &quot;Authorization: Token {key}&quot; "
        "&quot;http://testserver/api/v1/projects/algebra/export/?format=prm800k&quot;" in page
    )
    again = client.get("/account/token/").content.decode()
    assert key not in again and "Rotate token" in again and "YOUR_TOKEN" in again
    refused = client.post("/account/token/", follow=True).content.decode()  # the box not ticked
    assert "Not rotated: tick the box" in refused and Token.objects.get(user=ml).key == key
    client.post("/account/token/", {"confirm": "yes"})
    new_key = Token.objects.get(user=ml).key
    assert new_key != key
    api = APIClient()
    assert api.get("/api/v1/projects/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 401
    assert api.get("/api/v1/projects/", HTTP_AUTHORIZATION=f"Token {new_key}").status_code == 200
    assert list(AuditEvent.objects.order_by("id").values_list("action", flat=True)) == [
        "token.created",
        "token.rotated",
    ]
    assert all(key not in str(e.details) for e in AuditEvent.objects.all())


def test_password_change_is_audited(client):
    u = user("ann")
    signed_in(client, u)
    assert client.get("/account/password/").status_code == 200
    data = {"old_password": PASSWORD, "new_password1": "An0ther-passphrase", "new_password2": "An0ther-passphrase"}
    response = client.post("/account/password/", data, follow=True)
    assert "Your password is changed." in response.content.decode()
    u.refresh_from_db()
    assert u.check_password("An0ther-passphrase")
    assert AuditEvent.objects.get().action == "password.changed"


def test_home_lists_projects_with_roles_progress_and_links(client):
    lead = user("lead")
    project_with(lead, annotator=[lead])
    signed_in(client, lead)
    html = client.get("/").content.decode()
    for text in ["Algebra", "Annotator, Lead", "0 / 0 solutions", "/annotate/algebra/", "/dashboard/algebra/"]:
        assert text in html
    for page in ["settings", "data", "members", "export"]:
        assert f"/projects/algebra/{page}/" in html


def test_signed_in_pages_are_not_stored_by_the_browser(client):
    """Back after a submit must not show the home page's old counts, nor a signed-out person's."""
    lead = user("lead")
    project_with(lead, annotator=[lead])
    anonymous = client.get("/accounts/login/")
    signed_in(client, lead)
    for path in ["/", "/dashboard/algebra/", "/annotate/algebra/", "/projects/algebra/settings/"]:
        response = client.get(path)
        assert response.status_code == 200, path
        assert "no-store" in response["Cache-Control"] and "private" in response["Cache-Control"], path
    # the API's answers are not stored either: after Back and Forward the workspace asks again
    for path in ["/api/v1/projects/", "/api/v1/projects/algebra/tasks/next/", "/api/v1/projects/algebra/me/"]:
        assert client.get(path)["Cache-Control"] == "no-store", path
    assert "no-store" not in client.get("/api/v1/schema/").get("Cache-Control", "")  # public, the same for all
    assert "no-store" in anonymous["Cache-Control"]  # the login page was never cached anyway


@pytest.mark.parametrize("debug", [True, False])
def test_a_dead_invite_link_says_why_even_under_debug(client, settings, debug):
    """`make run` serves with DEBUG on: its 404 swap must keep the invite page's own explanation."""
    settings.DEBUG = debug
    lead = user("lead")
    project = project_with(lead)
    _, secret = team.create_invite(project=project, actor=lead, roles=["annotator"])
    Invite.objects.update(used_at=timezone.now())
    response = client.get(f"/invite/{secret}/")
    html = response.content.decode()
    assert response.status_code == 404
    assert "This invite link does not work" in html and "has been used already" in html


@override_settings(DEBUG=True)
def test_debug_server_shows_the_styled_404_not_djangos(client):
    signed_in(client, user("ann"))
    for url in ["/no-such-page/", "/projects/nope/settings/", "/annotate/nope/"]:
        response = client.get(url)
        html = response.content.decode()
        assert response.status_code == 404, url
        assert "Page not found" in html and "Using the URLconf" not in html, url
    api = client.get("/api/v1/projects/nope/stats/")
    assert api.status_code == 404 and api["Content-Type"] == "application/json"


@pytest.mark.parametrize("debug", [True, False])
def test_unknown_api_paths_answer_json_not_a_page(client, settings, debug):
    settings.DEBUG = debug
    for url in ["/api/v1/nonexistent/", "/api/v1/projects/demo/"]:
        response = client.get(url, HTTP_ACCEPT="application/json")
        assert response.status_code == 404, url
        assert response["Content-Type"] == "application/json", url
        assert response.json() == {"detail": "Not found."}


def test_stale_csrf_token_gets_the_styled_403():
    from django.test import Client

    csrf_client = Client(enforce_csrf_checks=True)
    csrf_client.force_login(user("ann"))
    response = csrf_client.post("/account/token/")
    assert response.status_code == 403 and "The form had expired" in response.content.decode()
    assert not Token.objects.exists()


def test_server_error_page_is_styled_and_needs_no_database(rf):
    from annotate.views_errors import server_error

    response = server_error(rf.get("/boom/"))
    html = response.content.decode()
    assert response.status_code == 500
    assert "Something went wrong on our side" in html and "steplabel/pages.css" in html


def test_oversized_import_from_the_page_is_refused_before_the_body_is_read(settings):
    """The data page posts with the session; the CSRF check would read (spool) the whole upload, so the
    size check runs before it: an oversized upload gets 413 even without a CSRF token."""
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client

    lead = user("lead")
    project_with(lead)
    settings.IMPORT_MAX_BYTES = 1000
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(lead)
    upload = SimpleUploadedFile("big.jsonl", b"x" * 5000)
    response = browser.post("/api/v1/projects/algebra/imports/", {"file": upload})
    assert response.status_code == 413 and "the limit is 1000 bytes" in response.json()["detail"]
    assert not ImportJob.objects.exists()
    small = browser.post("/api/v1/projects/algebra/imports/", {"file": SimpleUploadedFile("s.jsonl", b"{}")})
    assert small.status_code == 403  # under the limit, the CSRF check applies as before


def test_home_page_queries_do_not_grow_with_the_number_of_projects(client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    lead = user("lead", creator=True)
    signed_in(client, lead)
    project_with(lead, slug="p0")
    with CaptureQueriesContext(connection) as one:
        assert client.get("/").status_code == 200
    for i in range(1, 12):
        project_with(lead, slug=f"p{i}")
    with CaptureQueriesContext(connection) as many:
        html = client.get("/").content.decode()
    assert html.count("data-project=") == 12
    assert len(many) == len(one), [q["sql"] for q in many]


def test_past_imports_say_a_blank_file_was_empty_not_bad_on_line_0(client):
    """A file of blank lines fails as a whole (an error on line 0): the table says why, and names no line."""
    lead = user("lead")
    project = project_with(lead)
    empty = {"line": 0, "field": "(file)", "message": "the file is empty: it has no JSON lines"}
    bad = {"line": 2, "field": "question.problem", "message": "missing"}
    for name, error in (("blank.jsonl", empty), ("bad.jsonl", bad)):
        ImportJob.objects.create(
            project=project,
            requested_by=lead,
            filename=name,
            status="failed",
            counters={"bad_lines": 1},
            errors=[error],
        )
    html = signed_in(client, lead).get("/projects/algebra/data/").content.decode()
    assert "The file is empty: it has no JSON lines" in html
    assert "line 0" not in html
    assert "1 bad line, first: line 2" in html


def test_data_page_says_where_solutions_without_an_import_job_came_from(client):
    lead = user("lead")
    project = project_with(lead)
    signed_in(client, lead)
    assert "No imports yet." in client.get("/projects/algebra/data/").content.decode()
    call_command("import_prm800k", str(FIXTURE), project="algebra", no_progress=True, stdout=io.StringIO())
    n = Solution.objects.filter(project=project).count()
    html = client.get("/projects/algebra/data/").content.decode()
    assert f"the project's {n} solutions came from the command line" in html


def test_a_compare_project_posted_with_an_untouched_step_template_starts_with_the_compare_one():
    from annotate import guidelines_templates as g

    assert g.starting_guidelines(text=g.MATH, content_kind="math", task_kind="compare") == g.COMPARE
    assert g.starting_guidelines(text="", content_kind="code", task_kind="steps") == g.CODE
    assert g.starting_guidelines(text="Mine.", content_kind="math", task_kind="compare") == "Mine."
    assert g.starting_guidelines(text=g.TRACE, content_kind="trace", task_kind="steps") == g.TRACE


def _compare_project(lead) -> Project:
    duel = project_with(lead, slug="duel")
    Project.objects.filter(pk=duel.pk).update(task_kind="compare")
    duel.refresh_from_db()
    return duel


def _pair_lines(problems: int) -> list[dict]:
    """Two solutions of each problem, one right and one wrong: one pair per problem."""
    return [
        {"problem": f"What is {n} + {n}?", "ground_truth_answer": str(2 * n), "steps": [s], "answer": a}
        for n in range(1, problems + 1)
        for s, a in ((f"{n} + {n} = {2 * n}", str(2 * n)), (f"{n} + {n} = {2 * n + 1}", str(2 * n + 1)))
    ]


def test_home_counts_a_compare_projects_pairs_and_preferences_not_its_solutions(client, tmp_path):
    import json

    from annotate.services.imports import import_file

    lead = user("lead")
    duel = _compare_project(lead)
    lines = _pair_lines(2)
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    import_file(project=duel, path=path)
    pairs = duel.comparisons.count()
    assert pairs == 2 and Solution.objects.filter(project=duel).count() == 4
    page = signed_in(client, lead).get("/").content.decode()
    row = page.split('data-project="duel"')[1].split("</tr>")[0]
    assert "0 / 2 pairs complete" in row


def test_home_counts_the_queue_as_the_dashboard_does_without_gold_or_screening(client):
    from tests.factories import make_gold_annotation, make_solutions

    lead = user("lead")
    project = project_with(lead)
    make_solutions(project, 2)
    (gold,) = make_solutions(project, 1, is_gold=True)
    make_gold_annotation(gold, [1, 1, 1])
    make_solutions(project, 1, is_screening=True)
    signed_in(client, lead)
    row = client.get("/").content.decode().split('data-project="algebra"')[1].split("</tr>")[0]
    stats = client.get("/api/v1/projects/algebra/stats/").json()
    assert "0 / 2 solutions complete</span>" in row and stats["progress"]["solutions_total"] == 2
    assert (
        '<td class="sl-num">0<span class="sl-unit"> labels</span></td>' in row and stats["progress"]["labels"] == 0
    )  # the gold label is not queue work
    # with an overlap, "complete" says it means every annotator the overlap asks for
    project.overlap = 2
    project.save(update_fields=["overlap"])
    row = client.get("/").content.decode().split('data-project="algebra"')[1].split("</tr>")[0]
    assert "0 / 2 solutions complete (by 2 annotators each)</span>" in row


def test_a_compare_projects_settings_leave_out_what_pairs_have_no_use_for(client):
    lead = user("lead")
    duel = project_with(lead, slug="duel")
    Project.objects.filter(pk=duel.pk).update(task_kind="compare")
    page = signed_in(client, lead).get("/projects/duel/settings/").content.decode()
    for name in ("selection_strategy", "control_share", "critique_required", "rate_observations"):
        assert f'name="{name}"' not in page, name
    assert "compare each pair" in page and "new preferences" in page
    saved = client.post(
        "/projects/duel/settings/",
        {
            "name": "Duel",
            "task_kind": "compare",
            "overlap": 2,
            "qc_rate": 0,
            "retrain_every": 300,
            "guidelines": "Compare.",
        },
        follow=True,
    )
    assert saved.status_code == 200
    duel.refresh_from_db()
    assert (duel.overlap, duel.retrain_every, duel.selection_strategy) == (2, 300, "answer_stratified")


def test_a_compare_projects_past_imports_count_the_new_pairs(client, settings, tmp_path):
    """A compare project's import makes pairs; its past-imports table said only solutions and labels."""
    import json

    from django.core.files.uploadedfile import SimpleUploadedFile

    from annotate.services.imports import run_import_job, start_import

    settings.MEDIA_ROOT = tmp_path
    lead = user("lead")
    duel = _compare_project(lead)
    lines = _pair_lines(3)
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    job = start_import(project=duel, user=lead, upload=SimpleUploadedFile("pairs.jsonl", body))
    run_import_job(import_id=job.pk)
    job.refresh_from_db()
    assert job.status == "succeeded" and job.counters["pairs_created"] == duel.comparisons.count() == 3
    html = signed_in(client, lead).get("/projects/duel/data/").content.decode()
    table = html.split("data-imports>")[1].split("</table>")[0]
    assert '<th class="sl-num">New pairs</th>' in table
    cells = table.split("pairs.jsonl")[1].split("</tr>")[0]
    assert '<td class="sl-num" data-label="Solutions">6</td>' in cells
    assert '<td class="sl-num" data-label="New pairs">3</td>' in cells
    # a steps project's table has no pairs column
    project_with(lead, slug="algebra")
    assert "New pairs" not in client.get("/projects/algebra/data/").content.decode()
