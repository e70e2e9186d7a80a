"""The lead's and ML engineer's path through the browser, in Chromium against the live server.

A project creator makes a project, imports a file (a real Celery worker runs import jobs), adds an
annotator who then labels in the workspace; a bad file shows its line errors and changes nothing;
an ML engineer makes a token on /account/token/ and pulls an export with it; an annotator is
refused every lead page. Screenshots (1440x900, and 1280x800 for the laptop check) go to
test-results/screenshots/self-service-*.png.
"""

from __future__ import annotations

import gzip
import json
import re
import urllib.request
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect
from rest_framework.authtoken.models import Token

from annotate.models import (
    Annotation,
    AuditEvent,
    ImportJob,
    Invite,
    Membership,
    Problem,
    Project,
    Role,
    Solution,
    TaskKind,
)
from annotate.services.projects import PROJECT_CREATORS
from tests.celery_worker import celery_worker, purge_broker, wait_for
from tests.e2e.helpers import PASSWORD, STEPS, login, make_project, make_solution, make_user, store_label, wait_ready

pytestmark = pytest.mark.django_db(transaction=True)

DEMO = Path(__file__).resolve().parents[2] / "annotate" / "demo" / "demo_solutions.jsonl"
LAPTOP = {"width": 1280, "height": 800}


def _creator(name: str = "carol"):
    user = make_user(name)
    user.groups.add(Group.objects.get_or_create(name=PROJECT_CREATORS)[0])
    return user


def _sign_in(page, username: str, path: str) -> None:
    """Log in and wait until the page after the login form is shown (helpers.login's URL glob also
    matches the login page's own ?next=... URL)."""
    login(page, username, path)
    expect(page.get_by_role("button", name="Log out")).to_be_visible()


def _sign_in_home(page, username: str) -> None:
    _sign_in(page, username, "/")


def _label_current_solution(page) -> None:
    """Rate steps Positive until the solution can be submitted, then submit."""
    submit = page.get_by_role("button", name="Submit")
    for _ in range(30):
        if submit.is_enabled():
            break
        page.keyboard.press("3")
        page.wait_for_timeout(50)
    expect(submit).to_be_enabled()
    page.keyboard.press("Enter")


