"""The pages keep working under the Content-Security-Policy, in real Chromium.

Every page is opened with a listener for `securitypolicyviolation` events and the console's
"Refused to ..." messages; the test fails on any, and checks that each page really rendered
(the workspace's first task, the dashboard's charts, Swagger UI's operations).
"""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from annotate.models import Role
from tests.e2e.helpers import login, make_project, make_solution, make_user, wait_ready

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

WATCH = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__cspViolations.push(e.violatedDirective + ' ' + (e.blockedURI || 'inline'));
});
"""


def _watched(pages):
    ctx = pages.context()
    ctx.add_init_script(WATCH)
    page = pages.page(ctx)
    console: list[str] = []
    page.on("console", lambda msg: console.append(msg.text) if "Content Security Policy" in msg.text else None)
    return page, console


def _violations(page, console: list[str]) -> list[str]:
    return list(page.evaluate("window.__cspViolations || []")) + console


def test_login_workspace_dashboard_and_docs_work_under_the_csp(pages):
    project = make_project()
    make_solution(project, ["Since $x = 3$, $x^2 = 9$.", "So $x^2 + 1 = \\frac{20}{2} = 10$."])
    make_user("ann", project, Role.ANNOTATOR)
    make_user("lena", project, Role.LEAD)

    page, console = _watched(pages)
    page.goto("/accounts/login/")
    assert "script-src 'self'" in page.evaluate(
        "fetch('/accounts/login/').then(r => r.headers.get('content-security-policy'))"
    )
    login(page, "ann", f"/annotate/{project.slug}/")
    wait_ready(page)
    expect(page.locator(".katex").first).to_be_visible()  # KaTeX rendered with its inline styles
    assert _violations(page, console) == [], "workspace"

    page, console = _watched(pages)
    login(page, "lena", f"/dashboard/{project.slug}/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    assert _violations(page, console) == [], "dashboard"

    page, console = _watched(pages)
    page.goto("/api/v1/docs/")
    expect(page.locator(".swagger-ui .opblock").first).to_be_visible()
    assert _violations(page, console) == [], "api docs"


def test_lead_pages_work_under_the_csp(pages):
    """The self-service pages' bundle, its lazy Markdown/KaTeX chunk and its styles load under the CSP."""
    project = make_project()
    make_user("lena", project, Role.LEAD)
    page, console = _watched(pages)
    login(page, "lena", f"/projects/{project.slug}/settings/")
    expect(page.locator("[data-markdown-preview] strong").first).to_be_visible()  # the lazy chunk ran
    page.get_by_label("Guidelines").fill("Math: $\\frac{1}{2}$")
    expect(page.locator("[data-markdown-preview] .katex")).to_have_count(1)
    for path in ["data", "members", "export"]:
        page.goto(f"/projects/{project.slug}/{path}/")
    page.goto("/account/token/")
    page.get_by_role("button", name="Create token").click()
    expect(page.locator("[data-token]")).to_be_visible()
    page.goto("/no-such-page/")
    assert _violations(page, console) == [], "lead pages"
