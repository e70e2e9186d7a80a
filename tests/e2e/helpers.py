"""Data and page helpers of the browser tests."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from pathlib import Path

from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import Page, expect

from annotate.models import Annotation, Membership, Problem, Project, Role, Solution, Step
from prm800k.labels import label_counters
from prm800k.records import dumps_label_steps

PASSWORD = "pw-steplabel-e2e"
_seq = itertools.count()

GUIDELINES = """# How to rate
- **Positive**: the step is correct and moves towards the answer.
- **Neutral**: correct but unhelpful, or ambiguous.
- **Negative**: wrong, e.g. claims $2+2=5$.

Flag a step when you are unsure."""


def _hash(*parts: object) -> str:
    return hashlib.sha256(json.dumps([str(p) for p in parts]).encode()).hexdigest()


def make_project(slug: str = "algebra", **fields) -> Project:
    fields.setdefault("name", "Algebra, round 1")
    fields.setdefault("guidelines", GUIDELINES)
    return Project.objects.create(slug=slug, **fields)


def make_user(name: str, project: Project | None = None, role: str = Role.ANNOTATOR):
    user = get_user_model().objects.create_user(name, password=PASSWORD)
    if project is not None:
        Membership.objects.create(project=project, user=user, role=role)
    return user


def make_solution(
    project: Project,
    steps: list[str],
    *,
    problem: str = "If $x = 3$, what is $x^2 + 1$?",
    answer: str = "10",
    priority: float = 1.0,
) -> Solution:
    tag = next(_seq)
    prob = Problem.objects.create(
        project=project,
        text=problem,
        ground_truth_answer=answer,
        content_hash=_hash("problem", tag, problem),
        text_hash=_hash("text", tag, problem),
    )
    solution = Solution.objects.create(
        project=project,
        problem=prob,
        content_hash=_hash("solution", tag),
        n_steps=len(steps),
        priority=priority,
    )
    Step.objects.bulk_create([Step(solution=solution, index=i, text=t) for i, t in enumerate(steps)])
    return solution


def store_label(solution: Solution, annotator, steps: list[dict], *, labeler_uuid: str) -> Annotation:
    """An annotator's PRM800K label of `solution` (label steps as stored), with its counters."""
    return Annotation.objects.create(
        project=solution.project,
        solution=solution,
        annotator=annotator,
        labeler_uuid=labeler_uuid,
        submitted_at=timezone.now(),
        finish_reason="solution",
        total_time_ms=1000,
        label_steps=dumps_label_steps(steps),
        **label_counters(steps),
    )


STEPS = [
    "Substitute $x = 3$: $x^2 = 3^2$.",
    "So $x^2 = 9$.",
    "Adding one, $$x^2 + 1 = 10.$$ The answer is $\\boxed{10}$.",
]


def login(page: Page, username: str, next_path: str) -> None:
    """Log in at /accounts/login/ with the keyboard, landing on next_path."""
    page.goto(f"/accounts/login/?next={next_path}")
    page.get_by_label("Username").focus()
    page.keyboard.type(username)
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(f"**{next_path}")


def open_workspace(page: Page, username: str, slug: str = "algebra") -> None:
    login(page, username, f"/annotate/{slug}/")
    wait_ready(page)


def annotator_on(pages, steps: list[str] = STEPS, **project_fields) -> tuple[Page, Solution]:
    """The workspace tests' common start: a project (`make_project(**project_fields)`), the
    annotator "ann" in it, one solution of `steps`, and ann's workspace open on it."""
    project = make_project(**project_fields)
    make_user("ann", project)
    solution = make_solution(project, steps)
    page = pages.page()
    open_workspace(page, "ann")
    return page, solution


def open_second_tab(pages, ctx, slug: str = "algebra") -> Page:
    """Another tab of the same browser (`ctx`: shared cookies and localStorage) on the workspace."""
    page = pages.page(ctx)
    page.goto(f"/annotate/{slug}/")
    wait_ready(page)
    return page


def wait_ready(page: Page) -> None:
    """The task is on screen (the first step shown) or the empty-queue message is."""
    page.locator(".sl-step:visible, .sl-empty:visible").first.wait_for()


def current_step(page: Page):
    return page.locator(".sl-step.sl-current")


def visible_steps(page: Page):
    return page.locator(".sl-step:visible")


def expect_rated(page: Page, n: int) -> None:
    """n steps carry a rating (their pressed button)."""
    expect(page.locator(".sl-step > .sl-rate-group .sl-rate[aria-pressed=true]")).to_have_count(n)


def close_mid_critique(page: Page, text: str) -> None:
    """Rate step 1 Negative, type a critique of it without Enter (not saved into the labels; the
    draft keeps the text) and close the tab mid-sentence."""
    page.keyboard.press("1")
    expect(page.locator(".sl-save")).to_have_text("Saved")
    page.keyboard.press("e")
    critique = page.locator("#sl-critique-0")
    expect(critique).to_be_focused()
    critique.type(text)
    page.wait_for_timeout(300)  # the draft's local save
    page.close()


def expect_empty_queue(page: Page) -> None:
    expect(page.get_by_role("heading", name="No more solutions to label right now")).to_be_visible()


def annotation_for(solution: Solution) -> Annotation:
    return Annotation.objects.get(solution=solution)


def label_steps(annotation: Annotation) -> list[dict]:
    return json.loads(annotation.label_steps)


def main_ratings(annotation: Annotation) -> list[int | None]:
    return [s["completions"][0]["rating"] for s in label_steps(annotation)]


# Test runs write to test-results/ (ignored); the copies we looked at are in bench/results/screenshots/.
SHOTS = Path(os.environ.get("SCREENSHOT_DIR", Path(__file__).resolve().parents[2] / "test-results" / "screenshots"))

# Pixels of one colour (#rrggbb, within 6 per channel) in the canvas inside an element: a chart drew that series.
COUNT_COLOR_PIXELS = """([el, hex]) => {
  const canvas = el.querySelector("canvas");
  if (!canvas || !canvas.width || !canvas.height) return 0;
  const want = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  let n = 0;
  for (let i = 0; i < data.length; i += 4) {
    if (data[i + 3] > 200 && want.every((v, k) => Math.abs(data[i + k] - v) <= 6)) n++;
  }
  return n;
}"""


# Phone layouts: a table whose rows stack as cards under a narrow media query.
# [scrollWidth, clientWidth] of the page: equal when nothing scrolls sideways.
PAGE_WIDTHS = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"


def stacked_labels(row, *, data_cells_only: bool = False) -> list[str]:
    """The column name each shown cell of a table row carries as its ::before content (quoted, as
    CSS gives it; "none" where it shows none): what a stacked row's cells say they are."""
    keep = "c.tagName === 'TD' && " if data_cells_only else ""
    return row.evaluate(
        f"row => [...row.cells].filter(c => {keep}getComputedStyle(c).display !== 'none')"
        ".map(c => getComputedStyle(c, '::before').content)"
    )


def cell_tops(cells) -> set[int]:
    """The distinct tops of `cells` (a locator): one when their row is laid out as a table row."""
    return {round(cells.nth(i).bounding_box()["y"]) for i in range(cells.count())}
