"""Compare tasks in real Chromium (issue 16): an annotator compares three pairs with the keyboard
alone (A / B / tie, strength, a first-wrong-step marker, undo), a reload keeps the work, and the
preference export holds the answers. Drafts are kept as on the step page (autosave.ts): sent at
once when the tab is hidden, the newer of this browser's and the server's resumed by revision,
and the bar says where the work is when offline."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.models import Assignment, Membership, Preference, Role
from annotate.services.imports import import_file
from tests.api_clients import member_client
from tests.e2e.helpers import make_project, make_user, open_workspace

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _line(problem: str, answer: str, steps: list[str], truth: str) -> dict:
    return {"problem": problem, "ground_truth_answer": truth, "steps": steps, "answer": answer}


LINES = [
    _line(
        "What is $\\frac{1}{2} + \\frac{1}{4}$?",
        "3/4",
        ["$\\frac{1}{2} = \\frac{2}{4}$.", "So the sum is $\\frac{3}{4}$."],
        "3/4",
    ),
    _line(
        "What is $\\frac{1}{2} + \\frac{1}{4}$?",
        "2/6",
        ["Add the tops and bottoms: $\\frac{2}{6}$.", "# Answer\n\n2/6"],
        "3/4",
    ),
    _line("Solve $2x = 10$.", "5", ["Divide by 2: $x = 5$."], "5"),
    _line("Solve $2x = 10$.", "8", ["Subtract 2: $x = 8$."], "5"),
    _line("What is $7 \\cdot 6$?", "42", ["$7 \\cdot 6 = 42$."], "42"),
    _line("What is $7 \\cdot 6$?", "42", ["Six sevens are $42$."], "42"),
]


def test_three_pairs_compared_with_the_keyboard_reach_the_preference_export(pages, screenshot, tmp_path: Path):
    project = make_project("duel", name="Which is better", task_kind="compare")
    user = make_user("ann", project)
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    import_file(project=project, path=path)
    page = pages.page()
    open_workspace(page, "ann", slug="duel")

    # Two candidates side by side, math rendered, under the ground-truth answer (shown by default).
    expect(page.locator(".sl-candidate")).to_have_count(2)
    expect(page.locator(".sl-candidate .katex").first).to_be_visible()
    expect(page.locator(".sl-gt")).to_be_visible()
    expect(page.locator(".sl-gt")).to_contain_text("Ground-truth answer:")
    # each solution's steps are numbered as on the step page, so a first wrong step can be named
    for side in ("A", "B"):
        numbers = page.locator(f'[data-side="{side}"] .sl-step-n')
        expect(numbers).to_have_text([f"Step {i + 1}" for i in range(numbers.count())])
        assert numbers.count() >= 2
    answers = [("ArrowLeft", "3", "A"), ("b", "2", "B"), ("t", None, "tie")]
    for i, (choice, strength, _shown) in enumerate(answers):
        expect(page.locator(".sl-candidate")).to_have_count(2)
        page.keyboard.press(choice)
        if strength:
            page.keyboard.press(strength)
        if i == 0:
            # A first-wrong-step marker on B, moved, then undone once: it stays on B's first step.
            page.keyboard.press("p")
            page.keyboard.press("p")
            page.keyboard.press("Backspace")
            expect(page.locator('[data-side="B"] .sl-first-wrong')).to_have_count(1)
            expect(page.locator(".sl-compare-verdict")).to_have_text("A is much better")
            # A reload brings the work back.
            page.wait_for_function("() => Object.keys(localStorage).some((k) => k.startsWith('steplabel.compare.'))")
            page.reload()
            expect(page.locator(".sl-compare-verdict")).to_have_text("A is much better")
            expect(page.locator('[data-side="B"] .sl-first-wrong')).to_have_count(1)
            screenshot(page, "compare-pair-chosen")
        progress = page.locator(".sl-compare-progress .sl-progress")
        expect(progress).to_contain_text(f"Pairs today{i}")  # dt then dd: "Pairs today0"
        page.keyboard.press("Enter")
        expect(page.locator(".sl-save")).to_have_text(f"Submitted ({i + 1} this session)")
        expect(progress).to_contain_text(f"Pairs today{i + 1}")
        expect(progress).to_contain_text(f"Pairs in all{i + 1}")
    expect(page.locator(".sl-empty")).to_be_visible()

    preferences = list(Preference.objects.filter(annotator=user).order_by("id"))
    assert [p.shown for p in preferences] == [shown for *_, shown in answers]
    assert [p.strength for p in preferences] == [3, 2, 1]
    first = preferences[0]
    assert (first.first_wrong_b if not first.swapped else first.first_wrong_a) == 0
    assert Assignment.objects.filter(annotator=user, status="submitted").count() == 3

    rows = _export(project)
    assert len(rows) == 2  # the tie is left out by default
    assert [row["margin"] for row in rows] == [3.0, 2.0]
    assert [row["prompt"] for row in rows] == [p.comparison.problem.text + "\n" for p in preferences[:2]]
    assert len(_export(project, "&ties=include")) == 3


def _export(project, extra: str = "") -> list[dict]:
    client = member_client(project, f"ml{len(extra)}", Role.ML_ENGINEER)
    response = client.get(f"/api/v1/projects/{project.slug}/export/?format=preference{extra}")
    assert response.status_code == 200
    return [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]


def test_a_pair_can_be_skipped_and_the_guidelines_read(pages, tmp_path: Path):
    """Skip releases the pair without an answer (never served to this annotator again) and shows the
    next one; the project's guidelines open beside the pair."""
    project = make_project("skipduel", name="Which is better", task_kind="compare")
    project.guidelines = "Prefer the solution whose **first error** comes later."
    project.show_ground_truth = False
    project.save(update_fields=["guidelines", "show_ground_truth"])
    user = make_user("ann", project)
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES[:4]))
    import_file(project=project, path=path)
    page = pages.page()
    open_workspace(page, "ann", slug="skipduel")
    expect(page.locator(".sl-candidate")).to_have_count(2)
    expect(page.locator(".sl-gt")).to_be_hidden()  # the project hides the ground truth

    page.locator(".sl-compare-guidelines summary").click()
    expect(page.locator(".sl-compare-guidelines strong")).to_have_text("first error")

    # Submit and Skip stand apart (they touched, inviting a mis-click)
    submit_box = page.get_by_role("button", name="Submit (Enter)").bounding_box()
    skip_box = page.get_by_role("button", name="Skip this pair").bounding_box()
    assert skip_box["x"] - (submit_box["x"] + submit_box["width"]) >= 8

    first = Assignment.objects.get(annotator=user)
    page.get_by_role("button", name="Skip this pair").click()
    expect(page.locator(".sl-save")).to_have_text("Skipped.")
    first.refresh_from_db()
    assert first.status == "skipped"
    expect(page.locator(".sl-candidate")).to_have_count(2)  # the other pair
    second = Assignment.objects.filter(annotator=user).exclude(pk=first.pk).get()
    assert second.comparison_id != first.comparison_id and second.status == "active"
    page.get_by_role("button", name="Skip this pair").click()
    expect(page.locator(".sl-empty")).to_be_visible()  # the skipped pair is not served again
    assert not Preference.objects.filter(annotator=user).exists()


