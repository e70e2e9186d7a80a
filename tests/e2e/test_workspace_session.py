"""The workspace keeps the work safe in real Chromium: a reload or another browser resumes the draft,
a submit survives network errors with one key and one annotation, heartbeats keep the lease,
skip releases the solution, and two annotators never get the same one.
"""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotate.models import Annotation, Assignment, AssignmentStatus
from tests.e2e.helpers import (
    STEPS,
    annotation_for,
    annotator_on,
    close_mid_critique,
    current_step,
    expect_empty_queue,
    expect_rated,
    label_steps,
    login,
    main_ratings,
    make_project,
    make_solution,
    make_user,
    open_second_tab,
    open_workspace,
    wait_ready,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _clock_seconds(page) -> int:
    """The workspace bar's "Active m:ss" as seconds."""
    text = page.locator(".sl-clock").inner_text()
    minutes, seconds = text.split()[1].split(":")
    return int(minutes) * 60 + int(seconds)


def test_reload_and_new_browser_resume_with_ratings_kept(pages):
    project = make_project()
    user = make_user("ann", project)
    solution = make_solution(project, STEPS)
    ctx = pages.context()
    page = pages.page(ctx)
    open_workspace(page, "ann")

    page.keyboard.press("3")
    page.keyboard.press("f")  # flags step 1, just rated
    page.keyboard.press("2")
    expect_rated(page, 2)
    expect(page.locator(".sl-save")).to_have_text("Saved")  # on the server too

    # Reload: the same solution comes back with both ratings and the flag (localStorage + server),
    # and the active-time clock where it was (kept in this browser as the page went away).
    page.wait_for_timeout(2500)
    before = _clock_seconds(page)
    page.reload()
    wait_ready(page)
    assert _clock_seconds(page) >= before >= 2
    expect_rated(page, 2)
    expect(current_step(page)).to_contain_text("Step 3")
    expect(page.locator(".sl-step").nth(0).get_by_role("button", name="Flag")).to_have_attribute("aria-pressed", "true")
    expect(page.locator(".sl-notice")).to_contain_text("Resumed")
    expect(page.locator(".sl-save")).to_have_text("Saved")  # the server holds this draft: say so

    # Offline, a third rating is saved only in this browser, and the tab closes: the tab opened
    # next finds the newer draft here and sends it to the server at once (another browser then
    # resumes all three ratings), and the bar says so.
    offline = {"on": True}
    ctx.route("**/api/v1/assignments/*/draft/", lambda route: route.abort() if offline["on"] else route.continue_())
    page.keyboard.press("1")  # step 3: negative
    expect_rated(page, 3)
    expect(page.locator(".sl-save")).to_contain_text("saved in this browser")
    page.close()
    offline["on"] = False
    page = open_second_tab(pages, ctx)  # the same browser: its cookies and localStorage
    expect_rated(page, 3)
    expect(page.locator(".sl-save")).to_have_text("Saved")
    page.keyboard.press("Backspace")  # back to two ratings, saved on the server too
    expect_rated(page, 2)
    expect(page.locator(".sl-save")).to_have_text("Saved")

    # A fresh browser (no localStorage) resumes from the server's draft.
    page.close()
    other = pages.page()
    open_workspace(other, "ann")
    expect_rated(other, 2)
    expect(current_step(other)).to_contain_text("Step 3")
    other.keyboard.press("Backspace")  # undo survives the move too
    expect_rated(other, 1)
    other.keyboard.press("2")
    other.keyboard.press("3")
    other.keyboard.press("Enter")
    expect_empty_queue(other)

    assert Assignment.objects.filter(annotator=user).count() == 1
    annotation = annotation_for(solution)
    assert main_ratings(annotation) == [1, 0, 1]
    assert [s["completions"][0]["flagged"] for s in label_steps(annotation)] == [True, False, False]


def test_submit_survives_network_errors_with_one_key_and_one_annotation(pages):
    project = make_project()
    make_user("ann", project)
    solution = make_solution(project, STEPS[:2])
    page = pages.page()

    sent: list[dict] = []
    held = []  # the third try, let through once the test has read the retry notice

    def flaky(route, request):
        sent.append(request.post_data_json)
        if len(sent) == 1:
            route.abort("connectionreset")  # the network drops the first try
        elif len(sent) == 2:
            route.fulfill(status=503, body="")  # a proxy answers 503 to the second
        else:
            held.append(route)

    # routed before the page loads: Chromium turns interception on for a loaded page a moment after
    # route() returns, and a submit in that moment went past the handler in a CI run
    page.route("**/api/v1/assignments/*/submit/*", flaky)
    open_workspace(page, "ann")
    page.keyboard.press("3")
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")  # a double press while the first is in flight
    # the retries back off 0.5 s then 1 s: a loaded machine could poll past the notice, so the
    # third try waits for the test
    expect(page.locator(".sl-notice")).to_contain_text("retrying")
    deadline = time.monotonic() + 15
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(50)  # lets the route handler see the third try
    assert held, "the third try never came"
    held[0].continue_()
    expect_empty_queue(page)

    assert len(sent) == 3
    assert len({body["idempotency_key"] for body in sent}) == 1
    assert Annotation.objects.filter(solution=solution).count() == 1
    annotation = annotation_for(solution)
    assert annotation.idempotency_key == sent[0]["idempotency_key"]
    assert main_ratings(annotation) == [1, 1]


def test_heartbeats_keep_the_lease_alive(pages, settings):
    settings.WORKSPACE_HEARTBEAT_SECONDS = 0.5
    project = make_project(lease_minutes=30)
    user = make_user("ann", project)
    make_solution(project, STEPS)
    page = pages.page()
    open_workspace(page, "ann")
    assignment = Assignment.objects.get(annotator=user)
    soon = timezone.now() + timedelta(seconds=20)
    Assignment.objects.filter(pk=assignment.pk).update(lease_expires_at=soon)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        assignment.refresh_from_db()
        if assignment.lease_expires_at > soon + timedelta(minutes=10):
            break
        time.sleep(0.2)
    assert assignment.lease_expires_at > timezone.now() + timedelta(minutes=29)
    assert assignment.status == AssignmentStatus.ACTIVE


def test_skip_releases_and_shows_the_next_solution(pages):
    project = make_project()
    user = make_user("ann", project)
    first = make_solution(project, ["Alpha step."], problem="Alpha problem", priority=2)
    second = make_solution(project, ["Beta step."], problem="Beta problem", priority=1)
    page = pages.page()
    open_workspace(page, "ann")
    expect(page.locator(".sl-problem-text")).to_have_text("Alpha problem")
    page.keyboard.press("3")  # work on a skipped solution is dropped with it, so Skip asks first
    page.get_by_role("button", name="Skip").focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Skip this solution?")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Your rating and any critique on it will be discarded")
    expect(dialog.get_by_role("button", name="Keep labeling")).to_be_focused()  # a stray Enter keeps the work
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(page.locator(".sl-problem-text")).to_have_text("Alpha problem")
    expect_rated(page, 1)
    assert Assignment.objects.get(annotator=user, solution=first).status == AssignmentStatus.ACTIVE

    page.get_by_role("button", name="Skip").click()
    dialog.get_by_role("button", name="Skip and discard").click()
    expect(page.locator(".sl-problem-text")).to_have_text("Beta problem")
    expect_rated(page, 0)
    assert Assignment.objects.get(annotator=user, solution=first).status == AssignmentStatus.SKIPPED
    assert Assignment.objects.get(annotator=user, solution=second).status == AssignmentStatus.ACTIVE
    # nothing rated: Skip skips at once
    page.get_by_role("button", name="Skip").click()
    expect_empty_queue(page)
    assert Assignment.objects.get(annotator=user, solution=second).status == AssignmentStatus.SKIPPED


