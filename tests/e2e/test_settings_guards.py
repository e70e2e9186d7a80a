"""Settings a lead may not change once they would break the project, in Chromium against the live
server: the task kind of a project that has data, and the project's last lead. Screenshots go to
test-results/screenshots/settings-guard-*.png (desktop and 420 px)."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from annotate.models import AuditEvent, Membership, Project, Role, TaskKind
from tests.e2e.helpers import STEPS, login, make_project, make_solution, make_user

pytestmark = pytest.mark.django_db(transaction=True)
NARROW = {"width": 420, "height": 900}


def _sign_in(page, username: str, path: str) -> None:
    login(page, username, path)
    expect(page.get_by_role("button", name="Log out")).to_be_visible()


def test_task_kind_is_fixed_on_a_project_with_data_and_free_before(pages, screenshot):
    project = make_project("algebra")
    lena = make_user("lena", project, Role.LEAD)
    Membership.objects.create(project=make_project("empty", name="Empty"), user=lena, role=Role.LEAD)
    Membership.objects.create(project=make_project("stale", name="Stale"), user=lena, role=Role.LEAD)
    make_solution(project, STEPS)
    page = pages.page()
    _sign_in(page, "lena", "/projects/algebra/settings/")
    # A project with data shows its kind as fixed text, not a choice that would only be refused.
    expect(page.get_by_label("Task kind")).to_have_count(0)
    expect(page.locator(".sl-field", has_text="Task kind")).to_contain_text(
        "Step labels" + "Fixed: this project has data. Create a new project for the other kind."
    )
    page.get_by_label("Overlap").fill("2")
    page.get_by_role("button", name="Save settings").click()
    expect(page.get_by_text("Saved: Overlap.")).to_be_visible()
    screenshot(page, "settings-guard-task-kind", full_page=True)
    page.set_viewport_size(NARROW)
    screenshot(page, "settings-guard-task-kind-420", full_page=True)
    project.refresh_from_db()
    assert (project.task_kind, project.overlap) == (TaskKind.STEPS, 2)

    # A page opened before the first import still offers the choice: the change is refused, not dropped.
    stale = Project.objects.get(slug="stale")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto("/projects/stale/settings/")
    page.get_by_label("Task kind").select_option(TaskKind.COMPARE)
    page.get_by_label("Overlap").fill("3")
    make_solution(stale, STEPS)
    page.get_by_role("button", name="Save settings").click()
    error = page.locator(".errorlist")
    expect(error).to_contain_text("Task kind cannot change: this project already has data (Step labels).")
    expect(error).to_contain_text("Create a new project for the other kind.")
    stale.refresh_from_db()
    # Nothing of the refused form is saved, the overlap included.
    assert (stale.task_kind, stale.overlap) == (TaskKind.STEPS, 1)
    assert AuditEvent.objects.filter(action="project.settings_changed").count() == 1  # algebra's overlap

    page.goto("/projects/empty/settings/")
    page.get_by_label("Task kind").select_option(TaskKind.COMPARE)
    page.get_by_role("button", name="Save settings").click()
    # Only what changed: the untouched guidelines come back with CRLF lines and are not a change.
    expect(page.get_by_text("Saved: Task kind.")).to_be_visible()
    assert Project.objects.get(slug="empty").task_kind == TaskKind.COMPARE


def test_the_last_lead_cannot_remove_themselves_but_can_once_another_lead_exists(pages, screenshot):
    project = make_project("algebra")
    make_user("lena", project, Role.LEAD)
    otto = make_user("otto", project, Role.ANNOTATOR)
    page = pages.page()
    _sign_in(page, "lena", "/projects/algebra/members/")
    page.get_by_role("button", name="Remove lena").click()
    expect(page.get_by_text("A project needs a lead: add another lead before removing the last one.")).to_be_visible()
    page.set_viewport_size(NARROW)
    screenshot(page, "settings-guard-last-lead-420", full_page=True)
    assert Membership.objects.filter(project=project, user__username="lena", role=Role.LEAD).exists()

    Membership.objects.create(project=project, user=otto, role=Role.LEAD)
    page.goto("/projects/algebra/members/")
    page.get_by_role("button", name="Remove lena").click()
    # Every role goes at once, so the page asks first; Cancel changes nothing.
    expect(page.get_by_role("heading", name="Remove lena?")).to_be_visible()
    expect(page.get_by_text("This is you: you will no longer be able to open this project.")).to_be_visible()
    screenshot(page, "members-confirm-removal-420", full_page=True)
    page.get_by_role("link", name="Cancel").click()
    expect(page.locator("tr[data-member=lena]")).to_be_visible()
    page.get_by_role("button", name="Remove lena").click()
    expect(page.get_by_role("heading", name="Remove lena?")).to_be_visible()
    page.get_by_role("button", name="Remove lena").click()
    # No longer a member, so not sent back to the members page (it would answer 404) but home.
    expect(page.get_by_text("You left Algebra, round 1.")).to_be_visible()
    expect(page.get_by_role("heading", name="Your projects")).to_be_visible()
    assert urlparse(page.url).path == "/"
    assert set(project.memberships.values_list("user__username", flat=True)) == {"otto"}


def test_one_role_can_be_taken_from_a_member_who_holds_several(pages, screenshot):
    project = make_project("algebra")
    make_user("lena", project, Role.LEAD)
    otto = make_user("otto", project, Role.ANNOTATOR)
    Membership.objects.create(project=project, user=otto, role=Role.ML_ENGINEER)
    page = pages.page()
    _sign_in(page, "lena", "/projects/algebra/members/")
    row = page.locator("tr[data-member=otto]")
    expect(row.locator(".sl-roles li")).to_have_count(2)
    # A single role has no such button: removing it is removing the person.
    expect(page.locator("tr[data-member=lena] .sl-roles button")).to_have_count(0)
    screenshot(page, "members-roles", full_page=True)
    row.get_by_role("button", name="Remove the ML engineer role from otto").click()
    expect(page.get_by_text("otto is no longer ML engineer in algebra.")).to_be_visible()
    expect(page.locator("tr[data-member=otto] .sl-roles li")).to_have_text(["Annotator"])
    assert list(project.memberships.filter(user=otto).values_list("role", flat=True)) == [Role.ANNOTATOR]
    event = AuditEvent.objects.get(action="member.removed")
    assert event.details["roles"] == [Role.ML_ENGINEER]