def test_a_pair_is_compared_by_tapping_alone_on_a_phone(pages, screenshot, tmp_path: Path):
    """Mouse and touch users get buttons for what the keys do: which is better, by how much, and a
    first-wrong-step marker per step; a "choose first" alert goes once a choice is made."""
    project = make_project("tapduel", name="Which is better", task_kind="compare")
    user = make_user("ann", project)
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES[:2]))
    import_file(project=project, path=path)
    ctx = pages.context(viewport={"width": 390, "height": 844}, has_touch=True)
    page = pages.page(ctx)
    open_workspace(page, "ann", slug="tapduel")
    expect(page.locator(".sl-candidate")).to_have_count(2)
    expect(page.get_by_role("button", name="Undo")).to_be_disabled()  # nothing to undo yet
    expect(page.locator(".sl-keys-hint")).to_be_hidden()  # no keys on a touch screen

    page.get_by_role("button", name="Submit", exact=True).tap()  # no "(Enter)": a phone has no keys
    alert = page.locator(".sl-alert")
    expect(alert).to_have_text("Choose A, B or tie first.")
    page.get_by_role("button", name="B is better").tap()
    expect(alert).to_be_hidden()
    page.get_by_role("button", name="Clearly").tap()
    expect(page.get_by_role("button", name="Clearly")).to_have_attribute("aria-pressed", "true")
    page.get_by_role("button", name="A: step 1 is the first wrong step").tap()
    expect(page.locator('[data-side="A"] .sl-first-wrong')).to_have_count(1)
    undo = page.get_by_role("button", name="Undo")  # no Backspace on a phone
    undo.tap()
    expect(page.locator('[data-side="A"] .sl-first-wrong')).to_have_count(0)
    page.get_by_role("button", name="A: step 1 is the first wrong step").tap()
    expect(page.locator(".sl-compare-verdict")).to_have_text("B is clearly better")
    screenshot(page, "compare-phone-tapped", full_page=True)
    page.get_by_role("button", name="Submit", exact=True).tap()
    expect(page.locator(".sl-save")).to_have_text("Submitted (1 this session)")

    preference = Preference.objects.get(annotator=user)
    assert (preference.shown, preference.strength) == ("B", 2)
    assert (preference.first_wrong_b if preference.swapped else preference.first_wrong_a) == 0