def test_creator_makes_a_project_imports_a_file_and_adds_an_annotator_who_labels(pages, screenshot):
    _creator()
    make_user("ann")
    purge_broker()
    page = pages.page()
    _sign_in_home(page, "carol")
    expect(page.get_by_role("heading", name="Your projects")).to_be_visible()
    screenshot(page, "self-service-home-creator-empty")
    page.get_by_role("link", name="Create project").click()
    page.wait_for_url("**/projects/new/")

    page.get_by_label("Name").fill("Algebra, round 2")
    expect(page.get_by_label("Slug")).to_have_value("algebra-round-2")  # suggested from the name
    # Only the kinds that exist are offered.
    kinds = page.get_by_label("Task kind").locator("option").evaluate_all("els => els.map(e => e.value)")
    assert kinds == [value for value, _ in TaskKind.choices]
    page.get_by_label("Overlap").fill("2")
    page.get_by_label("QC rate").fill("0.05")
    page.get_by_label("Selection strategy").select_option("uncertainty")
    page.get_by_label("Auto-retrain threshold").fill("200")
    page.get_by_label("Guidelines").fill(
        "# How to rate\n- **Positive**: correct, e.g. $\\frac{1}{2} + \\frac{1}{2} = 1$."
    )
    preview = page.locator("[data-markdown-preview]")
    expect(preview.locator("h3")).to_have_text("How to rate")  # the typed text; # is an h3 under the h2
    expect(preview).to_contain_text("correct, e.g.")
    expect(preview.locator(".katex")).to_have_count(1)
    screenshot(page, "self-service-new-project", full_page=True)
    page.get_by_role("button", name="Create project").click()

    page.wait_for_url("**/projects/algebra-round-2/data/")
    expect(page.get_by_text("You are its lead")).to_be_visible()
    project = Project.objects.get(slug="algebra-round-2")
    assert (project.overlap, project.qc_rate, project.selection_strategy, project.retrain_every) == (
        2,
        0.05,
        "uncertainty",
        200,
    )

    with celery_worker(queues="default"):
        page.locator("input[type=file]").set_input_files(str(DEMO))
        page.get_by_role("button", name="Import").click()
        expect(page.locator("[data-import-status]")).to_contain_text("Imported 14 solutions", timeout=60_000)
    screenshot(page, "self-service-data-imported")
    assert Solution.objects.filter(project=project).count() == 14
    row = page.locator("[data-imports] tbody tr").first  # the list refreshes when the job ends
    expect(row).to_contain_text("carol")
    expect(row).to_contain_text("demo_solutions.jsonl")
    expect(row).to_contain_text("Succeeded")
    expect(row.locator("td").nth(4)).to_have_text("14")
    screenshot(page, "self-service-data", full_page=True)

    page.get_by_role("link", name="Members").click()
    add = page.get_by_role("region", name="Add a member")
    add.get_by_label("Username").fill("ann")
    expect(add.get_by_label("Annotator")).not_to_be_checked()  # the lead chooses every role
    add.get_by_label("Annotator").check()
    add.get_by_role("button", name="Add member").click()
    expect(page.get_by_text("Added ann as Annotator.")).to_be_visible()
    expect(add.get_by_role("checkbox", checked=True)).to_have_count(0)  # the next person starts fresh
    expect(page.locator("tr[data-member=ann]")).to_contain_text("Annotator")
    screenshot(page, "self-service-members", full_page=True)
    page.set_viewport_size(LAPTOP)
    screenshot(page, "self-service-members-laptop", full_page=True)

    home = pages.page()
    _sign_in_home(home, "ann")
    row = home.locator("tr[data-project=algebra-round-2]")
    expect(row).to_contain_text("Annotator")
    expect(row.get_by_role("link")).to_have_text(["Label"])  # no lead pages offered
    screenshot(home, "self-service-home-annotator")
    row.get_by_role("link", name="Label").click()
    wait_ready(home)
    _label_current_solution(home)
    wait_for(lambda: Annotation.objects.filter(project=project).exists(), timeout=15, message="the submitted label")
    annotation = Annotation.objects.get(project=project)
    assert annotation.annotator.username == "ann" and annotation.source == "app"

    page.goto("/")
    expect(page.locator("tr[data-project=algebra-round-2]")).to_contain_text("Lead")
    screenshot(page, "self-service-home-laptop")
    actions = set(AuditEvent.objects.filter(project=project).values_list("action", flat=True))
    assert {"project.created", "member.added"} <= actions


def test_a_bad_file_shows_its_line_errors_and_changes_nothing(pages, screenshot, tmp_path):
    project = make_project("algebra")
    make_user("lena", project, Role.LEAD)
    make_solution(project, STEPS)
    good = DEMO.read_text().splitlines()[0]
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(
        gzip.compress(
            "\n".join(
                [good, '{"problem": "x", "steps": ', json.dumps({"problem": "What is 1+1?", "steps": "2"}), good]
            ).encode()
        )
    )
    before = (Problem.objects.count(), Solution.objects.count())
    page = pages.page()
    _sign_in(page, "lena", "/projects/algebra/data/")
    purge_broker()
    with celery_worker(queues="default"):
        page.locator("input[type=file]").set_input_files(str(bad))
        page.get_by_role("button", name="Import").click()
        status = page.locator("[data-import-status]")
        expect(status).to_contain_text("nothing was imported", timeout=60_000)
    errors = page.locator("[data-errors] li")
    expect(errors).to_have_count(2)
    expect(errors.nth(0)).to_contain_text("bad.jsonl.gz, line 2: not valid JSON")
    expect(errors.nth(1)).to_have_text("bad.jsonl.gz, line 3, field ground_truth_answer: missing")
    expect(page.locator("[data-imports] tbody tr").first).to_contain_text("Failed")
    screenshot(page, "self-service-data-bad-file", full_page=True)
    page.set_viewport_size(LAPTOP)
    screenshot(page, "self-service-data-bad-file-laptop", full_page=True)
    assert (Problem.objects.count(), Solution.objects.count()) == before