def test_two_annotators_never_get_the_same_solution(pages):
    project = make_project(overlap=1)
    make_user("ann", project)
    make_user("bob", project)
    first = make_solution(project, ["Alpha step one.", "Alpha step two."], problem="Alpha problem", priority=2)
    second = make_solution(project, ["Beta step one.", "Beta step two."], problem="Beta problem", priority=1)
    ann, bob = pages.page(), pages.page()  # two contexts: separate sessions
    open_workspace(ann, "ann")
    open_workspace(bob, "bob")
    ann_problem = ann.locator(".sl-problem-text").inner_text()
    bob_problem = bob.locator(".sl-problem-text").inner_text()
    assert {ann_problem.strip(), bob_problem.strip()} == {"Alpha problem", "Beta problem"}

    for page in (ann, bob):
        page.keyboard.press("3")
        page.keyboard.press("3")
        page.keyboard.press("Enter")
        expect_empty_queue(page)  # overlap 1: nothing left for either of them
    claims = list(Assignment.objects.values_list("solution_id", "annotator__username"))
    assert sorted(s for s, _ in claims) == sorted([first.pk, second.pk])
    assert Annotation.objects.filter(solution=first).count() == 1
    assert Annotation.objects.filter(solution=second).count() == 1


def test_back_after_a_submit_shows_the_home_page_as_it_is_now(pages):
    """Signed-in pages are not stored (Cache-Control: no-store), so Back re-reads the counts."""
    project = make_project()
    make_user("ann", project)
    make_solution(project, STEPS)
    page = pages.page()
    login(page, "ann", "/")
    row = page.locator('tr[data-project="algebra"]')
    expect(row.locator(".sl-num")).to_have_text("0", use_inner_text=True)  # the unit shows on phones only
    row.get_by_role("link", name="Label").click()
    wait_ready(page)
    for key in ("3", "3", "3"):
        page.keyboard.press(key)
    expect_rated(page, 3)
    page.keyboard.press("Enter")
    expect_empty_queue(page)
    page.go_back()
    expect(page.locator('tr[data-project="algebra"] .sl-num')).to_have_text("1", use_inner_text=True)