def _open_pairs(pages, tmp_path: Path, slug: str = "strengths", n_lines: int = 4, clock: bool = False):
    project = make_project(slug, name="Which is better", task_kind="compare")
    user = make_user("ann", project)
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES[:n_lines]))
    import_file(project=project, path=path)
    page = pages.page()
    if clock:  # the page's timers under the test's control (clock.pause_at)
        page.clock.install()
    open_workspace(page, "ann", slug=slug)
    expect(page.locator(".sl-candidate")).to_have_count(2)
    return user, page


def test_a_strength_is_chosen_never_preselected_and_a_tie_sends_none(pages, screenshot, tmp_path: Path):
    """No strength is pressed until the annotator picks one, a submit without it asks for it (and
    the prompt goes once a choice is made), and a tie hides the strengths and sends none."""
    user, page = _open_pairs(pages, tmp_path)
    strengths = page.get_by_role("group", name="By how much")
    alert = page.locator(".sl-alert")
    verdict = page.locator(".sl-compare-verdict")
    expect(strengths.locator("[aria-pressed=true]")).to_have_count(0)

    submit = page.get_by_role("button", name="Submit (Enter)")
    expect(submit).to_have_class(re.compile(r"\bsl-not-ready\b"))  # looks unready until a full choice
    submit.click()
    expect(alert).to_have_text("Choose A, B or tie first (← / a, → / b, t).")
    page.keyboard.press("a")
    expect(alert).to_be_hidden()  # the stale prompt goes with the choice
    expect(verdict).to_have_text("A is better: by how much? 1 slightly, 2 clearly, 3 much")
    expect(strengths.locator("[aria-pressed=true]")).to_have_count(0)
    page.get_by_role("button", name="Submit (Enter)").click()
    expect(alert).to_have_text("Choose by how much A is better: 1 slightly, 2 clearly, 3 much.")
    screenshot(page, "walkthrough-compare-strength-asked")
    page.keyboard.press("2")
    expect(alert).to_be_hidden()
    expect(verdict).to_have_text("A is clearly better")
    expect(submit).not_to_have_class(re.compile(r"\bsl-not-ready\b"))
    page.keyboard.press("Enter")
    expect(page.locator(".sl-save")).to_have_text("Submitted (1 this session)")

    # a tie after a strength: the strengths hide, none stays chosen, and the body carries none
    page.keyboard.press("b")
    page.keyboard.press("3")
    page.keyboard.press("t")
    expect(strengths).to_be_hidden()
    expect(verdict).to_have_text("Tie")
    page.keyboard.press("2")  # a strength on a tie: it did nothing and said nothing
    expect(verdict).to_have_text("Tie: a tie has no strength. Choose A or B to say by how much.")
    page.keyboard.press("b")  # back from the tie: the strength is asked for again
    expect(strengths.locator("[aria-pressed=true]")).to_have_count(0)
    page.keyboard.press("t")
    with page.expect_request("**/submit/") as sent:
        page.keyboard.press("Enter")
    body = sent.value.post_data_json
    assert body["preference"] == "tie" and "strength" not in body, body
    expect(page.locator(".sl-save")).to_have_text("Submitted (2 this session)")

    preferences = list(Preference.objects.filter(annotator=user).order_by("id"))
    assert [(p.shown, p.strength) for p in preferences] == [("A", 2), ("tie", 1)]  # a tie is stored with 1


