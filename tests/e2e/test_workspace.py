"""The annotator workspace in real Chromium, driven with the keyboard only, checked in the database."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotate.models import Annotation, Assignment, AssignmentStatus, LabelingMode
from tests.e2e.helpers import (
    STEPS,
    annotation_for,
    current_step,
    expect_empty_queue,
    expect_rated,
    label_steps,
    main_ratings,
    make_project,
    make_solution,
    make_user,
    open_workspace,
    visible_steps,
    wait_ready,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_label_a_solution_to_the_end(pages, screenshot):
    project = make_project()
    make_user("ann", project)
    solution = make_solution(project, STEPS)
    page = pages.page()
    open_workspace(page, "ann")

    # Only the first step is shown and highlighted; the problem, ground truth and guidelines render.
    expect(visible_steps(page)).to_have_count(1)
    expect(current_step(page)).to_contain_text("Step 1")
    expect(page.locator(".sl-problem .katex").first).to_be_visible()
    expect(page.locator(".sl-gt")).to_contain_text("Ground-truth answer: 10")
    expect(page.locator(".sl-guidelines strong").first).to_have_text("Positive")
    group = current_step(page).get_by_role("group", name="Rate step 1")
    expect(group.get_by_role("button")).to_have_text(["−Negative1", "○Neutral2", "+Positive3", "⚑Flagf"])
    for name in ("Negative", "Neutral", "Positive"):
        expect(group.get_by_role("button", name=name, exact=True)).to_be_enabled()
    expect(page.get_by_role("button", name="Submit")).to_be_disabled()

    page.keyboard.press("3")
    expect(visible_steps(page)).to_have_count(2)
    expect(current_step(page)).to_contain_text("Step 2")
    # f flags the rating just given (step 1), not the step that came into focus; its Flag button
    # wears the f badge so the annotator sees where the key acts.
    step1_flag = page.locator(".sl-step").nth(0).get_by_role("button", name="Flag")
    expect(step1_flag.locator("kbd")).to_be_visible()
    expect(current_step(page).get_by_role("button", name="Flag").locator("kbd")).to_be_hidden()
    page.keyboard.press("f")
    expect(step1_flag).to_have_attribute("aria-pressed", "true")
    expect(current_step(page).get_by_role("button", name="Flag")).to_have_attribute("aria-pressed", "false")
    screenshot(page, "workspace-flag-after-rating")
    page.keyboard.press("2")
    expect(visible_steps(page)).to_have_count(3)
    screenshot(page, "workspace-rating-step-3")
    page.keyboard.press("3")
    expect_rated(page, 3)
    expect(page.get_by_role("button", name="Submit")).to_be_enabled()
    expect(page.locator(".sl-footer")).to_contain_text("finish: solution")
    screenshot(page, "workspace-complete-solution")
    page.keyboard.press("Enter")
    expect_empty_queue(page)
    screenshot(page, "workspace-empty-queue")

    annotation = annotation_for(solution)
    assert annotation.finish_reason == "solution"
    assert main_ratings(annotation) == [1, 0, 1]
    assert [s["completions"][0]["flagged"] for s in label_steps(annotation)] == [True, False, False]
    assert annotation.total_time_ms is not None and annotation.total_time_ms > 0
    assert Assignment.objects.get(solution=solution).status == AssignmentStatus.SUBMITTED
    # The progress panel counts it.
    expect(page.locator(".sl-progress")).to_contain_text("Solutions today1")


def test_stop_at_a_negative_step_and_rate_an_alternative(pages, screenshot):
    project = make_project()
    make_user("ann", project)
    solution = make_solution(project, ["Substitute: $x^2 = 3^2$.", "So $x^2 = 6$.", "The answer is $7$."])
    page = pages.page()
    open_workspace(page, "ann")

    page.keyboard.press("3")
    page.keyboard.press("1")  # step 2 is wrong: the pass ends there
    expect(visible_steps(page)).to_have_count(2)
    expect(page.locator(".sl-step").nth(2)).to_be_hidden()
    expect(page.locator(".sl-footer")).to_contain_text("found error")

    page.keyboard.press("a")
    alt_box = page.get_by_role("textbox", name="New alternative step")
    expect(alt_box).to_be_focused()
    page.keyboard.type("So $x^2 = 9$.")
    page.keyboard.press("Enter")
    alternative = page.get_by_role("listitem", name="Alternative 1 (yours)")
    expect(alternative).to_be_focused()
    expect(alternative.locator(".katex")).to_be_visible()
    page.keyboard.press("3")
    expect(alternative.get_by_role("button", name="Positive")).to_have_attribute("aria-pressed", "true")

    page.keyboard.press("c")
    expect(page.get_by_role("textbox", name="Corrected step")).to_be_focused()
    page.keyboard.type("Since $3^2 = 9$, $x^2 = 9$.")
    page.keyboard.press("Enter")
    expect(page.locator(".sl-human-shown:visible")).to_contain_text("Corrected step:")
    screenshot(page, "workspace-found-error-alternative")
    page.keyboard.press("Enter")
    expect_empty_queue(page)

    annotation = annotation_for(solution)
    assert annotation.finish_reason == "found_error"
    steps = label_steps(annotation)
    assert len(steps) == 2
    assert steps[1]["completions"] == [
        {"text": "So $x^2 = 6$.", "rating": -1, "flagged": False},
        {"text": "So $x^2 = 9$.", "rating": 1, "flagged": False},
    ]
    assert steps[1]["human_completion"]["text"] == "Since $3^2 = 9$, $x^2 = 9$."
    assert annotation.first_error_index == 1


def test_give_up_with_a_reason(pages, screenshot):
    project = make_project()
    make_user("ann", project)
    solution = make_solution(project, STEPS)
    page = pages.page()
    open_workspace(page, "ann")

    page.keyboard.press("3")
    expect(visible_steps(page)).to_have_count(2)
    page.keyboard.press("g")
    dialog = page.get_by_role("dialog", name="Give up on this solution")
    expect(dialog).to_be_visible()
    reason = dialog.get_by_label("Reason (required)")
    expect(reason).to_be_focused()
    page.keyboard.press("Enter")  # empty: refused, the dialog stays
    expect(dialog).to_be_visible()
    page.keyboard.type("Step 2 uses a notation I do not know.")
    screenshot(page, "workspace-give-up-dialog")
    page.keyboard.press("Enter")
    expect_empty_queue(page)

    annotation = annotation_for(solution)
    assert annotation.finish_reason == "give_up"
    assert annotation.finish_note == "Step 2 uses a notation I do not know."
    assert main_ratings(annotation) == [1]


def test_bad_problem_dialog_cancels_with_escape(pages):
    project = make_project()
    make_user("ann", project)
    solution = make_solution(project, STEPS)
    page = pages.page()
    open_workspace(page, "ann")

    page.keyboard.press("b")
    dialog = page.get_by_role("dialog", name="Report a bad problem")
    expect(dialog).to_be_visible()
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    page.keyboard.press("b")
    page.keyboard.type("The problem has no unique answer.")
    page.keyboard.press("Enter")
    expect_empty_queue(page)
    annotation = annotation_for(solution)
    assert (annotation.finish_reason, annotation.finish_note) == ("bad_problem", "The problem has no unique answer.")
    assert label_steps(annotation) == []


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

    # Reload: the same solution comes back with both ratings and the flag (localStorage + server).
    page.reload()
    wait_ready(page)
    expect_rated(page, 2)
    expect(current_step(page)).to_contain_text("Step 3")
    expect(page.locator(".sl-step").nth(0).get_by_role("button", name="Flag")).to_have_attribute("aria-pressed", "true")
    expect(page.locator(".sl-notice")).to_contain_text("Resumed")

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


def test_undo_a_rating(pages):
    project = make_project()
    make_user("ann", project)
    solution = make_solution(project, STEPS)
    page = pages.page()
    open_workspace(page, "ann")

    page.keyboard.press("1")  # a Negative at step 1 ends the pass ...
    expect(page.locator(".sl-footer")).to_contain_text("found error")
    expect(visible_steps(page)).to_have_count(1)
    page.keyboard.press("Backspace")  # ... undone: step 1 is to rate again
    expect_rated(page, 0)
    expect(current_step(page)).to_contain_text("Step 1")
    page.keyboard.press("3")
    page.keyboard.press("3")
    expect_rated(page, 2)
    page.keyboard.press("Backspace")
    expect_rated(page, 1)
    expect(visible_steps(page)).to_have_count(2)
    page.keyboard.press("2")
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    expect_empty_queue(page)
    annotation = annotation_for(solution)
    assert annotation.finish_reason == "solution"
    assert main_ratings(annotation) == [1, 0, 1]


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


def test_shortcuts_overlay_lists_every_key(pages, screenshot):
    project = make_project()
    make_user("ann", project)
    make_solution(project, STEPS)
    page = pages.page()
    open_workspace(page, "ann")
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    keys = dialog.locator("kbd").all_inner_texts()
    for key in ("1", "2", "3", "f", "Backspace", "Enter", "?", "a", "c", "n", "g", "b"):
        assert key in keys, key
    screenshot(page, "workspace-shortcuts")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()


def test_phase1_writes_a_human_step_when_nothing_is_positive(pages, screenshot):
    project = make_project(labeling_mode=LabelingMode.PHASE1)
    make_user("ann", project)
    solution = make_solution(project, ["Let $y = x + 1$.", "Then $y = 5$.", "So the answer is $5$."])
    page = pages.page()
    open_workspace(page, "ann")

    page.keyboard.press("3")
    page.keyboard.press("1")  # Negative: phase 1 goes on, but only after a written step
    box = page.get_by_role("textbox", name="Your own step (none here is Positive)")
    expect(box).to_be_focused()
    expect(visible_steps(page)).to_have_count(2)
    page.keyboard.type("Then $y = 4$.")
    screenshot(page, "workspace-phase1-human-step")
    page.keyboard.press("Enter")
    expect(visible_steps(page)).to_have_count(3)
    page.keyboard.press("2")  # not Positive either: the box opens by itself
    expect(page.get_by_role("textbox", name="Your own step (none here is Positive)")).to_be_focused()
    page.keyboard.type("So the answer is $4$.")
    page.keyboard.press("Enter")
    expect(page.get_by_role("button", name="Submit")).to_be_enabled()
    page.keyboard.press("Enter")
    expect_empty_queue(page)

    annotation = annotation_for(solution)
    assert annotation.finish_reason == "solution"
    steps = label_steps(annotation)
    assert main_ratings(annotation) == [1, -1, 0]
    assert [s["human_completion"]["text"] if s["human_completion"] else None for s in steps] == [
        None,
        "Then $y = 4$.",
        "So the answer is $4$.",
    ]


def test_submit_survives_network_errors_with_one_key_and_one_annotation(pages):
    project = make_project()
    make_user("ann", project)
    solution = make_solution(project, STEPS[:2])
    page = pages.page()
    open_workspace(page, "ann")
    page.keyboard.press("3")
    page.keyboard.press("3")

    sent: list[dict] = []

    def flaky(route, request):
        sent.append(request.post_data_json)
        if len(sent) == 1:
            route.abort("connectionreset")  # the network drops the first try
        elif len(sent) == 2:
            route.fulfill(status=503, body="")  # a proxy answers 503 to the second
        else:
            route.continue_()

    page.route("**/api/v1/assignments/*/submit/*", flaky)
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")  # a double press while the first is in flight
    expect(page.locator(".sl-notice")).to_contain_text("retrying")
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
    page.keyboard.press("3")  # work on a skipped solution is dropped with it
    page.get_by_role("button", name="Skip").focus()
    page.keyboard.press("Enter")
    expect(page.locator(".sl-problem-text")).to_have_text("Beta problem")
    expect_rated(page, 0)
    assert Assignment.objects.get(annotator=user, solution=first).status == AssignmentStatus.SKIPPED
    assert Assignment.objects.get(annotator=user, solution=second).status == AssignmentStatus.ACTIVE