def test_an_upload_over_the_size_limit_is_refused_before_it_is_sent(pages, settings, tmp_path):
    project = make_project("algebra")
    make_user("lena", project, Role.LEAD)
    settings.IMPORT_MAX_BYTES = 1000
    big = tmp_path / "big.jsonl"
    big.write_text(DEMO.read_text())
    page = pages.page()
    _sign_in(page, "lena", "/projects/algebra/data/")
    page.locator("input[type=file]").set_input_files(str(big))
    page.get_by_role("button", name="Import").click()
    expect(page.locator("[data-import-status]")).to_contain_text("the limit is 1000 bytes. Nothing was uploaded.")
    assert not ImportJob.objects.exists()


def test_an_empty_file_is_refused_with_the_servers_reason(pages, tmp_path):
    project = make_project("algebra")
    make_user("lena", project, Role.LEAD)
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    page = pages.page()
    _sign_in(page, "lena", "/projects/algebra/data/")
    page.locator("input[type=file]").set_input_files(str(empty))
    page.get_by_role("button", name="Import").click()
    status = page.locator("[data-import-status]")
    expect(status).to_contain_text("The submitted file is empty. Nothing was imported.")
    expect(status).not_to_contain_text("HTTP 400")
    assert not ImportJob.objects.exists()


def _labeled_project(slug: str = "algebra") -> Project:
    project = make_project(slug)
    make_user("lena", project, Role.LEAD)
    ann = make_user("ann", project)
    for i in range(3):
        solution = make_solution(project, STEPS, problem=f"If $x = {i}$, what is $x + 1$?")
        steps = [
            {
                "completions": [{"text": t, "rating": 1, "flagged": False}],
                "human_completion": None,
                "chosen_completion": 0,
            }
            for t in STEPS
        ]
        store_label(solution, ann, steps, labeler_uuid="7b4f3a52-0000-4000-8000-000000000001")
    return project


