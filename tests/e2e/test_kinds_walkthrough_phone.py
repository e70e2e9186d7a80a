"""An agent trace on a phone (390 px), real Chromium: a tool's output with a long unbroken token
(JSON as tools answer) stays inside its step once opened; it ran 200 px past the screen, and the
whole page scrolled sideways."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.services.imports import import_file
from tests.e2e.helpers import PAGE_WIDTHS, current_step, make_project, make_user, open_workspace

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

HOURLY = json.dumps({"city": "Paris", "condition": "sunny", "hourly": list(range(1, 25))}, separators=(",", ":"))
TRACE = {
    "kind": "trace",
    "problem": "What is the weather in Paris?",
    "ground_truth_answer": "sunny",
    "steps": [
        {"type": "thought", "text": "Call the weather tool."},
        {"type": "tool_call", "text": 'get_weather({"city": "Paris"})'},
        {"type": "observation", "text": HOURLY},
        {"type": "answer", "text": "sunny"},
    ],
}


def test_a_long_tool_output_stays_on_a_phone_screen(pages, screenshot, tmp_path: Path) -> None:
    project = make_project("traces", name="Agent traces")
    make_user("ann", project)
    path = tmp_path / "trace.jsonl"
    path.write_text(json.dumps(TRACE) + "\n")
    import_file(project=project, path=path)

    page = pages.page(pages.context(viewport={"width": 390, "height": 844}))
    open_workspace(page, "ann", slug="traces")
    page.keyboard.press("3")
    page.keyboard.press("3")
    observation = page.locator(".sl-observation")
    observation.locator("summary").click()
    expect(observation.locator(".sl-observation-text")).to_have_text(HOURLY)
    expect(current_step(page)).to_contain_text("sunny")
    scroll_width, client_width = page.evaluate(PAGE_WIDTHS)
    assert scroll_width <= client_width, (scroll_width, client_width)
    text = observation.locator(".sl-observation-text")
    assert text.evaluate("e => e.scrollWidth <= e.clientWidth")  # all of it shown, none cut off
    screenshot(page, "trace-observation-phone", full_page=True)
