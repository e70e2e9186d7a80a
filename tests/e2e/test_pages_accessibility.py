"""The lead's server-rendered pages for keyboard and screen-reader users, in Chromium (found by the
accessibility audit): help text a field's description points at, focus on a form post's outcome, a
skip link, named progress bars and action columns, phone rows that say what a cell is, and no
label without a control."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotate.models import Role
from tests.e2e.helpers import login, make_project, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# The texts of the elements an element's aria-describedby names; None for an id that is not there.
DESCRIPTIONS = """element => (element.getAttribute('aria-describedby') || '').split(/\\s+/).filter(Boolean)
  .map(id => { const found = document.getElementById(id); return found ? found.textContent.trim() : null; })"""
FOCUSED = "() => { const e = document.activeElement; return [e.tagName, e.name || '', e.textContent.trim()]; }"


def test_help_text_and_errors_are_what_a_field_is_described_by(pages):
    """Django pointed every field at `<id>_helptext` while the template named its help `<id>_help`:
    no field's help was ever read out."""
    project = make_project()
    make_user("lena", project, Role.LEAD)
    page = pages.page()
    login(page, "lena", "/projects/algebra/settings/")
    overlap = page.get_by_label("Overlap")
    described = overlap.evaluate(DESCRIPTIONS)
    assert described and None not in described, described
    assert "annotators" in described[0].lower(), described
    # a field without a description of its own points at nothing missing either
    for field in page.locator("main input, main select, main textarea").all():
        assert None not in field.evaluate(DESCRIPTIONS), field.evaluate("e => e.outerHTML")
    # a label names a control; a fixed value (the slug) is not a label
    unlabeled = page.evaluate(
        "() => [...document.querySelectorAll('main label')].filter(l => !l.control).map(l => l.textContent.trim())"
    )
    assert unlabeled == []
    expect(page.get_by_text("Slug", exact=True)).to_be_visible()


def test_a_form_posts_outcome_takes_the_focus(pages, screenshot):
    """After a post the page reloaded with focus at its top and the outcome unannounced: now the
    first field in error (described by its message), or what the post made, has the focus."""
    project = make_project()
    make_user("lena", project, Role.LEAD)
    page = pages.page()
    login(page, "lena", "/projects/algebra/members/")

    page.get_by_label("Username", exact=True).press("Enter")  # nothing filled in
    page.wait_for_load_state()
    assert page.evaluate(FOCUSED)[:2] == ["INPUT", "username"]
    focused = page.locator(":focus")
    assert any("required" in (text or "") for text in focused.evaluate(DESCRIPTIONS))

    invite = page.get_by_role("region", name="Invite by link")
    invite.get_by_role("button", name="Create invite link").click()  # no role ticked
    page.wait_for_load_state()
    assert page.evaluate(FOCUSED)[:2] == ["INPUT", "invite-roles"]
    group = invite.get_by_role("group", name="Roles")
    assert any("required" in (text or "") for text in group.evaluate(DESCRIPTIONS)), group.evaluate(DESCRIPTIONS)

    invite.get_by_label("Annotator").check()
    invite.get_by_role("button", name="Create invite link").click()
    page.wait_for_load_state()
    tag, _, text = page.evaluate(FOCUSED)
    assert tag == "DIV" and "Send this link now" in text
    screenshot(page, "pages-a11y-invite-link-focused")


def test_skip_link_named_progress_and_phone_rows_that_say_what_a_cell_is(pages, screenshot):
    project = make_project()
    make_user("lena", project, Role.LEAD)
    make_user("ann", project, Role.ANNOTATOR)
    page = pages.page()
    login(page, "lena", "/")
    expect(page.get_by_role("button", name="Log out")).to_be_visible()  # past the login page
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to content")
    expect(skip).to_be_focused()
    expect(skip).to_be_visible()
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.id") == "main"
    expect(page.get_by_role("progressbar", name="Algebra, round 1: 0 of 0 solutions complete")).to_have_count(1)

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/projects/algebra/members/")
    assert page.locator("table[data-members] th").last.text_content() == "Remove"  # not an empty head
    since = page.locator("tr[data-member=ann] td[data-label='Member since']")
    before = since.evaluate("e => getComputedStyle(e, '::before').content")
    assert before == '"Member since: "', before
    screenshot(page, "pages-a11y-members-phone", full_page=True)