def test_skipping_a_pair_with_a_choice_asks_first(pages, tmp_path: Path):
    user, page = _open_pairs(pages, tmp_path, slug="skipask")
    first = page.locator(".sl-problem-text").inner_text()
    page.keyboard.press("b")
    page.get_by_role("button", name="Skip this pair").click()
    dialog = page.get_by_role("dialog", name="Skip this pair?")
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Keep comparing").click()
    expect(dialog).to_be_hidden()
    expect(page.locator(".sl-compare-verdict")).to_have_text(re.compile("^B is better"))
    assert Assignment.objects.get(annotator=user).status == "active"

    page.get_by_role("button", name="Skip this pair").click()
    dialog.get_by_role("button", name="Skip and discard").click()
    expect(page.locator(".sl-save")).to_have_text("Skipped.")
    expect(page.locator(".sl-problem-text")).not_to_have_text(first)
    assert Assignment.objects.filter(annotator=user, status="skipped").count() == 1


STATUS = ".sl-bar .sl-save"
HIDE_TAB = """() => {
  Object.defineProperty(document, "visibilityState", { value: "hidden", configurable: true });
  document.dispatchEvent(new Event("visibilitychange"));
}"""


def _server_draft(user, until, timeout: float = 5.0) -> dict:
    """The active assignment's server draft once `until(draft)` holds (the page saves it async)."""
    deadline = time.monotonic() + timeout
    while True:
        draft = Assignment.objects.get(annotator=user, status="active").draft
        if (isinstance(draft, dict) and until(draft)) or time.monotonic() > deadline:
            return draft
        time.sleep(0.05)


def _choice(draft, preference, strength) -> bool:
    return draft.get("choice", {}).get("preference") == preference and draft["choice"].get("strength") == strength


def test_a_change_right_before_the_tab_is_hidden_reaches_the_server_draft(pages, tmp_path: Path):
    """The page's clock is paused, so the 1.5 s debounced save never fires: the draft on the server
    comes from the save sent as the tab is hidden (or the page goes away)."""
    user, page = _open_pairs(pages, tmp_path, slug="hidden", clock=True)
    page.clock.pause_at(page.evaluate("Date.now()") / 1000 + 1)
    page.keyboard.press("a")
    page.keyboard.press("2")
    expect(page.locator(STATUS)).to_have_text("Saving…")
    page.wait_for_timeout(300)
    assert not _choice(Assignment.objects.get(annotator=user).draft or {}, "A", 2)  # the debounce waits

    page.evaluate(HIDE_TAB)
    draft = _server_draft(user, lambda d: _choice(d, "A", 2))
    assert _choice(draft, "A", 2) and draft["v"] == 1 and draft["rev"] >= 2, draft
    expect(page.locator(STATUS)).to_have_text("Saved")

    page.keyboard.press("t")  # and once more as the page goes away (closed, reloaded)
    page.evaluate("window.dispatchEvent(new PageTransitionEvent('pagehide', { persisted: false }))")
    assert _choice(_server_draft(user, lambda d: _choice(d, "tie", None)), "tie", None)


