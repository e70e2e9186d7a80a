"""Pages other than the step workspace on a phone-sized screen (420 px): the project list keeps
each project's links on screen, and a compare task puts solution B under A instead of squeezing
both into two narrow columns; LaTeX environments written without $$ are typeset."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotate.models import ImportJob, Role
from annotate.services.imports import import_file
from ml.models import TrainingRun
from tests.e2e.helpers import PAGE_WIDTHS, cell_tops, login, make_project, make_user, open_workspace, stacked_labels

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

NARROW = {"width": 420, "height": 860}


def _on_screen(locator, width: int) -> bool:
    box = locator.bounding_box()
    return box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width


def test_project_list_keeps_each_projects_links_on_a_420px_screen(pages, screenshot):
    for slug, name in (("algebra", "Algebra, round 1 with a rather long name"), ("geometry", "Geometry")):
        make_user(f"lead-{slug}", make_project(slug, name=name), Role.LEAD)
    page = pages.page()
    page.set_viewport_size(NARROW)
    login(page, "lead-algebra", "/")
    row = page.locator("tr[data-project=algebra]")
    for link in ("Label", "Dashboard", "Settings"):
        target = row.get_by_role("link", name=link, exact=True)
        expect(target).to_be_visible()
        assert _on_screen(target, NARROW["width"]), link
    scroll_width, client_width = page.evaluate(PAGE_WIDTHS)
    assert scroll_width <= client_width
    screenshot(page, "home-narrow-420")


def _line(problem: str, steps: list[str], answer: str) -> dict:
    return {"problem": problem, "ground_truth_answer": "2016", "steps": steps, "answer": answer}


def test_compare_task_stacks_the_solutions_and_typesets_align_on_a_420px_screen(pages, screenshot, tmp_path: Path):
    project = make_project("duel", name="Which is better", task_kind="compare")
    make_user("ann", project)
    align = "I have:\n\\begin{align*} a_{2k} &= r_k a_{2k-1} \\\\ a_{2k+1} &= r_k a_{2k} \\end{align*}"
    lines = [
        _line("Find $a_1$.", [align, "# Answer\n\n2016"], "2016"),
        _line("Find $a_1$.", ["Guess: $a_1 = 7$.", "# Answer\n\n7"], "7"),
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    import_file(project=project, path=path)
    page = pages.page()
    page.set_viewport_size(NARROW)
    open_workspace(page, "ann", "duel")
    candidates = page.locator(".sl-candidate")
    expect(candidates).to_have_count(2)
    first, second = candidates.nth(0).bounding_box(), candidates.nth(1).bounding_box()
    assert first and second and second["y"] >= first["y"] + first["height"], "B sits under A"
    assert first["width"] > NARROW["width"] * 0.8
    # The bare align* environment is typeset as display math, not shown as source.
    expect(page.locator(".sl-candidate .katex-display")).to_have_count(1)
    outside_math = """() => [...document.querySelectorAll('.sl-candidate')].map(c => {
        const copy = c.cloneNode(true); copy.querySelectorAll('.katex').forEach(k => k.remove());
        return copy.textContent; }).join(' ')"""
    text = page.evaluate(outside_math)
    assert "I have:" in text and "begin{align" not in text, text
    scroll_width, client_width = page.evaluate(PAGE_WIDTHS)
    assert scroll_width <= client_width
    screenshot(page, "compare-narrow-420", full_page=True)


def test_login_page_has_the_products_form_and_fits_a_420px_screen(pages, screenshot):
    make_user("ann", make_project("algebra"))
    page = pages.page()
    page.set_viewport_size(NARROW)
    page.goto("/accounts/login/?next=/")
    button = page.get_by_role("button", name="Log in")
    expect(button).to_have_class(re.compile("sl-primary"))  # was the browser's bare default button
    form = page.locator("form.sl-form").bounding_box()
    username = page.get_by_label("Username").bounding_box()
    assert form and username and username["width"] >= 0.9 * form["width"]
    page.get_by_label("Username").fill("ann")
    page.get_by_label("Password").fill("not the password")
    button.click()
    expect(page.locator(".errorlist")).to_contain_text("correct username and password")
    scroll_width, client_width = page.evaluate(PAGE_WIDTHS)
    assert scroll_width <= client_width
    screenshot(page, "login-narrow-420")


def test_members_page_keeps_remove_buttons_on_a_420px_screen(pages, screenshot):
    project = make_project("algebra")
    make_user("lena", project, Role.LEAD)
    make_user("annotator-with-a-long-name", project)
    page = pages.page()
    page.set_viewport_size(NARROW)
    login(page, "lena", "/projects/algebra/members/")
    # an open invite: its table too (no role is ticked in advance)
    page.get_by_role("region", name="Invite by link").get_by_label("Annotator").check()
    page.get_by_role("button", name="Create invite link").click()
    remove = page.get_by_role("button", name="Remove annotator-with-a-long-name")
    expect(remove).to_be_visible()
    assert _on_screen(remove, NARROW["width"])
    revoke = page.get_by_role("button", name="Revoke")
    expect(revoke).to_be_visible()
    assert _on_screen(revoke, NARROW["width"])
    scroll_width, client_width = page.evaluate(PAGE_WIDTHS)
    assert scroll_width <= client_width
    screenshot(page, "members-narrow-420", full_page=True)


def test_dashboard_fits_a_390px_screen(pages, screenshot):
    """The dashboard on a phone: no sideways scrolling of the page; four finish reasons under four
    bars had run into one word ("solutionfound errorgive up…")."""
    from tests.e2e.helpers import STEPS, make_solution, store_label

    project = make_project("bars", name="Bars")
    make_user("lena", project, Role.LEAD)
    ann = make_user("ann", project)
    steps = [{"completions": [{"text": t, "rating": 1, "flagged": False}], "human_completion": None} for t in STEPS]
    for step in steps:
        step["chosen_completion"] = 0
    store_label(make_solution(project, STEPS), ann, steps, labeler_uuid="7b4f3a52-0000-4000-8000-000000000009")
    page = pages.page()
    page.set_viewport_size({"width": 390, "height": 844})
    login(page, "lena", "/dashboard/bars/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    finish = page.locator('[data-chart="finish"]')
    finish.scroll_into_view_if_needed()
    # the page itself never scrolls sideways (wide tables scroll in their own box); the bar labels,
    # drawn on the canvas, are cut to fit (frontend/src/dashboard/charts.ts fitLabel, Vitest)
    scroll_width, client_width = page.evaluate(PAGE_WIDTHS)
    assert scroll_width <= client_width
    screenshot(page, "dashboard-narrow-390-bars", full_page=True)


def test_dashboard_runs_table_keeps_each_activate_button_on_a_390px_screen(pages, screenshot):
    """The training-runs table on a phone: its "Activate" buttons, in its last column, sat past the
    screen's right edge, reached only by scrolling the table sideways. Each run is now a card whose
    cells stack under their column names; at desktop size it is still a table."""
    project = make_project("runs", name="Runs")
    make_user("lena", project, Role.LEAD)
    now = timezone.now()
    heldout = {"auroc_negative": 0.74, "accuracy": 0.63, "first_error_f1": 0.45, "ece": 0.07, "n_steps": 1840}
    older = [
        TrainingRun.objects.create(
            project=project, status="succeeded", label_count=120 * (i + 1), metrics={"heldout": heldout},
            finished_at=now - timedelta(days=3 - i),
        )
        for i in range(2)
    ]  # fmt: skip
    TrainingRun.objects.create(
        project=project, status="succeeded", label_count=410, is_active=True, metrics={"heldout": heldout},
        finished_at=now - timedelta(hours=1),
    )  # fmt: skip
    TrainingRun.objects.create(project=project, status="failed", label_count=430, error="RuntimeError: out of memory")
    page = pages.page()
    page.set_viewport_size({"width": 390, "height": 844})
    login(page, "lena", "/dashboard/runs/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    runs = page.locator('[data-slot="runs"]')
    for run in older:  # where it is drawn, with nothing scrolled sideways (scrolling it into view would)
        button = runs.get_by_role("button", name=f"Activate run #{run.pk}")
        expect(button).to_be_visible()
        assert _on_screen(button, 390), button.bounding_box()
    # nothing in the table is reached by scrolling it (or the page) sideways
    scroll_width, client_width = (
        page.locator("[data-slot=runs]").locator("xpath=..").evaluate("wrap => [wrap.scrollWidth, wrap.clientWidth]")
    )
    assert scroll_width <= client_width
    scroll_width, client_width = page.evaluate(PAGE_WIDTHS)
    assert scroll_width <= client_width
    # each cell shown still says which column it is (CSS before it); a failed run's "—" cells are left out
    button_row = runs.locator("tbody tr").filter(has=page.get_by_role("button", name=f"Activate run #{older[0].pk}"))
    labels = stacked_labels(button_row, data_cells_only=True)
    assert labels[:2] == ['"Status"', '"Step labels"'] and labels[-3:] == ['"Held-out"', '"Finished"', '"Model"']
    failed = runs.locator("tbody tr").filter(has_text="out of memory")
    assert stacked_labels(failed, data_cells_only=True) == ['"Status"', '"Step labels"']
    page.locator("#model").scroll_into_view_if_needed()
    screenshot(page, "dashboard-narrow-390-runs", full_page=True)

    # at desktop size it is the table it was: the column names in its header, a run's cells side by side
    page.set_viewport_size({"width": 1440, "height": 900})
    expect(runs.locator("thead")).to_be_visible()
    cells = button_row.locator("th, td")
    tops = cell_tops(cells)
    assert cells.count() == 10 and len(tops) == 1, tops
    # the names only in the header, every cell shown
    assert stacked_labels(failed, data_cells_only=True) == ["none"] * 9


def test_past_imports_wrap_a_long_field_name_inside_the_card(pages, screenshot):
    """A nested field name is one long word: on an 860 px screen it ran past the card's edge, cut off."""
    project = make_project("algebra")
    lead = make_user("lena", project, Role.LEAD)
    field = "label.steps[1].completions[0].rating"
    error = {"line": 2, "field": field, "message": "must be -1, 0, 1 or null"}
    ImportJob.objects.create(
        project=project,
        requested_by=lead,
        filename="phase2.jsonl",
        status="failed",
        counters={"bad_lines": 1},
        errors=[error],
    )
    page = pages.page()
    page.set_viewport_size({"width": 860, "height": 800})
    login(page, "lena", "/projects/algebra/data/")
    cell = page.locator("[data-imports] tbody td").last
    expect(cell).to_contain_text(f"field {field}")
    scroll_width, client_width = page.locator("[data-imports-section] .sl-table-wrap").evaluate(
        "wrap => [wrap.scrollWidth, wrap.clientWidth]"
    )
    assert scroll_width <= client_width
    screenshot(page, "data-past-imports-long-field")