def test_ml_engineer_makes_a_token_and_pulls_an_export_with_it(pages, screenshot, live_server):
    project = _labeled_project()
    make_user("mia", project, Role.ML_ENGINEER)
    page = pages.page()
    _sign_in(page, "mia", "/account/token/")
    expect(page.locator("[data-token]")).to_have_count(0)
    page.get_by_role("button", name="Create token").click()
    token_el = page.locator("[data-token]")
    key = token_el.get_attribute("data-token")
    assert key and re.fullmatch(r"[0-9a-f]{40}", key)
    curl = page.locator("pre[data-curl=algebra][data-format=prm800k]")
    expect(curl).to_contain_text(f"Authorization: Token {key}")
    expect(curl).to_contain_text("/api/v1/projects/algebra/export/?format=prm800k")
    screenshot(page, "self-service-token")

    request = urllib.request.Request(
        f"{live_server.url}/api/v1/projects/algebra/export/?format=prm800k",
        headers={"Authorization": f"Token {key}"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200
        records = [json.loads(line) for line in response.read().decode().splitlines()]
        assert response.headers["X-Export-Cursor"]
    assert len(records) == 3 and all(r["label"]["finish_reason"] == "solution" for r in records)

    page.reload()  # shown once
    expect(page.locator("[data-token]")).to_have_count(0)
    rotate = page.get_by_role("button", name="Rotate token")
    expect(rotate).to_be_visible()
    rotate.click()  # the confirmation box is not ticked: the browser refuses, the token stands
    expect(page.get_by_role("checkbox", name="Stop the old token now")).to_be_visible()
    assert Token.objects.get(user__username="mia").key == key
    screenshot(page, "token-rotate-confirm")

    page.goto("/projects/algebra/export/")
    purge_broker()
    with celery_worker(queues="default"):
        page.get_by_role("button", name="Start export").click()
        status = page.locator("[data-export-status]")
        expect(status).to_contain_text("Export ready: 3 records", timeout=60_000)
    download = status.get_by_role("link", name="Download")
    with page.expect_download() as info:
        download.click()
    lines = Path(info.value.path()).read_text().splitlines()
    assert len(lines) == 3
    row = page.locator("[data-exports] tbody tr").first  # the list refreshes when the job ends
    expect(row).to_contain_text("Succeeded")
    expect(row.get_by_role("link", name="Export what is newer")).to_be_visible()
    screenshot(page, "self-service-export", full_page=True)
    page.set_viewport_size({"width": 420, "height": 860})  # the long cursor wraps, the page does not scroll sideways
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    screenshot(page, "self-service-export-420", full_page=True)
    page.set_viewport_size(LAPTOP)
    screenshot(page, "self-service-export-laptop", full_page=True)
    row.get_by_role("link", name="Export what is newer").click()
    expect(page.get_by_label("Since (cursor)")).not_to_have_value("")


def test_annotator_is_refused_every_lead_page_and_outsiders_see_not_found(pages, screenshot):
    project = make_project("algebra")
    make_user("lena", project, Role.LEAD)
    make_user("ann", project)
    make_user("olga", make_project("other"), Role.LEAD)
    page = pages.page()
    _sign_in_home(page, "ann")
    for path in ["settings", "data", "members", "export"]:
        response = page.goto(f"/projects/algebra/{path}/")
        assert response is not None and response.status == 403, path
        expect(page.get_by_role("heading", name="You may not open this page")).to_be_visible()
    screenshot(page, "self-service-403")
    response = page.goto("/projects/new/")
    assert response is not None and response.status == 403
    outsider = pages.page()
    _sign_in_home(outsider, "olga")
    for slug in ["algebra", "no-such-project"]:
        response = outsider.goto(f"/projects/{slug}/settings/")
        assert response is not None and response.status == 404
        expect(outsider.get_by_role("heading", name="Page not found")).to_be_visible()
    screenshot(outsider, "self-service-404")


def test_lead_edits_settings_with_a_safe_live_preview(pages, screenshot):
    project = make_project("algebra")
    make_user("lena", project, Role.LEAD)
    page = pages.page()
    _sign_in(page, "lena", "/projects/algebra/settings/")
    preview = page.locator("[data-markdown-preview]")
    expect(preview.locator("strong").first).to_have_text("Positive")  # the current guidelines
    page.get_by_label("Guidelines").fill(
        "# Rules\n<script>window.pwned = 1</script> <img src=x onerror=alert(1)>\n\nThe answer is $\\sqrt{2}$."
    )
    expect(preview.locator(".katex")).to_have_count(1)
    expect(preview).to_contain_text("<script>window.pwned = 1</script>")  # shown as text
    expect(preview.locator("script, img")).to_have_count(0)
    page.get_by_label("Overlap").fill("3")
    screenshot(page, "self-service-settings", full_page=True)
    page.set_viewport_size(LAPTOP)
    screenshot(page, "self-service-settings-laptop")
    page.get_by_role("button", name="Save settings").click()
    expect(page.get_by_text("Saved: Overlap, Guidelines.")).to_be_visible()
    project.refresh_from_db()
    assert project.overlap == 3 and project.guidelines.startswith("# Rules")
    event = AuditEvent.objects.get(action="project.settings_changed")
    assert event.actor.username == "lena" and event.details["changes"]["overlap"] == [1, 3]


def test_invite_link_lets_a_new_person_set_a_password_and_join(pages, screenshot):
    project = make_project("algebra")
    make_user("lena", project, Role.LEAD)
    page = pages.page()
    _sign_in(page, "lena", "/projects/algebra/members/")
    invite = page.get_by_role("region", name="Invite by link")
    page.get_by_role("button", name="Create invite link").click()  # no role ticked: refused, nothing made
    expect(invite.locator(".sl-field-error")).to_be_visible()
    assert not Invite.objects.exists()
    expect(invite.get_by_label("Annotator")).not_to_be_checked()  # the lead chooses every role
    invite.get_by_label("Annotator").check()
    page.get_by_role("button", name="Create invite link").click()
    link = page.locator("[data-invite-link]").inner_text()
    screenshot(page, "self-service-members-invite")
    guest = pages.page()
    guest.goto(link)
    expect(guest.get_by_role("heading", name="Join Algebra, round 1")).to_be_visible()
    guest.get_by_label("Username").fill("newbie")
    guest.get_by_label("Password", exact=True).fill("Tr1cky-passphrase")
    guest.get_by_label("Password again").fill("Tr1cky-passphrase")
    screenshot(guest, "self-service-invite")
    guest.get_by_role("button", name="Create account and join").click()
    guest.wait_for_url("**/")
    expect(guest.locator("tr[data-project=algebra]")).to_contain_text("Annotator")
    assert Membership.objects.filter(project=project, user__username="newbie", role=Role.ANNOTATOR).exists()
    again = pages.page()
    response = again.goto(link)
    assert response is not None and response.status == 404
    expect(again.get_by_role("heading", name="This invite link does not work")).to_be_visible()

    # Someone with an account signs in from the link, comes back to it, and joins with that account.
    make_user("ann")
    invite.get_by_label("Lead", exact=True).check()
    page.get_by_role("button", name="Create invite link").click()
    second = page.locator("[data-invite-link]").inner_text()
    holder = pages.page()
    holder.goto(second)
    holder.get_by_role("link", name="Sign in").click()
    holder.get_by_label("Username").fill("ann")
    holder.get_by_label("Password").fill(PASSWORD)
    holder.get_by_role("button", name="Log in").click()
    holder.get_by_role("button", name="Join as ann").click()
    holder.wait_for_url("**/")
    expect(holder.get_by_text("You joined Algebra, round 1 as Lead.")).to_be_visible()
    screenshot(holder, "self-service-invite-joined")
    assert Membership.objects.filter(project=project, user__username="ann", role=Role.LEAD).exists()


def test_password_page(pages, screenshot):
    make_user("ann")
    page = pages.page()
    _sign_in(page, "ann", "/account/password/")
    page.get_by_label("Old password").fill("pw-steplabel-e2e")
    page.get_by_label("New password", exact=True).fill("An0ther-passphrase")
    page.get_by_label("New password confirmation").fill("An0ther-passphrase")
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_text("Your password is changed.")).to_be_visible()
    screenshot(page, "self-service-password")


def test_guideline_templates_replace_the_text_in_place_and_a_compare_project_gets_its_own(pages):
    """The template links replaced the text by reloading the page, losing the name and every other
    field; a compare project started with step-rating guidelines."""
    from annotate import guidelines_templates

    _creator()
    page = pages.page()
    _sign_in(page, "carol", "/projects/new/")
    page.get_by_label("Name").fill("Duel of solutions")
    guidelines = page.get_by_label("Guidelines")
    guidelines.fill("My own words.")
    page.get_by_role("link", name="Code").click()
    expect(page.get_by_label("Name")).to_have_value("Duel of solutions")  # no reload
    expect(guidelines).to_have_value(guidelines_templates.CODE)
    expect(page.get_by_label("Solutions are")).to_have_value("code")
    page.get_by_role("button", name="Undo").click()
    expect(guidelines).to_have_value("My own words.")

    page.get_by_role("link", name="Math (Markdown + LaTeX)").click()
    page.get_by_label("Task kind").select_option("compare")  # an untouched template follows the kind
    expect(guidelines).to_have_value(guidelines_templates.COMPARE)
    expect(page.locator("[data-markdown-preview] h3")).to_have_text("How to compare two solutions")
    page.get_by_role("button", name="Create project").click()
    page.wait_for_url("**/projects/duel-of-solutions/data/")
    project = Project.objects.get(slug="duel-of-solutions")
    assert project.task_kind == "compare" and project.guidelines.strip() == guidelines_templates.COMPARE.strip()
