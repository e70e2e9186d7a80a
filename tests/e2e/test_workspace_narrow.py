"""The workspace on a phone-sized screen (420 px): long math, long words and tables fit without the
page scrolling sideways; what is wider than the screen scrolls inside its own box."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from annotate.models import Membership, Role
from annotate.services.imports import import_file
from tests.e2e.helpers import current_step, expect_rated, make_project, make_solution, make_user, open_workspace

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

NARROW = {"width": 420, "height": 860}
LONG_DISPLAY = (
    "Expanding, $$\\left(x_1 + x_2 + x_3 + x_4 + x_5 + x_6 + x_7 + x_8 + x_9 + x_{10}\\right)^2"
    " = \\sum_{i=1}^{10} x_i^2 + 2\\sum_{1 \\le i < j \\le 10} x_i x_j = 1234567890123456789$$"
)
LONG_INLINE = (
    "and inline $\\dfrac{a_1 + a_2 + a_3 + a_4 + a_5 + a_6 + a_7 + a_8 + a_9 + a_{10} + a_{11} + a_{12}}"
    "{b_1 + b_2 + b_3 + b_4 + b_5 + b_6 + b_7 + b_8 + b_9 + b_{10} + b_{11} + b_{12}}$ too."
)
LONG_WORD = "Supercalifragilisticexpialidocious" * 4 + " https://example.org/" + "a" * 120
# A table of many columns (wider than the screen even wrapped) and a cell of long text.
TABLE = (
    "| "
    + " | ".join(f"n{i}" for i in range(16))
    + " |\n|"
    + "---|" * 16
    + "\n| "
    + " | ".join(str(100000 + i) for i in range(16))
    + " |\n| "
    + "long note " * 12
    + " |"
    + " |" * 15
)
LONG_PROBLEM = (
    "Let $$f(x) = x^{12} + 3x^{11} + 5x^{10} + 7x^9 + 11x^8 + 13x^7 + 17x^6 + 19x^5 + 23x^4 + 29x^3 + 31x^2 + 37x$$"
    " Find $f(1)$. " + "Pneumonoultramicroscopicsilicovolcanoconiosis" * 3
)
PAGE_WIDTHS = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
# For the failure message: elements past the right edge (those inside a scroll box are expected).
OVERFLOWING = """() => [...document.querySelectorAll('body *')]
    .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
    .slice(0, 10).map(e => `${e.tagName}.${e.className}`)"""
SCROLLS_INSIDE = "e => e.scrollWidth > e.clientWidth && getComputedStyle(e).overflowX === 'auto'"


def test_workspace_fits_a_420px_screen(pages, screenshot):
    project = make_project(name="Algebra with a very long project name that must wrap " + "x" * 60)
    make_user("ann", project)
    make_solution(
        project, [LONG_DISPLAY, LONG_INLINE, LONG_WORD, TABLE, "# Answer\n\n" + "9" * 80], problem=LONG_PROBLEM
    )
    page = pages.page()
    page.set_viewport_size(NARROW)
    open_workspace(page, "ann")
    expect(page.locator(".sl-step .katex")).not_to_have_count(0)  # typeset, not shown as source
    for _ in range(5):
        page.keyboard.press("3")
    expect_rated(page, 5)

    page.evaluate("window.scrollTo(0, 0)")
    screenshot(page, "workspace-narrow-420", full_page=True)
    scroll_width, client_width = page.evaluate(PAGE_WIDTHS)
    assert client_width == NARROW["width"]
    assert scroll_width <= client_width, page.evaluate(OVERFLOWING)
    for box in page.locator(".sl-problem, .sl-step, .sl-bar, .sl-side section").all():
        bounds = box.bounding_box()
        assert bounds is not None and bounds["x"] >= 0 and bounds["x"] + bounds["width"] <= client_width
    # The wide parts are not cut off: they scroll within their own box.
    steps = page.locator(".sl-step")
    assert steps.nth(0).locator(".katex-display").evaluate(SCROLLS_INSIDE)
    assert steps.nth(1).locator(".sl-step-text").evaluate(SCROLLS_INSIDE)
    assert steps.nth(3).locator("table").evaluate(SCROLLS_INSIDE)
    # Every action of the bar is on screen.
    for name in ("Skip", "Give up", "Bad problem", "Submit"):
        box = page.get_by_role("button", name=name, exact=True).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= client_width, name


@pytest.mark.parametrize(
    "screen",
    [
        {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True},
        {"viewport": {"width": 1024, "height": 700}},
    ],
    ids=["phone", "1024px"],
)
def test_the_current_step_stays_clear_of_the_sticky_bar(pages, screenshot, screen):
    """The bar wraps to two or three rows below desktop width; focus scrolled the current step's
    first lines under it (undo moves focus up the page)."""
    project = make_project()
    make_user("ann", project)
    make_solution(project, [f"Step {i}: " + "a long line of reasoning " * 12 for i in range(8)])
    ctx = pages.context(**screen)
    page = pages.page(ctx)
    open_workspace(page, "ann")
    for n in range(1, 7):
        page.keyboard.press("3")
        expect_rated(page, n)
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    for n in (5, 4):  # undo: focus goes back up the page, to a step above the view
        page.keyboard.press("Backspace")
        expect_rated(page, n)
    bar = page.locator(".sl-bar").bounding_box()
    step = page.locator(".sl-step.sl-current").bounding_box()
    assert bar is not None and step is not None
    assert step["y"] >= bar["y"] + bar["height"] - 1, (step, bar)  # its first line below the bar, not under it
    if screen.get("has_touch"):
        expect(page.locator(".sl-keys-hint")).to_be_hidden()  # no keys on a touch screen
        screenshot(page, "workspace-phone-current-step")


def test_at_200_percent_zoom_the_bar_scrolls_away_and_the_critique_box_shows(pages, screenshot):
    """A 1280 x 900 window at 200% zoom is 640 x 450 CSS pixels: the sticky bar, wrapped, covered a
    quarter of it and the step whose critique was being typed."""
    project = make_project()
    make_user("ann", project)
    make_solution(project, [f"Step {i}: " + "a long line of reasoning " * 12 for i in range(4)])
    page = pages.page(pages.context(viewport={"width": 640, "height": 450}, device_scale_factor=2))
    open_workspace(page, "ann")
    page.keyboard.press("3")
    page.keyboard.press("1")
    page.keyboard.press("e")
    box = page.locator("#sl-critique-1")
    expect(box).to_be_focused()
    assert page.locator(".sl-bar").evaluate("el => getComputedStyle(el).position") == "static"
    page.keyboard.type("The second step drops a sign.")
    bar = page.locator(".sl-bar").bounding_box()
    where = box.bounding_box()
    assert bar is not None and where is not None
    assert bar["y"] + bar["height"] <= where["y"] or bar["y"] >= where["y"] + where["height"], (bar, where)
    screenshot(page, "workspace-zoom-200-critique")


PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}


def test_on_a_touch_screen_no_text_names_a_key(pages, screenshot, tmp_path):
    """A phone has no keys to press: the key list was hidden there, but the guidance still said
    "press Enter to submit ... (a to write one)", the buttons read "Critique (e)" with 1 / 2 / 3
    badges, and the compare page "Which is better? ← / a, → / b" and "Submit (Enter)". The keys
    themselves still act (a keyboard may be attached)."""
    project = make_project()
    user = make_user("ann", project)
    make_solution(project, ["$x = 3$.", "So $x^2 = 9$.", "# Answer\n\n10"])
    page = pages.page(pages.context(**PHONE))
    open_workspace(page, "ann")
    current = page.locator(".sl-step.sl-current")
    expect(current.get_by_role("button", name="Positive", exact=True)).to_be_visible()
    expect(page.locator(".sl-step kbd:visible")).to_have_count(0)
    # the list of keys is hidden there, and so is its button (annotator walkthrough)
    expect(page.get_by_role("button", name="Shortcuts", exact=True)).to_be_hidden()
    current.get_by_role("button", name="Positive").tap()
    page.keyboard.press("1")  # an attached keyboard still rates
    expect_rated(page, 2)
    expect(page.locator(".sl-step.sl-error").get_by_role("button", name="Critique", exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="Write alternative", exact=True)).to_be_visible()
    text = page.locator("#sl-workspace").inner_text()
    for key_words in ("press Enter", "(a to", "(c)", "(e)", "1/2/3", "Shortcuts (?)"):
        assert key_words not in text, key_words
    screenshot(page, "workspace-phone-no-keys-named", full_page=True)

    duel = make_project("tapduel2", name="Which is better", task_kind="compare")
    Membership.objects.create(project=duel, user=user, role=Role.ANNOTATOR)
    lines = [
        {"problem": "Solve $2x = 10$.", "ground_truth_answer": "5", "steps": [s], "answer": a}
        for s, a in (("Divide by 2: $x = 5$.", "5"), ("Subtract 2: $x = 8$.", "8"))
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    import_file(project=duel, path=path)
    page.goto("/annotate/tapduel2/")
    expect(page.locator(".sl-candidate")).to_have_count(2)
    expect(page.locator(".sl-compare-verdict")).to_have_text("Which is better? A, B or a tie")
    expect(page.get_by_role("button", name="Submit", exact=True)).to_be_visible()
    expect(page.locator(".sl-compare-choices kbd:visible")).to_have_count(0)
    page.get_by_role("button", name="B is better").tap()
    expect(page.locator(".sl-compare-verdict")).to_have_text("B is better: by how much? slightly, clearly or much")


def test_tapping_an_earlier_steps_flag_on_a_phone_keeps_it_in_view(pages):
    """A tap on the Flag of a step rated earlier moved focus back to the step being rated and
    scrolled there: the page jumped a screen away and the flag just set was out of sight. Focus
    still goes back to that step (Enter then submits, as before), but the page stays put."""
    project = make_project()
    make_user("ann", project)
    steps = [f"Step number {i}: $x_{{{i}}} = {i}$, a line long enough to wrap on a phone, or nearly." for i in range(8)]
    make_solution(project, steps)
    page = pages.page(pages.context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True))
    open_workspace(page, "ann")
    for _ in range(7):
        page.locator(".sl-step.sl-current > .sl-rate-group .sl-pos").tap()
    expect_rated(page, 7)
    first = page.locator(".sl-step").first
    first.scroll_into_view_if_needed()
    flag = first.locator(":scope > .sl-rate-group .sl-flag")
    before = page.evaluate("() => scrollY")
    flag.tap()
    expect(flag).to_have_attribute("aria-pressed", "true")
    expect(current_step(page)).to_be_focused()
    expect(page.locator(".sl-keynews")).to_have_text("Step 1 flagged as unsure.")
    assert page.evaluate("() => scrollY") == before
    expect(flag).to_be_in_viewport()
