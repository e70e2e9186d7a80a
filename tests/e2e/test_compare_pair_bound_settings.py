"""A compare project's pair bound (Project.pairs_per_problem) on the new-project and Settings pages,
in Chromium against the live server. It was set only in the admin or by `import_prm800k
--pairs-per-problem`. Shown for compare projects only, checked (a whole number from 1 to 1,000, the
error naming the field) and audited as any settings change. Screenshots:
test-results/screenshots/pair-bound-*.png (desktop and 390 px)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from annotate.models import AuditEvent, Project, Role, TaskKind
from annotate.services.projects import PROJECT_CREATORS
from tests.e2e.helpers import STEPS, login, make_project, make_solution, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
PHONE = {"width": 390, "height": 844}
ERROR = "Pairs per problem must be a whole number from 1 to 1,000."


def _sign_in(page, username: str, path: str) -> None:
    login(page, username, path)
    expect(page.get_by_role("button", name="Log out")).to_be_visible()


def test_a_new_compare_project_is_made_with_the_bound_typed_and_a_steps_one_keeps_the_default(pages, screenshot):
    creator = make_user("carol")
    creator.groups.add(Group.objects.get_or_create(name=PROJECT_CREATORS)[0])
    page = pages.page()
    _sign_in(page, "carol", "/projects/new/")
    bound = page.get_by_label("Pairs per problem")
    expect(bound).to_be_hidden()  # Steps is the kind chosen first
    page.get_by_label("Task kind").select_option("compare")
    expect(bound).to_be_visible()
    expect(bound).to_have_value("3")
    page.get_by_label("Name").fill("Duel of solutions")
    bound.fill("0")
    page.get_by_role("button", name="Create project").click()
    # refused, the field shown with its error (Compare still chosen), nothing made
    expect(page.locator(".sl-field", has=page.get_by_label("Pairs per problem"))).to_contain_text(ERROR)
    assert not Project.objects.exists()
    bound = page.get_by_label("Pairs per problem")
    expect(bound).to_be_visible()
    bound.fill("5")
    screenshot(page, "pair-bound-new", full_page=True)
    page.get_by_role("button", name="Create project").click()
    page.wait_for_url("**/projects/duel-of-solutions/data/")
    made = Project.objects.get(slug="duel-of-solutions")
    assert (made.task_kind, made.pairs_per_problem) == (TaskKind.COMPARE, 5)
    assert AuditEvent.objects.get(action="project.created").details["pairs_per_problem"] == 5

    # typed while Compare was chosen, then Steps: hidden, neither refused nor stored
    page.goto("/projects/new/")
    page.get_by_label("Task kind").select_option("compare")
    page.get_by_label("Pairs per problem").fill("-2")
    page.get_by_label("Task kind").select_option("steps")
    expect(page.get_by_label("Pairs per problem")).to_be_hidden()
    page.get_by_label("Name").fill("Step round")
    page.get_by_role("button", name="Create project").click()
    page.wait_for_url("**/projects/step-round/data/")
    assert Project.objects.get(slug="step-round").pairs_per_problem == 3


def test_a_compare_projects_settings_change_the_bound_checked_and_audited(pages, screenshot):
    duel = make_project("duel", name="Duel", task_kind=TaskKind.COMPARE)
    make_solution(duel, STEPS)  # data: the kind is fixed, the bound stays editable
    steps = make_project("algebra")
    make_solution(steps, STEPS)
    lena = make_user("lena", duel, Role.LEAD)
    steps.memberships.create(user=lena, role=Role.LEAD)
    page = pages.page()
    _sign_in(page, "lena", "/projects/duel/settings/")
    bound = page.get_by_label("Pairs per problem")
    expect(bound).to_be_visible()
    expect(bound).to_have_value("3")
    for wrong in ("0", "2.5", "1001"):
        page.get_by_label("Pairs per problem").fill(wrong)
        page.get_by_role("button", name="Save settings").click()
        expect(page.locator(".sl-field", has=page.get_by_label("Pairs per problem"))).to_contain_text(ERROR)
    assert Project.objects.get(pk=duel.pk).pairs_per_problem == 3
    assert not AuditEvent.objects.filter(action="project.settings_changed").exists()

    page.get_by_label("Pairs per problem").fill("2")
    page.get_by_role("button", name="Save settings").click()
    expect(page.get_by_text("Saved: Pairs per problem.")).to_be_visible()
    expect(page.get_by_label("Pairs per problem")).to_have_value("2")
    screenshot(page, "pair-bound-settings", full_page=True)
    page.set_viewport_size(PHONE)
    screenshot(page, "pair-bound-settings-390", full_page=True)
    assert Project.objects.get(pk=duel.pk).pairs_per_problem == 2
    event = AuditEvent.objects.get(action="project.settings_changed")
    assert event.actor == lena and event.details["changes"] == {"pairs_per_problem": [3, 2]}

    # a steps project makes no pairs: its settings page has no bound
    page.goto("/projects/algebra/settings/")
    expect(page.get_by_label("Overlap")).to_be_visible()
    expect(page.get_by_label("Pairs per problem")).to_have_count(0)
