"""Text boxes on a touch screen: the return key starts a new line (a phone has no Shift+Enter), the
box's button saves, and no hint names a key. Was (annotator walkthrough): the return key saved the
box, so a critique or a reason could not have a second line, and the hints said "Enter saves ·
Shift+Enter new line · Esc leaves" on a screen with none of those keys."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.helpers import (
    STEPS,
    annotation_for,
    current_step,
    label_steps,
    make_project,
    make_solution,
    make_user,
    open_workspace,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}


def test_on_a_phone_a_critique_takes_a_second_line_and_its_button_saves_it(pages, screenshot):
    project = make_project()
    make_user("ann", project)
    solution = make_solution(project, STEPS)
    page = pages.page(pages.context(**PHONE))
    open_workspace(page, "ann")
    expect(page.get_by_role("button", name="Shortcuts")).to_be_hidden()  # a list of keys, on a phone
    step = current_step(page)
    step.get_by_role("button", name="Negative").tap()
    step.locator(".sl-critique-open").tap()
    box = step.locator("textarea[id^=sl-critique-]")
    expect(box).to_be_focused()
    page.keyboard.type("The square of 3 is 9.")
    page.keyboard.press("Enter")  # the phone's return key
    page.keyboard.type("So the sum is 13, not 15.")
    expect(box).to_be_visible()
    expect(box).to_have_value("The square of 3 is 9.\nSo the sum is 13, not 15.")
    writer = step.locator("form.sl-writer").filter(has=page.locator("textarea[id^=sl-critique-]"))
    expect(writer.locator(".sl-keys-only")).to_have_count(1)
    expect(writer.locator(".sl-keys-only")).to_be_hidden()
    expect(writer.get_by_text("Empty removes it")).to_be_visible()
    screenshot(page, "workspace-phone-critique-two-lines")
    writer.get_by_role("button", name="Save critique").tap()
    expect(step.locator(".sl-critique-text")).to_contain_text("So the sum is 13, not 15.")

    # The give-up reason too: the return key adds a line, Confirm confirms, no key is named.
    page.get_by_role("button", name="Give up").tap()
    reason = page.get_by_label("Reason (required)")
    expect(reason).to_be_focused()
    page.keyboard.type("Step 2 is unclear.")
    page.keyboard.press("Enter")
    page.keyboard.type("I cannot tell what it means.")
    expect(reason).to_have_value("Step 2 is unclear.\nI cannot tell what it means.")
    expect(page.locator("#sl-reason-hint")).to_have_count(1)
    expect(page.locator("#sl-reason-hint")).to_be_hidden()
    page.get_by_role("button", name="Cancel").tap()

    page.get_by_role("button", name="Submit").tap()
    expect(page.get_by_role("heading", name="No more solutions to label right now")).to_be_visible()
    critique = label_steps(annotation_for(solution))[0]["completions"][0]["critique"]
    assert critique == "The square of 3 is 9.\nSo the sum is 13, not 15."
