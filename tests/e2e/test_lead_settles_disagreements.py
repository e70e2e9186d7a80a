"""Findings of a lead's walkthrough (a ProcessBench slice, overlap 2, two annotators), each fixed
and checked here:

- "Where annotators disagree" offers to "reopen the solution for another label (admin)", but its
  "The solution" link opened the solution's change page, where there is no "Reopen for relabeling"
  (an action of the solutions list) and ticking "Is open" on a solution at its overlap serves it to
  no one. The link now opens the solutions list at that one solution, whose action reopens it;
- on a phone the disagreements table put each label's first error and the "Settle" links past the
  screen's right edge; each solution is now a card (as the training runs are);
- a training run's "Held-out" cell read "80 steps (too small)" beside a note that asks for 50+
  steps: the set was too small by its 9 solutions, which the cell did not say.
"""

from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotate.models import Role, Solution
from annotate.services.members import grant_lead_admin
from ml.models import TrainingRun
from tests.e2e.helpers import PAGE_WIDTHS, STEPS, cell_tops, login, make_project, make_solution, make_user, store_label

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}


def _steps(first_error: int | None) -> list[dict]:
    """A label of STEPS with its first -1 at `first_error` (None: every step +1)."""
    out = []
    for i, _ in enumerate(STEPS):
        rating = -1 if i == first_error else 1
        out.append(
            {
                "completions": [{"text": STEPS[i], "rating": rating, "flagged": False}],
                "human_completion": None,
                "chosen_completion": None if rating == -1 else 0,
            }
        )
        if rating == -1:
            break
    return out


def _disagreeing_project():
    """Overlap 2, two annotators who put the first error of one solution at different steps."""
    project = make_project("settle", name="Settle", overlap=2)
    lead = make_user("lena", project, Role.LEAD)
    grant_lead_admin(user=lead)  # as add_member does for a lead
    ann, bob = make_user("ann", project), make_user("bob", project)
    solution = make_solution(project, STEPS)
    store_label(solution, ann, _steps(1), labeler_uuid="7b4f3a52-0000-4000-8000-000000000001")
    store_label(solution, bob, _steps(2), labeler_uuid="7b4f3a52-0000-4000-8000-000000000002")
    Solution.objects.filter(pk=solution.pk).update(annotation_count=2, is_open=False)
    return project, solution


def test_the_solution_link_of_a_disagreement_opens_where_the_lead_can_reopen_it(pages, screenshot):
    _, solution = _disagreeing_project()
    page = pages.page()
    login(page, "lena", "/dashboard/settle/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    row = page.locator(f'[data-slot="disagreements"] tr[data-solution="{solution.pk}"]')
    expect(row).to_contain_text("ann: step 2")
    with page.expect_navigation():
        row.get_by_role("link", name="The solution").click()
    # the solutions list at this one solution, with the action the note names
    results = page.locator("#result_list tbody tr")
    expect(results).to_have_count(1)
    action = page.locator("select[name=action]")
    expect(action.locator("option", has_text="Reopen for relabeling")).to_have_count(1)
    results.first.locator("input.action-select").check()
    action.select_option(label="Reopen for relabeling")
    page.get_by_role("button", name="Go").click()
    expect(page.locator(".messagelist")).to_contain_text("Reopened 1 solution(s) for relabeling")
    screenshot(page, "lead-settle-reopened")
    solution.refresh_from_db()
    assert solution.is_open and solution.extra_labels == 1

    # the change page says that ticking "Is open" is not how a labeled solution gets another label
    page.goto(f"/admin/annotate/solution/{solution.pk}/change/")
    expect(page.locator(".field-is_open")).to_contain_text("Reopen for relabeling")


def test_a_disagreements_labels_and_settle_links_are_on_a_390px_screen(pages, screenshot):
    _, solution = _disagreeing_project()
    page = pages.page()
    page.set_viewport_size(PHONE)
    login(page, "lena", "/dashboard/settle/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    table = page.locator('[data-slot="disagreements"]')
    row = table.locator(f'tr[data-solution="{solution.pk}"]')
    for target in (row.get_by_text("bob: step 3"), row.get_by_role("link", name="Its labels")):
        expect(target).to_be_visible()
        box = target.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
    wrap = table.locator("xpath=..").evaluate("wrap => [wrap.scrollWidth, wrap.clientWidth]")
    assert wrap[0] <= wrap[1], wrap
    scroll_width, client_width = page.evaluate(PAGE_WIDTHS)
    assert scroll_width <= client_width
    page.locator("#quality").scroll_into_view_if_needed()
    screenshot(page, "lead-settle-disagreements-390", full_page=True)

    # at desktop size it is the table it was: a header row, a solution's cells side by side
    page.set_viewport_size({"width": 1440, "height": 900})
    expect(table.locator("thead")).to_be_visible()
    cells = row.locator("th, td")
    tops = cell_tops(cells)
    assert cells.count() == 4 and len(tops) == 1, tops


def test_a_held_out_set_too_small_by_its_solutions_says_so_in_the_runs_table(pages):
    project = make_project("heldout", name="Held-out")
    make_user("lena", project, Role.LEAD)
    heldout = {"auroc_negative": 0.6, "accuracy": 0.76, "first_error_f1": 0.4, "ece": 0.13}
    TrainingRun.objects.create(
        project=project, status="succeeded", label_count=165, is_active=True, finished_at=timezone.now(),
        metrics={"heldout": {**heldout, "n_steps": 80, "n_solutions": 9}},
    )  # fmt: skip
    page = pages.page()
    login(page, "lena", "/dashboard/heldout/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    row = page.locator('[data-slot="runs"] tbody tr').first
    expect(row).to_contain_text("80 steps, 9 solutions (too small)")