def test_enter_pressed_again_after_a_submit_keeps_the_confirmation(pages):
    """Repeated Enters: one label, and the next solution keeps "Submitted", not "Not ready"."""
    project = make_project()
    make_user("ann", project)
    first = make_solution(project, STEPS)
    make_solution(project, STEPS, problem="What is $2 + 2$?", answer="4", priority=0.5)
    page = pages.page()
    open_workspace(page, "ann")
    for key in ("3", "3", "3"):
        page.keyboard.press(key)
    expect_rated(page, 3)
    for _ in range(3):
        page.keyboard.press("Enter")
    expect(page.locator(".sl-notice")).to_have_text("Submitted. Here is the next solution.")
    page.keyboard.press("Enter")  # a late repeat that lands on the next solution
    page.wait_for_timeout(300)
    expect(page.locator(".sl-notice")).to_have_text("Submitted. Here is the next solution.")
    assert Annotation.objects.filter(assignment__annotator__username="ann").count() == 1
    assert annotation_for(first).finish_reason == "solution"
    # Later, Enter on the untouched solution says what is missing.
    page.wait_for_timeout(1100)
    page.keyboard.press("Enter")
    expect(page.locator(".sl-notice")).to_contain_text("Not ready to submit")


def test_a_tab_reloaded_while_another_rates_resumes_the_other_tabs_newer_ratings(pages):
    """Was: a tab opened before the ratings stored its own older draft over them as it reloaded
    (its clock had moved), so it came back with 0 rated until the other tab's server save landed."""
    project = make_project()
    make_user("ann", project)
    make_solution(project, STEPS)
    ctx = pages.context()
    first = pages.page(ctx)
    open_workspace(first, "ann")
    second = open_second_tab(pages, ctx)  # opened before any rating
    expect_rated(second, 0)
    first.keyboard.press("3")
    expect(first.locator(".sl-save")).to_have_text("Saved")
    first.keyboard.press("3")
    first.keyboard.press("2")  # two more ratings, their server save not sent yet
    expect_rated(first, 3)
    second.reload()
    wait_ready(second)
    expect_rated(second, 3)


