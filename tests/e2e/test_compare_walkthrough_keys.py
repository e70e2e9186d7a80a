"""The compare page's keys while its key list is open (annotator walkthrough): the list is a modal
dialog, so a key pressed while reading it (trying `a` or `3` to see what it does, `q` down the
list) must not change the pair behind it, as on the step page; `?` still closes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.services.imports import import_file
from tests.compare_lines import LINES
from tests.e2e.helpers import make_project, make_user, open_workspace

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_keys_pressed_while_the_key_list_is_open_leave_the_pair_as_it_was(pages, tmp_path: Path):
    project = make_project("keyduel", name="Which is better", task_kind="compare")
    make_user("ann", project)
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    import_file(project=project, path=path)
    page = pages.page()
    open_workspace(page, "ann", slug="keyduel")
    expect(page.locator(".sl-candidate")).to_have_count(2)
    verdict = page.locator(".sl-compare-verdict")
    untouched = "Which is better? ← / a, → / b, t for a tie"
    expect(verdict).to_have_text(untouched)

    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    for key in ("a", "3", "q", "p", "t", "Backspace"):
        page.keyboard.press(key)
    expect(dialog).to_be_visible()
    page.keyboard.press("?")  # the key that opened the list closes it
    expect(dialog).to_be_hidden()
    expect(verdict).to_have_text(untouched)
    expect(page.locator(".sl-first-wrong")).to_have_count(0)
    expect(page.get_by_role("button", name="Undo")).to_be_disabled()  # nothing happened to undo

    # closed, the keys act again
    page.keyboard.press("b")
    page.keyboard.press("2")
    expect(verdict).to_have_text("B is clearly better")
