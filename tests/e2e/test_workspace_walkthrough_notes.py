"""The workspace's notes say what the keys would really do, in real Chromium: what Backspace would
undo, a saved step's button, one message for a refused submit, counts on a trace, notes that go
once the annotator acts, phase 1 explained, and ratings lost to an expired claim named."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from annotate.models import LabelingMode, Membership, Role
from annotate.services.imports import import_file
from tests.e2e.helpers import (
    STEPS,
    annotation_for,
    annotator_on,
    expect_empty_queue,
    label_steps,
    login,
    make_project,
    make_solution,
    make_user,
    open_workspace,
    store_label,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_rated_step_says_what_backspace_would_undo(pages, screenshot):
    """Backspace undoes the last change: after a corrected step that is the step, not the rating
    the note named, so "undoes that rating" led the annotator to lose the corrected step."""
    page, solution = annotator_on(pages, STEPS)
    note = page.locator(".sl-notice")

    page.keyboard.press("1")
    page.keyboard.press("a")
    page.keyboard.type("So $x^2 = 9$.")
    page.keyboard.press("Enter")
    page.keyboard.press("c")
    page.keyboard.type("Since $3^2 = 9$, $x^2 = 9$.")
    page.keyboard.press("Enter")
    page.keyboard.press("3")
    # the alternative waits for its rating: the note says how to reach it, not Backspace
    expect(note).to_have_text(
        "Step 1 is rated already; alternative 1 waits for a rating: move to it with ↓ / j, then rate it."
    )
    screenshot(page, "workspace-note-alternative-waits")
    page.keyboard.press("j")
    page.keyboard.press("3")
    page.keyboard.press("k")
    page.keyboard.press("3")
    expect(note).to_have_text(
        "Step 1 is rated already. Backspace undoes your last change first "
        "(your rating of alternative 1 at step 1), not the rating."
    )
    screenshot(page, "workspace-note-backspace-undoes")
    page.keyboard.press("Enter")
    expect_empty_queue(page)
    steps = label_steps(annotation_for(solution))
    assert steps[0]["human_completion"]["text"] == "Since $3^2 = 9$, $x^2 = 9$."
    assert steps[0]["completions"][1] == {"text": "So $x^2 = 9$.", "rating": 1, "flagged": False}


def test_a_saved_step_s_button_does_not_say_not_saved(pages, screenshot):
    """Enter saves the box's text: its button reads "Write …" at once, and the draft keeps no copy
    of the text as still being typed (a reload reopened the box with it)."""
    project = make_project()
    make_user("ann", project)
    make_solution(project, STEPS)
    page = pages.page()
    open_workspace(page, "ann")
    write_alt = page.locator(".sl-current .sl-writer-open button").nth(0)
    write_human = page.locator(".sl-current .sl-writer-open button").nth(1)

    page.keyboard.press("1")
    page.keyboard.press("a")
    page.keyboard.type("So $x^2 = 9$.")
    page.keyboard.press("Enter")
    expect(write_alt).to_have_text("Write alternative (a)")
    page.keyboard.press("c")
    page.keyboard.type("Since $3^2 = 9$, $x^2 = 9$.")
    page.keyboard.press("Enter")
    expect(write_human).to_have_text("Write corrected step (c)")
    expect(write_alt).to_have_text("Write alternative (a)")
    screenshot(page, "workspace-saved-step-buttons")
    typing = page.evaluate(
        "() => Object.keys(localStorage).filter((k) => k.startsWith('steplabel:draft:'))"
        ".map((k) => JSON.parse(localStorage.getItem(k)).typing)"
    )
    assert typing == [{}]
    # Esc with text in the box still keeps it, and the button says so
    page.keyboard.press("a")
    page.keyboard.type("unfinished")
    page.keyboard.press("Escape")
    expect(write_alt).to_have_text("Finish alternative (not saved) (a)")


TRACE = {
    "kind": "trace",
    "problem": "How many days are there between 2024-02-27 and 2024-03-02?",
    "steps": [
        {"type": "thought", "text": "I will count with the calendar tool."},
        {"type": "tool_call", "text": 'days_between({"start": "2024-02-27", "end": "2024-03-02"})'},
        {"type": "observation", "text": '{"days": 4}'},
        {"type": "thought", "text": "The tool says 4."},
        {"type": "answer", "text": "There are **4** days between them."},
    ],
}


def test_a_trace_counts_only_the_steps_it_rates(pages, screenshot, tmp_path):
    """Was: "All 5 steps rated" after 4 ratings, the observation (shown, not rated) counted too."""
    project = make_project("agents", name="Agent traces")
    make_user("ann", project)
    line = tmp_path / "trace.jsonl"
    line.write_text(json.dumps(TRACE) + "\n")
    import_file(project=project, path=line)
    page = pages.page()
    open_workspace(page, "ann", slug="agents")
    position = page.locator(".sl-position")

    page.keyboard.press("3")
    page.keyboard.press("3")
    expect(position).to_have_text("Step 4 of 5 · 2 of 4 rated")
    page.keyboard.press("3")
    page.keyboard.press("3")
    expect(position).to_have_text("All 4 steps to rate are rated")
    screenshot(page, "workspace-trace-all-rated")


def test_a_status_note_goes_once_the_annotator_acts_on_the_next_solution(pages, screenshot):
    """Was: "Submitted. Here is the next solution." stayed on screen through the next ratings."""
    project = make_project()
    make_user("ann", project)
    for _ in range(3):
        make_solution(project, STEPS)
    page = pages.page()
    open_workspace(page, "ann")
    note = page.locator(".sl-notice")

    for key in ("3", "3", "3", "Enter"):
        page.keyboard.press(key)
    expect(note).to_have_text("Submitted. Here is the next solution.")
    page.keyboard.press("3")
    expect(note).to_have_text("")
    page.keyboard.press("g")
    page.keyboard.type("I cannot follow it.")
    page.keyboard.press("Enter")
    expect(note).to_have_text("Given up: recorded with your reason. Here is the next solution.")
    page.keyboard.press("2")
    expect(note).to_have_text("")
    for key in ("3", "3", "3"):
        page.keyboard.press(key)
    expect(note).to_have_text("Nothing is left to rate: press Enter to submit.")
    page.keyboard.press("Backspace")  # an undo is acting too
    expect(note).to_have_text("")
    screenshot(page, "workspace-note-cleared")


def test_the_home_page_on_a_phone_names_one_label_in_the_singular(pages, screenshot):
    """Was: "1 labels" (a CSS " labels" after every count, the column heads hidden on a phone)."""
    project = make_project()
    ann = make_user("ann", project)
    steps = [{"completions": [{"text": t, "rating": 1, "flagged": False}], "human_completion": None} for t in STEPS]
    store_label(make_solution(project, STEPS), ann, steps, labeler_uuid="7b4f3a52-0000-4000-8000-00000000000a")
    Membership.objects.create(project=make_project("geometry", name="Geometry"), user=ann, role=Role.ANNOTATOR)
    page = pages.page()
    page.set_viewport_size({"width": 420, "height": 860})
    login(page, "ann", "/")
    expect(page.locator("tr[data-project=algebra] td.sl-num")).to_have_text("1 label")
    expect(page.locator("tr[data-project=geometry] td.sl-num")).to_have_text("0 labels")
    screenshot(page, "home-narrow-one-label")
    page.set_viewport_size({"width": 1440, "height": 900})  # the column head names the unit there
    expect(page.locator("tr[data-project=algebra] td.sl-num")).to_have_text("1", use_inner_text=True)


def test_phase_1_is_explained_with_its_keys_and_n_says_why_it_waits(pages, screenshot):
    """Was: nothing said the project is in phase 1, the Keys panel listed neither n, c nor a, and n
    on a Neutral step did nothing but repeat the footer's hint."""
    project = make_project(labeling_mode=LabelingMode.PHASE1)
    make_user("ann", project)
    make_solution(project, STEPS)
    page = pages.page()
    open_workspace(page, "ann")
    expect(page.locator(".sl-mode-note")).to_have_text(
        "Phase 1: rate each step and the alternatives offered with it. Where none of them is Positive, write the "
        "step yourself (c) or another alternative (a) and rate it; n goes on to the next step once something here "
        "is Positive."
    )
    keys = page.locator(".sl-keys-hint")
    for hint in ("a Alternative", "c Your own step", "n Next step"):
        expect(keys).to_contain_text(hint)
    page.keyboard.press("2")
    page.keyboard.press("n")
    expect(page.locator(".sl-notice")).to_have_text(
        "Nothing at step 1 is Positive, so n cannot move on yet: write your own step (c) or another alternative (a)."
    )
    screenshot(page, "workspace-phase1-explained")
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_contain_text("Write your own step where nothing is Positive")
    screenshot(page, "workspace-phase1-shortcuts")


def test_phase_2_lists_no_phase_1_key(pages):
    project = make_project()
    make_user("ann", project)
    make_solution(project, STEPS)
    page = pages.page()
    open_workspace(page, "ann")
    expect(page.locator(".sl-mode-note")).to_be_hidden()
    expect(page.locator(".sl-keys-hint")).not_to_contain_text("Next step")
    page.keyboard.press("n")
    expect(page.locator(".sl-notice")).to_have_text(
        "n is a phase 1 key: in this project rating a step moves on by itself."
    )