def test_two_tabs_on_one_solution_are_told_and_the_later_different_submit_is_refused_and_kept(pages, screenshot):
    """Was: both tabs said "Saved" with different ratings, and the second submit said "Submitted"
    while the server kept the first tab's labels (the draft's shared key made it a replay)."""
    project = make_project()
    make_user("ann", project)
    solution = make_solution(project, STEPS)
    ctx = pages.context()
    first = pages.page(ctx)
    open_workspace(first, "ann")
    first.keyboard.press("3")
    expect(first.locator(".sl-save")).to_have_text("Saved")

    second = open_second_tab(pages, ctx)  # the draft (and its key) resumes here
    expect_rated(second, 1)
    second.keyboard.press("3")
    # The first tab learns at once that the solution is being worked on elsewhere.
    expect(first.locator(".sl-alert")).to_contain_text("open in another tab")
    second.keyboard.press("3")
    second.keyboard.press("Enter")
    expect_empty_queue(second)
    expect(first.locator(".sl-alert")).to_contain_text("Another tab submitted or skipped this solution")

    # The first tab submits other ratings anyway: refused, and said so; the first submit stands.
    # One message says it: the Not recorded box, not also a red alert in the API's words for its
    # clients ("refused_submits in your progress, GET /api/v1/...") right above it.
    first.keyboard.press("1")  # step 2 Negative: a found error
    first.keyboard.press("Enter")
    refused = first.get_by_role("region", name="Submits that were not recorded")
    expect(refused).to_contain_text("submitted first from another tab or device")
    expect(refused).to_contain_text("Your labels: Step 1 Positive · Step 2 Negative")
    expect(first.locator(".sl-notice")).to_have_text("Not submitted: your ratings are shown under Not recorded above.")
    expect(first.locator(".sl-alert")).to_be_hidden()
    expect(first.locator("body")).not_to_contain_text("refused_submits")
    screenshot(first, "workspace-second-tab-refused")
    assert main_ratings(annotation_for(solution)) == [1, 1, 1]
    assert Annotation.objects.filter(solution=solution).count() == 1
    kept = Assignment.objects.get(solution=solution).draft["refused_submit"]
    assert [s["rating"] for s in kept["steps"]][:2] == [1, -1]


def test_changes_on_a_device_after_another_submitted_are_named_not_dropped(pages, screenshot):
    """Was: the second device's draft save met "already submitted", and the page moved on with a
    passing word; its different ratings were gone without being named."""
    project = make_project()
    make_user("ann", project)
    solution = make_solution(project, STEPS)
    laptop = pages.page(pages.context())
    open_workspace(laptop, "ann")
    laptop.keyboard.press("3")
    expect(laptop.locator(".sl-save")).to_have_text("Saved")

    phone = pages.page(pages.context())  # another browser: no storage events between them
    open_workspace(phone, "ann")
    expect_rated(phone, 1)
    laptop.keyboard.press("3")
    laptop.keyboard.press("3")
    laptop.keyboard.press("Enter")
    expect_empty_queue(laptop)

    phone.keyboard.press("2")  # step 2 Neutral, saved a moment later: the server says it is submitted
    alert = phone.locator(".sl-alert")
    expect(alert).to_contain_text("already submitted", timeout=15_000)
    expect(alert).to_contain_text("Not recorded from this tab: Step 1 Positive · Step 2 Neutral.")
    screenshot(phone, "workspace-device-changes-not-recorded")
    assert main_ratings(annotation_for(solution)) == [1, 1, 1]
    assert Annotation.objects.filter(solution=solution).count() == 1