def test_the_newer_draft_wins_by_revision_local_or_server(pages, tmp_path: Path):
    """Whichever of this browser's and the server's draft has the higher revision is resumed, even
    when the other counts more active time (the old rule picked by time)."""
    user, page = _open_pairs(pages, tmp_path, slug="newest")
    ctx = page.context
    page.keyboard.press("a")
    page.keyboard.press("3")
    expect(page.locator(STATUS)).to_have_text("Saved")
    server = _server_draft(user, lambda d: _choice(d, "A", 3))

    # A newer local draft (saved offline, the tab then closed) beats an older server draft with more
    # time on it.
    ctx.set_offline(True)
    page.keyboard.press("t")
    expect(page.locator(STATUS)).to_have_text("Offline: saved in this browser, will retry")
    page.close()
    ctx.set_offline(False)
    # The closing tab's keepalive save may still reach the server once the page is gone (the
    # offline emulation is the page's): let it land, then put the older draft back over it.
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline and not _choice(Assignment.objects.get(annotator=user).draft or {}, "tie", None):
        time.sleep(0.1)
    Assignment.objects.filter(annotator=user).update(draft={**server, "elapsed_ms": 10**9})
    page = pages.page(ctx)  # the same browser: its localStorage
    page.goto("/annotate/newest/")
    expect(page.locator(".sl-compare-verdict")).to_have_text("Tie")
    # the newer local draft went to the server (after the save's debounce: room for a loaded machine)
    expect(page.locator(STATUS)).to_have_text("Saved", timeout=15_000)
    sent = _server_draft(user, lambda d: _choice(d, "tie", None))
    assert _choice(sent, "tie", None) and sent["rev"] > server["rev"], (sent, server)

    # A newer server draft (saved from another browser) beats this browser's, which has more time.
    newer = {**sent, "rev": sent["rev"] + 5, "elapsed_ms": 0, "choice": {**sent["choice"], "preference": "B"}}
    newer["choice"]["strength"] = 1
    Assignment.objects.filter(annotator=user).update(draft=newer)
    page.reload()
    expect(page.locator(".sl-compare-verdict")).to_have_text("B is slightly better")
    expect(page.locator(STATUS)).to_have_text("Resumed your saved work")
    page.keyboard.press("Enter")
    expect(page.locator(STATUS)).to_have_text("Submitted (1 this session)")
    preference = Preference.objects.get(annotator=user)
    assert (preference.shown, preference.strength) == ("B", 1)


def test_offline_the_bar_says_so_and_coming_back_saves(pages, tmp_path: Path):
    user, page = _open_pairs(pages, tmp_path, slug="offline")
    page.context.set_offline(True)
    page.keyboard.press("b")
    expect(page.locator(STATUS)).to_have_text("Saving…")
    expect(page.locator(STATUS)).to_have_text("Offline: saved in this browser, will retry")
    page.keyboard.press("2")
    expect(page.locator(STATUS)).to_have_text("Offline: saved in this browser, will retry")
    assert not _choice(Assignment.objects.get(annotator=user).draft or {}, "B", 2)

    page.context.set_offline(False)  # back online: saved without another change
    expect(page.locator(STATUS)).to_have_text("Saved")
    assert _choice(_server_draft(user, lambda d: _choice(d, "B", 2)), "B", 2)


TRACE_STEPS = [
    {"type": "thought", "text": "Use the calendar tool."},
    {"type": "tool_call", "text": 'days_between({"start": "2024-02-27", "end": "2024-03-02"})'},
    {"type": "observation", "text": '{"days": 4}'},
    {"type": "answer", "text": "3 days"},
]


