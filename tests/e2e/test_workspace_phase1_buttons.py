"""Phase 1 with the mouse alone and the single-key shortcuts off: a Next step button where `n` acts
(there was none: only the key moved on), and no button naming a key that does nothing ("Critique
(e)", "Write alternative (a)" with the keys off)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotate.models import LabelingMode
from tests.e2e.helpers import (
    STEPS,
    annotation_for,
    annotator_on,
    current_step,
    expect_empty_queue,
    label_steps,
    main_ratings,
    visible_steps,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _workspace(pages, mode=LabelingMode.PHASE1):
    page, solution = annotator_on(pages, STEPS, labeling_mode=mode)
    return page, solution


def _keys_off(page):
    switch = page.get_by_role("checkbox", name="Single-key shortcuts")
    switch.click()
    expect(switch).not_to_be_checked()


def _write_alternative(page, text):
    current_step(page).get_by_role("button", name="Write alternative", exact=True).click()
    page.get_by_role("textbox", name="New alternative step").fill(text)
    current_step(page).get_by_role("button", name="Add alternative").click()


def test_phase1_labeled_and_submitted_by_mouse_with_shortcuts_off(pages, screenshot):
    page, solution = _workspace(pages)
    _keys_off(page)
    step = current_step(page)
    next_button = step.get_by_role("button", name="Next step", exact=True)
    expect(next_button).to_be_hidden()  # nothing to move on from before the step is rated

    # Step 1 Neutral: Next step shows, but cannot move on yet, and its press says why in buttons.
    step.get_by_role("button", name="Neutral").click()
    expect(next_button).to_be_visible()
    expect(next_button).to_have_attribute("aria-disabled", "true")
    next_button.click(force=True)  # aria-disabled: focusable and pressable, it explains
    expect(page.locator(".sl-notice")).to_have_text(
        "Nothing at step 1 is Positive, so Next step cannot move on yet: write your own step "
        "(Write your own step) or another alternative (Write alternative)."
    )
    expect(visible_steps(page)).to_have_count(1)

    # Two alternatives written; the first rated Positive while the second waits unrated: the step is
    # not passed (past it, nothing could rate the second, and a submit refuses it unrated), and Next
    # step says so. Once the second is rated too, the step passes by itself.
    _write_alternative(page, "Or: $x^2 = 3 \\cdot 3$.")
    _write_alternative(page, "Or: $x^2 = 6$.")
    alts = step.locator(".sl-alt")
    alts.nth(0).get_by_role("button", name="Positive").click()
    expect(visible_steps(page)).to_have_count(1)
    expect(next_button).to_have_attribute("aria-disabled", "true")
    next_button.click(force=True)
    expect(page.locator(".sl-notice")).to_have_text(
        "Rate the alternative you wrote at step 1 first; then Next step moves on."
    )
    screenshot(page, "workspace-phase1-next-step-button")
    alts.nth(1).get_by_role("button", name="Negative").click()
    expect(visible_steps(page)).to_have_count(2)
    expect(current_step(page)).to_have_attribute("aria-label", "Step 2")
    expect(next_button).to_be_hidden()

    # Step 2 Negative: your own step, typed and saved with its button.
    step = current_step(page)
    step.get_by_role("button", name="Negative").click()
    step.get_by_role("button", name="Write your own step", exact=True).click()
    page.get_by_role("textbox", name="Your own step (none here is Positive)").fill("So $x^2 = 9$, as $3 \\cdot 3 = 9$.")
    step.get_by_role("button", name="Save step").click()
    expect(visible_steps(page)).to_have_count(3)

    # Step 3 Positive moves on by itself; Submit.
    current_step(page).get_by_role("button", name="Positive").click()
    submit = page.get_by_role("button", name="Submit")
    expect(submit).to_be_enabled()
    submit.click()
    expect_empty_queue(page)

    annotation = annotation_for(solution)
    assert annotation.finish_reason == "solution"
    assert main_ratings(annotation) == [0, -1, 1]
    steps = label_steps(annotation)
    assert [(c["text"], c["rating"]) for c in steps[0]["completions"][1:]] == [
        ("Or: $x^2 = 3 \\cdot 3$.", 1),
        ("Or: $x^2 = 6$.", -1),
    ]
    assert [len(s["completions"]) for s in steps[1:]] == [1, 1]
    assert [s["human_completion"]["text"] if s["human_completion"] else None for s in steps] == [
        None,
        "So $x^2 = 9$, as $3 \\cdot 3 = 9$.",
        None,
    ]


STEP_BUTTONS_OFF = ("Critique", "Write alternative", "Write your own step", "Next step")
STEP_BUTTONS_ON = {
    "Critique (e)": "e",
    "Write alternative (a)": "a",
    "Write your own step (c)": "c",
    "Next step (n)": "n",
}


def _no_key_named(page):
    """No button of the workspace names a key or has aria-keyshortcuts."""
    names = page.locator("#sl-workspace button:visible").evaluate_all("bs => bs.map(b => b.textContent.trim())")
    assert not [n for n in names if n.endswith(")") and "(" in n and len(n.rsplit("(", 1)[1]) <= 11], names
    expect(page.locator("#sl-workspace [aria-keyshortcuts]")).to_have_count(0)


def test_step_buttons_name_their_keys_only_while_shortcuts_are_on(pages, screenshot):
    page, _ = _workspace(pages)
    step = current_step(page)
    step.get_by_role("button", name="Neutral").click()
    for name, key in STEP_BUTTONS_ON.items():
        expect(step.get_by_role("button", name=name, exact=True)).to_have_attribute("aria-keyshortcuts", key)
    expect(step.get_by_role("button", name="Positive")).to_have_attribute("aria-keyshortcuts", "3")

    _keys_off(page)
    for name in STEP_BUTTONS_OFF:
        expect(step.get_by_role("button", name=name, exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="Shortcuts", exact=True)).to_be_visible()
    _no_key_named(page)
    screenshot(page, "workspace-phase1-buttons-keys-off")

    # An alternative written with the keys off names no key either.
    _write_alternative(page, "Or: $x^2 = 6$.")
    expect(page.get_by_role("textbox", name="New alternative step").locator("..")).to_be_hidden()
    _no_key_named(page)

    # On again: the keys are back in the names and aria-keyshortcuts.
    page.get_by_role("checkbox", name="Single-key shortcuts").click()
    for name, key in STEP_BUTTONS_ON.items():
        expect(step.get_by_role("button", name=name, exact=True)).to_have_attribute("aria-keyshortcuts", key)
    expect(step.locator(".sl-alt").get_by_role("button", name="Negative")).to_have_attribute("aria-keyshortcuts", "1")
    expect(page.get_by_role("button", name="Shortcuts (?)")).to_have_attribute("aria-keyshortcuts", "?")
    expect(page.get_by_role("button", name="Undo")).to_have_attribute("aria-keyshortcuts", "Backspace")


def test_phase2_corrected_step_button_names_no_key_with_shortcuts_off(pages):
    page, _ = _workspace(pages, LabelingMode.PHASE2)
    _keys_off(page)
    step = current_step(page)
    step.get_by_role("button", name="Negative").click()
    expect(step.get_by_role("button", name="Write corrected step", exact=True)).to_be_visible()
    expect(step.get_by_role("button", name="Critique", exact=True)).to_be_visible()
    expect(step.get_by_role("button", name="Next step", exact=True)).to_be_hidden()  # phase 1 only
    _no_key_named(page)
    page.get_by_role("checkbox", name="Single-key shortcuts").click()
    expect(step.get_by_role("button", name="Write corrected step (c)")).to_have_attribute("aria-keyshortcuts", "c")
