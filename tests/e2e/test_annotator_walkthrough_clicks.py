"""Defects a second annotator's walkthrough in Chromium found: a click on the problem's text (or the
side panel) while reading put focus on the page's <main>, the skip link's target (tabindex=-1), and
every single-key shortcut then did nothing, silently, until a step or a button was clicked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.services.imports import import_file
from tests.e2e.helpers import annotator_on, expect_rated, make_project, make_user, open_workspace

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_keys_still_rate_after_a_click_on_the_problem_text_or_the_side_panel(pages):
    page, _ = annotator_on(pages)
    page.locator(".sl-problem-text").click()
    assert page.evaluate("document.activeElement.tagName") == "MAIN"
    page.keyboard.press("3")
    expect_rated(page, 1)
    page.locator(".sl-side").click(position={"x": 5, "y": 5})
    page.keyboard.press("2")
    expect_rated(page, 2)
    page.keyboard.press("Backspace")
    expect_rated(page, 1)
    page.keyboard.press("3")
    page.keyboard.press("3")
    expect_rated(page, 3)
    # Enter is no submit there, as with focus on nothing: a click's place, not the Submit button
    page.locator(".sl-problem-text").click()
    page.keyboard.press("Enter")
    page.wait_for_timeout(300)
    expect(page.locator(".sl-problem-text")).to_contain_text("what is")
    expect_rated(page, 3)


def test_compare_keys_still_act_after_a_click_on_the_problem_text(pages, tmp_path: Path):
    project = make_project("duel", name="Which is better", task_kind="compare")
    make_user("ann", project)
    lines = [
        {"problem": "Solve $2x = 10$.", "ground_truth_answer": "5", "steps": ["Divide by 2: $x = 5$."]},
        {"problem": "Solve $2x = 10$.", "ground_truth_answer": "5", "steps": ["Subtract 2: $x = 8$."]},
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    import_file(project=project, path=path)
    page = pages.page()
    open_workspace(page, "ann", slug="duel")
    page.locator(".sl-problem-text").click()
    assert page.evaluate("document.activeElement.tagName") == "MAIN"
    page.keyboard.press("a")
    expect(page.locator(".sl-compare-verdict")).to_contain_text("A is better")