def test_code_and_trace_pairs_draw_as_their_kind_and_marks_skip_observations(pages, tmp_path: Path):
    """A code pair shows numbered source lines (indentation kept) under the tests; a trace pair
    shows each step's type, its observation collapsed and not markable: `q` steps over it."""
    code = make_project("codes", name="Code pairs", task_kind="compare")
    traces = make_project("agents", name="Trace pairs", task_kind="compare")
    user = make_user("ann", code)
    Membership.objects.create(project=traces, user=user, role=Role.ANNOTATOR)
    task = {"kind": "code", "language": "python", "problem": "Write `sq(x)`.", "tests": "assert sq(3) == 9"}
    path = tmp_path / "code.jsonl"
    path.write_text(
        "".join(
            json.dumps({**task, "steps": steps}) + "\n"
            for steps in (["def sq(x):", "    return x ** 2"], ["def sq(x):", "    return x * 2"])
        )
    )
    import_file(project=code, path=path)
    page = pages.page()
    open_workspace(page, "ann", slug="codes")
    expect(page.locator(".sl-tests")).to_contain_text("assert sq(3) == 9")
    expect(page.locator('[data-side="A"] .sl-step-code')).to_have_count(2)
    expect(page.locator('[data-side="A"] .sl-step-code').nth(1)).to_contain_text("    return x")

    problem = "How many days from 2024-02-27 to 2024-03-02?"
    path = tmp_path / "traces.jsonl"
    path.write_text(
        "".join(
            json.dumps({"kind": "trace", "problem": problem, "ground_truth_answer": "4", "steps": steps}) + "\n"
            for steps in (TRACE_STEPS, TRACE_STEPS[:1] + [{"type": "answer", "text": "4"}])
        )
    )
    import_file(project=traces, path=path)
    page.goto(page.url.replace("/codes/", "/agents/"))
    long_side = page.locator(".sl-candidate").filter(has=page.locator(".sl-observation"))
    expect(long_side.locator(".sl-step-type")).to_have_text(["Thought", "Tool call", "Observation", "Answer"])
    expect(long_side.locator(".sl-observation")).not_to_have_attribute("open", "")
    expect(long_side.locator(".sl-mark-wrong")).to_have_count(3)  # not on the observation
    side = long_side.get_attribute("data-side")
    key = "q" if side == "A" else "p"
    for _ in range(3):  # thought, tool call, then past the observation to the answer
        page.keyboard.press(key)
    expect(long_side.locator(".sl-first-wrong")).to_have_attribute("data-index", "3")
    page.keyboard.press("a" if side == "B" else "b")
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    expect(page.locator(".sl-save")).to_contain_text("Submitted")
    preference = Preference.objects.get(annotator=user)
    assert {preference.first_wrong_a, preference.first_wrong_b} == {3, None}


def _in_view(page, selector: str) -> bool:
    """The element is inside the window, below the sticky bar."""
    return page.evaluate(
        """(sel) => {
            const r = document.querySelector(sel).getBoundingClientRect();
            const bar = document.querySelector('.sl-bar').getBoundingClientRect();
            return r.top >= bar.bottom - 1 && r.top < innerHeight;
        }""",
        selector,
    )


def test_on_a_long_pair_the_keys_show_what_they_did(pages, screenshot, tmp_path: Path):
    """A keyboard labeler on a pair longer than the screen: q / p scroll the step the marker moved to
    into view, clear of the sticky bar (it went below the screen's end unseen); the choice shows in
    the sticky bar (the verdict under the pair is off screen); and the next pair, after a Submit
    pressed under a long pair, starts at its top (it was shown scrolled to where the last ended)."""
    project = make_project("longduel", name="Which is better", task_kind="compare")
    make_user("ann", project)
    steps = [f"Step {i}: so $x_{{{i}}} = {i} \\cdot 2$, which is a long enough sentence to wrap." for i in range(30)]
    lines = [
        _line(f"Problem {k}: find $x$.", str(k + j), steps + [f"# Answer\n\n{k + j}"], str(k))
        for k in range(2)
        for j in range(2)
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    import_file(project=project, path=path)
    page = pages.page()
    open_workspace(page, "ann", slug="longduel")
    expect(page.locator(".sl-candidate")).to_have_count(2)
    problem = page.locator(".sl-problem-text").inner_text()

    for _ in range(14):
        page.keyboard.press("q")
    expect(page.locator('[data-side="A"] .sl-first-wrong')).to_have_attribute("data-index", "13")
    assert _in_view(page, '[data-side="A"] .sl-first-wrong')
    page.keyboard.press("b")
    page.keyboard.press("2")
    expect(page.locator(".sl-bar-choice")).to_have_text("B is clearly better")
    expect(page.locator(".sl-bar-choice")).to_be_visible()
    screenshot(page, "compare-long-pair-marker-in-view")

    page.get_by_role("button", name="Submit (Enter)").click()  # under the pair: scrolled to its end
    expect(page.locator(".sl-save")).to_have_text("Submitted (1 this session)")
    expect(page.locator(".sl-problem-text")).not_to_have_text(problem)
    assert _in_view(page, ".sl-problem-text")
    expect(page.locator(".sl-bar-choice")).to_have_text("")  # no choice made on this pair yet
