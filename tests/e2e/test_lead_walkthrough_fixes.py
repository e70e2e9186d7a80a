"""Findings of a lead's walkthrough in Chromium, each fixed and checked here:

- the labels-saved sentence says its interval in the words of its estimate ("more", "fewer"), never
  a cost beside signed savings;
- a 200-character project name wraps on every lead page and the dashboard, at 1400 px and on a phone;
- the dashboard's annotators table shows the gold first-error share beside gold accuracy, which an
  annotator who rates every step +1 keeps high;
- the dashboard refreshes its statistics every minute while the tab is visible, keeping the scroll
  position, pauses while it is hidden, and says when they last arrived;
- the new-project form hides the step-only settings while Compare is chosen.

(The position-bias card's "too few answers to tell" is checked in test_dashboard_compare.py.)
Screenshots go to test-results/screenshots/lead-*.png.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone
from playwright.sync_api import expect

from annotate.forms import ProjectSettingsForm
from annotate.models import Annotation, AnnotationSource, Project, QueueOrigin, Role, Solution, Strategy
from annotate.selectors.stats import project_stats
from annotate.services.projects import PROJECT_CREATORS
from prm800k.labels import label_counters
from prm800k.records import dumps_label_steps
from tests.e2e.helpers import STEPS, login, make_project, make_solution, make_user, store_label
from tests.e2e.test_dashboard_savings import _labeled

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
LONG_NAME = "Algebra PRM ∑ 🧮 " + "N" * 180  # one word of 180 letters after a few short ones
PHONE = {"width": 390, "height": 844}
WIDE = {"width": 1400, "height": 900}
PAGE_WIDTHS = "() => [document.documentElement.scrollWidth, window.innerWidth]"
# Elements that carry the project's name, and how far right they reach against the card (<main>).
NAME_BOXES = """() => {
  const main = document.querySelector("main").getBoundingClientRect();
  return [...document.querySelectorAll("h1, .sl-crumbs, .sl-projects td")]
    .map((e) => [
      e.tagName + "." + e.className, e.getBoundingClientRect().right - main.right, e.scrollWidth - e.clientWidth,
    ]);
}"""


def _loaded(page) -> None:
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()


def _step(rating: int) -> dict:
    return {
        "completions": [{"text": "s", "rating": rating, "flagged": False}],
        "human_completion": None,
        "chosen_completion": None if rating == -1 else 0,
    }


# -- 1. labels saved: one sign convention -------------------------------------------------------


def _in_words(lo: float, hi: float) -> str:
    """frontend/src/dashboard/format.ts savedInterval, as the test expects it."""
    lo, hi = round(lo), round(hi)
    if lo >= 0:
        return f"{lo:,} to {hi:,} fewer than random"
    if hi <= 0:
        return f"{-hi:,} to {-lo:,} more than random"
    return f"from {-lo:,} more to {hi:,} fewer than random"


def test_a_costly_strategys_interval_is_said_in_the_same_words_as_its_estimate(pages, screenshot):
    project = make_project("costly", selection_strategy=Strategy.VALUE, control_share=0.1)
    make_user("lena", project, Role.LEAD)
    ann = make_user("ann", project)
    # the strategy finds a first error in every fourth solution, the random control in every other one
    _labeled(project, ann, Strategy.VALUE, 40, n_steps=6, error_every=4)
    _labeled(project, ann, QueueOrigin.CONTROL, 36, n_steps=6, error_every=2)
    est = project_stats(project=project, now=timezone.now())["queue"]["savings"]  # as the dashboard reads it
    assert est["status"] == "ok" and est["labels_saved"] < 0
    lo, hi = est["labels_saved_ci"]

    page = pages.page()
    login(page, "lena", "/dashboard/costly/")
    _loaded(page)
    savings = page.locator('[data-slot="savings"]')
    expect(savings).to_contain_text(
        f"Labels saved vs random: none: {-round(est['labels_saved'])} step labels more than random would have "
        f"needed (95% CI: {_in_words(lo, hi)}); "
    )
    text = savings.inner_text()
    assert not re.search(r"CI[^;]*-\d", text), text  # no signed bound beside "more"
    page.locator("#queue").scroll_into_view_if_needed()
    screenshot(page, "lead-savings-cost")


# -- 2. a long project name wraps -----------------------------------------------------------------


def test_a_200_character_project_name_wraps_on_every_lead_page_and_the_dashboard(pages, screenshot):
    project = make_project("long", name=LONG_NAME)
    make_user("lena", project, Role.LEAD)
    make_solution(project, STEPS)
    page = pages.page()
    login(page, "lena", "/")
    expect(page.get_by_role("button", name="Log out")).to_be_visible()  # past the login form
    paths = ["/", *(f"/projects/long/{tab}/" for tab in ("settings", "data", "members", "export"))]
    for size, tag in ((WIDE, "1400"), (PHONE, "phone")):
        page.set_viewport_size(size)
        for path in [*paths, "/dashboard/long/"]:
            page.goto(path)
            if path.startswith("/dashboard/"):
                _loaded(page)
            expect(page.get_by_text("NNNNNNNNNN", exact=False).first).to_be_visible()
            scroll_width, width = page.evaluate(PAGE_WIDTHS)
            assert scroll_width <= width, f"{path} at {tag}: page {scroll_width} px wide in a {width} px window"
            for what, past_card, overflow in page.evaluate(NAME_BOXES):
                assert past_card <= 1 and overflow <= 1, f"{path} at {tag}: {what} runs past the card"
            if path == "/":
                # the project list's table keeps its columns in the card (no sideways scrolling)
                wrap = page.locator(".sl-table-wrap").first
                assert wrap.evaluate("(e) => e.scrollWidth <= e.clientWidth"), f"home at {tag}: the table scrolls"
        screenshot(page, f"lead-long-name-dashboard-{tag}")
        page.goto("/projects/long/settings/")
        screenshot(page, f"lead-long-name-settings-{tag}")


# -- 3. gold first errors beside gold accuracy -----------------------------------------------------


def _gold(project, ratings: list[int], tag: str) -> Solution:
    solution = make_solution(project, [f"step {i}" for i in range(len(ratings))], problem=f"Gold {tag}")
    Solution.objects.filter(pk=solution.pk).update(is_gold=True, is_quality_control=True, is_open=False)
    steps = [_step(r) for r in ratings]
    Annotation.objects.create(
        project=project,
        solution=solution,
        labeler_uuid="gold",
        source=AnnotationSource.IMPORT,
        submitted_at=timezone.now(),
        is_gold=True,
        is_quality_control=True,
        finish_reason="found_error" if -1 in ratings else "solution",
        label_steps=dumps_label_steps(steps),
        **label_counters(steps),
    )
    return solution


def _answer(solution: Solution, user, ratings: list[int]) -> None:
    steps = [_step(r) for r in ratings]
    Annotation.objects.create(
        project=solution.project,
        solution=solution,
        annotator=user,
        labeler_uuid=str(user.pk),
        submitted_at=timezone.now(),
        is_quality_control=True,
        finish_reason="found_error" if -1 in ratings else "solution",
        total_time_ms=30_000,
        label_steps=dumps_label_steps(steps),
        **label_counters(steps),
    )


def test_the_annotators_table_shows_the_gold_first_errors_an_always_positive_annotator_misses(pages, screenshot):
    project = make_project("gold", screening_threshold=0.6)
    make_user("lena", project, Role.LEAD)
    sam, ivy = make_user("sam", project), make_user("ivy", project)
    # three gold questions, two with a first error at the last step; one without
    with_error = [_gold(project, [1, 1, 1, -1], "a"), _gold(project, [1, 1, -1], "b")]
    clean = _gold(project, [1, 1, 1], "c")
    for solution, n in ((with_error[0], 4), (with_error[1], 3), (clean, 3)):
        _answer(solution, sam, [1] * n)  # sam rates every step +1
    _answer(with_error[0], ivy, [1, 1, 1, -1])
    _answer(with_error[1], ivy, [1, 1, -1])
    _answer(clean, ivy, [1, 1, 1])

    page = pages.page()
    login(page, "lena", "/dashboard/gold/")
    _loaded(page)
    table = page.locator('[data-slot="annotators"]')
    heads = [h.strip() for h in table.locator("thead th").all_inner_texts()]
    col = heads.index("Gold first error")
    assert heads[col - 1] == "Gold accuracy (n)"
    head = table.locator("thead th").nth(col)
    expect(head).to_have_attribute("title", re.compile(r"first −1 step is the one the gold label marks"))

    def cells(name: str) -> tuple[str, str]:
        row = table.locator("tbody tr", has=page.locator("th", has_text=re.compile(f"^{name}$")))
        tds = row.locator("th, td")
        return tds.nth(col - 1).inner_text(), tds.nth(col).inner_text()

    # sam: 8 of 10 gold steps agree (above the 60% threshold), but only the clean question's "no error" matches
    assert cells("sam") == ("80.0% (3)", "33.3%")
    assert cells("ivy") == ("100.0% (3)", "100.0%")
    # the flag rule is unchanged (gold accuracy or failed screening), and the note says it leaves this out
    expect(table.locator("tr.sl-below")).to_have_count(0)
    note = page.locator('[data-slot="quality-note"]')
    expect(note).to_contain_text(
        "Rows in red: gold accuracy below the screening threshold (60%) over at least 5 gold answers, "
        "or failed screening"
    )
    expect(note).to_contain_text("the flag does not look at Gold first error")
    expect(note).to_contain_text("rating every step +1 keeps gold accuracy high")
    page.locator("#quality").scroll_into_view_if_needed()
    screenshot(page, "lead-gold-first-error")


# -- 4. the dashboard refreshes by itself ---------------------------------------------------------

# Where the card the lead reads sits in the window: a refresh leaves it there (content above that
# grows, a longer legend, moves the scroll position with it, as the browser's scroll anchoring does).
QUALITY_TOP = "() => document.querySelector('#quality').getBoundingClientRect().top"
SET_VISIBILITY = """(state) => {
  Object.defineProperty(document, "visibilityState", { configurable: true, get: () => state });
  Object.defineProperty(document, "hidden", { configurable: true, get: () => state === "hidden" });
  document.dispatchEvent(new Event("visibilitychange"));
}"""


def test_the_dashboard_refreshes_every_minute_while_visible_and_keeps_the_scroll_position(pages, screenshot):
    project = make_project("live")
    make_user("lena", project, Role.LEAD)
    ann = make_user("ann", project)
    solutions = [make_solution(project, STEPS) for _ in range(4)]
    store_label(solutions[0], ann, [_step(1) for _ in STEPS], labeler_uuid="u-ann")
    Solution.objects.filter(pk=solutions[0].pk).update(annotation_count=1, is_open=False)

    page = pages.page()
    stats_requests: list[str] = []
    page.on("request", lambda r: stats_requests.append(r.url) if r.url.endswith("/stats/") else None)
    page.clock.install()  # timers run when the test says
    login(page, "lena", "/dashboard/live/")
    _loaded(page)
    assert len(stats_requests) == 1
    figures = page.locator('[data-slot="progress-figures"]')
    expect(figures).to_contain_text("1 / 4")
    updated = page.locator('[data-slot="updated"]')
    expect(updated).to_have_text(re.compile(r"^ · updated \d\d:\d\d$"))
    expect(updated).to_have_attribute("title", re.compile("every minute while this tab is visible"))

    # a label arrives; the lead reads the quality card further down
    store_label(solutions[1], ann, [_step(1) for _ in STEPS], labeler_uuid="u-ann")
    Solution.objects.filter(pk=solutions[1].pk).update(annotation_count=1, is_open=False)
    page.locator("#quality").scroll_into_view_if_needed()
    page.evaluate("() => window.scrollBy(0, 37)")
    assert page.evaluate("() => window.scrollY") > 100
    top = page.evaluate(QUALITY_TOP)
    page.clock.run_for(30_000)
    page.wait_for_timeout(300)
    assert len(stats_requests) == 1  # not yet
    page.clock.run_for(31_000)
    expect(figures).to_contain_text("2 / 4")
    assert len(stats_requests) == 2
    assert abs(page.evaluate(QUALITY_TOP) - top) <= 1, "the refresh moved the page"

    # hidden: no refreshes however long
    page.evaluate(SET_VISIBILITY, "hidden")
    store_label(solutions[2], ann, [_step(1) for _ in STEPS], labeler_uuid="u-ann")
    Solution.objects.filter(pk=solutions[2].pk).update(annotation_count=1, is_open=False)
    page.clock.run_for(180_000)
    page.wait_for_timeout(500)
    assert len(stats_requests) == 2
    expect(figures).to_contain_text("2 / 4")
    # visible again, with statistics older than a minute: they reload at once
    page.evaluate(SET_VISIBILITY, "visible")
    expect(figures).to_contain_text("3 / 4")
    assert len(stats_requests) == 3
    assert abs(page.evaluate(QUALITY_TOP) - top) <= 1, "the refresh moved the page"
    screenshot(page, "lead-dashboard-refreshed")


# -- 6. the new-project form and a compare project ------------------------------------------------


def test_step_only_settings_hide_while_compare_is_chosen_on_the_new_project_form(pages, screenshot):
    carol = make_user("carol")
    carol.groups.add(Group.objects.get_or_create(name=PROJECT_CREATORS)[0])
    page = pages.page()
    login(page, "carol", "/projects/new/")
    step_only = [page.get_by_label("Selection strategy"), page.get_by_label("Control share")]
    helps = [page.locator("#id_selection_strategy_helptext"), page.locator("#id_control_share_helptext")]
    for field in [*step_only, *helps, page.get_by_label("Critique required on -1 steps")]:
        expect(field).to_be_visible()
    page.get_by_label("Control share").fill("0.2")
    page.get_by_label("Task kind").select_option("compare")
    for field in [*step_only, *helps, page.get_by_label("Critique required on -1 steps")]:
        expect(field).to_be_hidden()
    expect(page.get_by_label("Rate observations (agent traces)")).to_be_hidden()
    expect(page.get_by_label("Screening answers required")).to_be_hidden()  # pairs have no screening pool
    # one guidelines template for pairs: the per-kind links (which changed nothing) go too
    links = page.locator("[data-guideline-links]")
    expect(links).to_be_hidden()
    for field in ("Overlap", "QC rate", "Auto-retrain threshold"):
        expect(page.get_by_label(field)).to_be_visible()
    # the settings that mean something else for pairs say so
    expect(page.locator("#id_overlap_helptext")).to_contain_text("compare each pair")
    retrain_help = page.locator("#id_retrain_every_helptext")
    expect(retrain_help).to_have_text("Retrain the reward model after this many new preferences (0: only when asked).")
    screenshot(page, "lead-new-compare-project", full_page=True)
    # back to Steps: the fields return with what was typed, and the steps' help
    page.get_by_label("Task kind").select_option("steps")
    for field in [*step_only, *helps]:
        expect(field).to_be_visible()
    expect(retrain_help).to_have_text("Retrain the PRM after this many new step labels (0: only when asked).")
    expect(page.get_by_label("Control share")).to_have_value("0.2")
    expect(links).to_be_visible()

    # a compare project made from the form
    page.get_by_label("Task kind").select_option("compare")
    page.get_by_label("Name").fill("Pairs, round 1")
    page.get_by_role("button", name="Create project").click()
    page.wait_for_url(re.compile(r"/projects/pairs-round-1/data/$"))
    assert Project.objects.get(slug="pairs-round-1").task_kind == "compare"


def test_the_settings_page_of_a_project_without_data_follows_the_chosen_kind_too(pages):
    project = make_project("fresh")
    make_user("lena", project, Role.LEAD)
    page = pages.page()
    login(page, "lena", "/projects/fresh/settings/")
    expect(page.get_by_label("Selection strategy")).to_be_visible()
    page.get_by_label("Task kind").select_option("compare")
    expect(page.get_by_label("Selection strategy")).to_be_hidden()
    expect(page.get_by_label("Control share")).to_be_hidden()


def test_the_pages_list_of_step_only_settings_is_the_forms():
    source = (ROOT / "frontend" / "src" / "pages" / "forms.ts").read_text()
    listed = re.search(r"STEP_ONLY_FIELDS = \[([^\]]*)\]", source)
    assert listed is not None
    assert tuple(re.findall(r'"(\w+)"', listed.group(1))) == ProjectSettingsForm.STEP_ONLY
    compare_only = re.search(r"COMPARE_ONLY_FIELDS = \[([^\]]*)\]", source)
    assert compare_only is not None
    assert tuple(re.findall(r'"(\w+)"', compare_only.group(1))) == ProjectSettingsForm.COMPARE_ONLY
