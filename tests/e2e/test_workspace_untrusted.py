"""Untrusted text in the workspace (steps, problem, answer, guidelines) shows as text in real
Chromium and runs nothing.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.helpers import make_project, make_solution, make_user, open_workspace

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_untrusted_text_shows_as_text_and_runs_nothing(pages, screenshot):
    project = make_project(guidelines="<img src=x onerror=alert(3)> [click](javascript:alert(4))")
    make_user("ann", project)
    make_solution(
        project,
        [
            "Look: <img src=x onerror=alert(1)> and <script>alert(2)</script>",
            "Then $\\href{javascript:alert(1)}{x}$ and $\\htmlClass{evil}{y}$ and [z](javascript:alert(5)).",
            "Done.",
        ],
        problem="<b onmouseover=alert(6)>Bold?</b> $\\url{javascript:alert(7)}$",
        answer="<img src=y onerror=alert(8)>",
    )
    page = pages.page()
    open_workspace(page, "ann")
    first = page.locator(".sl-step").first.locator(".sl-step-text")
    expect(first).to_contain_text("<img src=x onerror=alert(1)>")
    expect(first).to_contain_text("<script>alert(2)</script>")
    page.keyboard.press("3")
    second = page.locator(".sl-step").nth(1)
    expect(second).to_be_visible()
    expect(second.locator(".katex").first).to_be_visible()
    second.hover()
    page.locator(".sl-problem-text").hover()
    page.wait_for_timeout(300)  # give any injected handler time to fire

    workspace = page.locator("#sl-workspace")
    assert workspace.locator("img, script:not([type='application/json']), iframe, object, embed").count() == 0
    assert workspace.locator("a[href^='javascript']").count() == 0
    assert workspace.locator(".evil, [onerror], [onmouseover]").count() == 0
    expect(page.locator(".sl-gt")).to_contain_text("<img src=y onerror=alert(8)>")
    expect(page.locator(".sl-guidelines")).to_contain_text("<img src=x onerror=alert(3)>")
    screenshot(page, "workspace-untrusted-text")
    # `pages` fails the test on any dialog (alert) or uncaught page error.
