"""The bar after a submit (annotator walkthrough): "Submitted (1 this session)" stays on the next,
untouched pair. The next pair's first server save only stores its key, which the bar keeps quiet
about on a page just loaded, but after a submit it said "Saved" a moment later, as if work on the
new pair had been kept, and the word that the answer went through was gone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.services.imports import import_file
from tests.compare_lines import LINES
from tests.e2e.helpers import make_project, make_user, open_workspace

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_submitted_stays_in_the_bar_while_the_next_pairs_key_is_stored(pages, tmp_path: Path):
    project = make_project("barduel", name="Which is better", task_kind="compare")
    make_user("ann", project)
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    import_file(project=project, path=path)
    page = pages.page()
    page.clock.install()  # the draft saves' debounce runs when the test says, not when a busy machine does
    open_workspace(page, "ann", slug="barduel")
    expect(page.locator(".sl-candidate")).to_have_count(2)
    page.clock.pause_at(page.evaluate("Date.now()") + 1_000)

    # a quick answer: submitted before the choice's own draft save went out (the submit carries it)
    page.keyboard.press("a")
    page.keyboard.press("2")
    expect(page.locator(".sl-save")).to_have_text("Saving…")
    with page.expect_response(lambda r: r.request.method == "POST" and r.url.endswith("/submit/")):
        page.keyboard.press("Enter")
    expect(page.locator(".sl-save")).to_have_text("Submitted (1 this session)")
    expect(page.locator(".sl-compare-verdict")).to_have_text("Which is better? ← / a, → / b, t for a tie")
    # the next pair's key then goes to the server as its draft; the bar keeps the submit's word
    with page.expect_response(lambda r: r.request.method == "PUT" and r.url.endswith("/draft/")) as stored:
        page.clock.run_for(2_000)
    assert stored.value.ok
    # the save's answer is handled (its .then ran) once a later fetch of the page's own has come back
    page.evaluate("() => fetch('/api/v1/schema/', {method: 'HEAD'}).then(() => null)")
    expect(page.locator(".sl-save")).to_have_text("Submitted (1 this session)")