def test_text_typed_in_a_box_survives_closing_the_tab_and_a_move_to_another_browser(pages):
    """Was: ratings, flags and saved critiques came back, but a critique or corrected step still
    being typed (no Enter yet) was gone when the tab closed."""
    project = make_project()
    make_user("ann", project)
    solution = make_solution(project, STEPS)
    ctx = pages.context()
    page = pages.page(ctx)
    open_workspace(page, "ann")
    close_mid_critique(page, "The sum is $2+2=4$, not 5 — ü")

    page = open_second_tab(pages, ctx)  # this browser's draft
    expect(page.locator("#sl-critique-0")).to_be_visible()
    expect(page.locator("#sl-critique-0")).to_have_value("The sum is $2+2=4$, not 5 — ü")
    expect(page.locator(".sl-notice")).to_contain_text("Resumed")
    page.locator("#sl-critique-0").type(" (checked)")
    page.wait_for_timeout(2_000)  # the server's copy catches up
    page.close()

    other = pages.page()  # another browser: the server's draft
    open_workspace(other, "ann")
    box = other.locator("#sl-critique-0")
    expect(box).to_have_value("The sum is $2+2=4$, not 5 — ü (checked)")
    box.press("Enter")
    other.keyboard.press("Enter")
    expect_empty_queue(other)
    (step,) = label_steps(annotation_for(solution))
    assert step["completions"][0]["rating"] == -1
    assert step["completions"][0]["critique"] == "The sum is $2+2=4$, not 5 — ü (checked)"


def test_a_submit_with_a_critique_or_step_left_unsaved_opens_it_instead_of_dropping_it(pages):
    """Was: Esc out of a critique (or a corrected step) and Enter submitted without it, silently."""
    page, solution = annotator_on(pages, STEPS)
    page.keyboard.press("1")  # step 1 Negative: the solution is done
    page.keyboard.press("e")
    page.locator("#sl-critique-0").type("Uses the wrong formula")
    page.keyboard.press("Escape")
    expect(page.locator(".sl-critique-open").first).to_contain_text("Finish critique (not saved)")
    page.keyboard.press("Enter")
    expect(page.locator(".sl-notice")).to_have_text(
        "Not ready to submit: the critique of step 1 is written but not saved: "
        "Enter in its box saves it, or empty the box."
    )
    expect(page.locator("#sl-critique-0")).to_be_focused()
    assert not Annotation.objects.filter(solution=solution).exists()

    page.keyboard.press("Enter")  # in the box: saves the critique
    page.keyboard.press("c")
    page.locator("#sl-human-0").type("Use $a^2+b^2=c^2$ instead")
    page.keyboard.press("Escape")
    expect(page.locator(".sl-write-human").first).to_have_text("Finish corrected step (not saved) (c)")
    page.keyboard.press("Enter")
    expect(page.locator(".sl-notice")).to_contain_text("your corrected step 1 is written but not saved")
    expect(page.locator("#sl-human-0")).to_be_focused()
    page.keyboard.press("Enter")  # saves the step
    page.keyboard.press("Enter")  # submits
    expect_empty_queue(page)
    annotation = annotation_for(solution)
    (step,) = label_steps(annotation)
    assert step["completions"][0]["critique"] == "Uses the wrong formula"
    assert step["human_completion"] is not None and "a^2+b^2" in step["human_completion"]["text"]


def test_a_tab_brought_back_shows_the_progress_another_tab_made(pages):
    """Was: the "Your progress today" panel of a background tab kept its numbers after another
    tab submitted, until that tab submitted itself."""
    project = make_project()
    make_user("ann", project)
    for problem in ("Alpha", "Beta"):
        make_solution(project, STEPS, problem=problem)
    ctx = pages.context()
    back = pages.page(ctx)
    open_workspace(back, "ann")
    expect(back.locator(".sl-progress")).to_contain_text("Solutions today0")
    front = open_second_tab(pages, ctx)
    for _ in STEPS:
        front.keyboard.press("3")
    front.keyboard.press("Enter")
    expect(front.locator(".sl-progress")).to_contain_text("Solutions today1")
    # the first tab comes back to the front (headless Chromium sends no event of its own here)
    back.evaluate("document.dispatchEvent(new Event('visibilitychange'))")
    expect(back.locator(".sl-progress")).to_contain_text("Solutions today1")
