"""The dashboard's live estimate of labels saved against the random control share, in Chromium:
"not enough data yet" with few control labelings, then the estimate with its 95% interval."""

from __future__ import annotations

import json
import os
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotate.models import (
    Annotation,
    AnnotationSource,
    Assignment,
    AssignmentStatus,
    Project,
    QueueOrigin,
    Role,
    Solution,
    Strategy,
)
from annotate.selectors.stats import project_stats
from prm800k.labels import label_counters
from prm800k.records import dumps_label_steps
from tests.e2e.helpers import login, make_project, make_solution, make_user

EVIDENCE = Path(__file__).resolve().parents[2] / "frontend" / "src" / "dashboard" / "simulation_evidence.json"

pytestmark = pytest.mark.django_db(transaction=True)
SHOTS = Path(os.environ.get("SCREENSHOT_DIR", Path(__file__).resolve().parents[2] / "test-results" / "screenshots"))


def _label(n_steps: int, first_error: int | None) -> list[dict]:
    last = n_steps - 1 if first_error is None else first_error
    return [
        {
            "completions": [{"text": f"step {i}", "rating": -1 if i == first_error else 1, "flagged": False}],
            "human_completion": None,
            "chosen_completion": None if i == first_error else 0,
        }
        for i in range(last + 1)
    ]


def _labeled(project, annotator, origin: str, n: int, *, n_steps: int, error_every: int) -> None:
    """n labelings of solutions queued by `origin`; every `error_every`-th has a first error at step 1."""
    now = timezone.now()
    for k in range(n):
        solution = make_solution(project, [f"step {i}" for i in range(n_steps)])
        Solution.objects.filter(pk=solution.pk).update(strategy=origin, is_open=False)
        assignment = Assignment.objects.create(
            project=project,
            solution=solution,
            annotator=annotator,
            status=AssignmentStatus.SUBMITTED,
            lease_expires_at=now + timedelta(minutes=30),
            strategy=origin,
        )
        label = _label(n_steps, 1 if k % error_every == 0 else None)
        Annotation.objects.create(
            project=project,
            solution=solution,
            assignment=assignment,
            annotator=annotator,
            labeler_uuid=f"u-{annotator.pk}",
            source=AnnotationSource.APP,
            submitted_at=now,
            finish_reason="found_error" if k % error_every == 0 else "solution",
            label_steps=dumps_label_steps(label),
            **label_counters(label),
        )


def test_savings_estimate_says_not_enough_data_then_shows_labels_saved_with_an_interval(pages):
    project = make_project("saving", selection_strategy=Strategy.VALUE, control_share=0.1)
    make_user("lena", project, Role.LEAD)
    ann = make_user("ann", project, Role.ANNOTATOR)
    # labels an earlier order served (the project ran Uncertainty first): counted apart
    _labeled(project, ann, Strategy.UNCERTAINTY, 7, n_steps=6, error_every=1)
    # the strategy's picks: a first error in every other solution, found after 2 labels
    _labeled(project, ann, Strategy.VALUE, 40, n_steps=6, error_every=2)
    _labeled(project, ann, QueueOrigin.CONTROL, 5, n_steps=6, error_every=4)

    page = pages.page()
    login(page, "lena", "/dashboard/saving/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    savings = page.locator('[data-slot="savings"]')
    # every solution labeled, five of them as controls: the estimate can never get its 20
    expect(savings).to_contain_text("no estimate possible in this queue: at its 10% control share it can give about")
    expect(savings).to_contain_text("about 5 control labelings in all")
    expect(savings).to_contain_text("7 labelings served by an earlier order or the cold start are not counted")

    # 30 more open solutions at half of them as controls: 5 + 15 = 20 can come, so it waits for labels
    for _ in range(30):
        make_solution(project, ["step 0", "step 1"])
    Project.objects.filter(pk=project.pk).update(control_share=0.5)
    page.reload()
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    expect(savings).to_contain_text("not enough data yet")
    expect(savings).to_contain_text("5 of the 20 control labelings it needs")
    expect(savings).not_to_contain_text("from the Value per label order")  # 40 of its labelings are enough

    # the control (random picks): a first error in every fourth solution
    _labeled(project, ann, QueueOrigin.CONTROL, 31, n_steps=6, error_every=4)
    est = project_stats(project=project, now=timezone.now())["queue"]["savings"]  # as the dashboard reads it
    assert est["status"] == "ok" and est["n_control"] == 36 and est["n_strategy"] == 40 and est["n_other"] == 7
    # strategy: 20 errors in 20*2 + 20*6 = 160 labels; control: 2 + 8 errors in 10*2 + 26*6 = 176 labels
    assert (est["labels_strategy"], est["errors_strategy"]) == (160, 20)
    assert (est["labels_control"], est["errors_control"]) == (176, 10)
    assert est["yield_ratio"] == pytest.approx((20 / 160) / (10 / 176), rel=1e-3)
    assert est["labels_saved"] == pytest.approx(160 * ((20 / 160) / (10 / 176) - 1), abs=0.1)
    lo, hi = est["labels_saved_ci"]
    assert lo < est["labels_saved"] < hi

    page.reload()
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    # the interval in the estimate's words (fewer or more than random), never a bare signed number
    expect(savings).to_contain_text(f"Labels saved vs random: {round(est['labels_saved'])} step labels (95% CI: ")
    expect(savings).to_contain_text(" fewer than random); ")
    expect(savings).not_to_contain_text(re.compile(r"CI -\d"))
    expect(savings).to_contain_text("first errors found per step label: 2.20x the random control")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#queue").scroll_into_view_if_needed()
    page.locator("#queue").screenshot(path=str(SHOTS / "dashboard-savings.png"))


def _evidence(strategy: str) -> tuple[bool, str]:
    """(any interval under zero, "on k of n splits" slower than random) from the shipped simulation results."""
    rows = json.loads(EVIDENCE.read_text())["strategies"][strategy]
    slower = [r for r in rows if r["efficiency"] is None or r["efficiency"] < 1]
    return any(r["aulc_diff_ci"][1] < 0 for r in rows), f"random's final F1 on {len(slower)} of {len(rows)} splits"


def test_a_strategy_that_lost_to_random_in_simulation_is_flagged_on_the_dashboard(pages):
    """Each order's caveat says what the shipped simulation says of it: a caution where its
    interval against random is under zero somewhere, and on how many splits it was slower."""
    project = make_project("unsure", selection_strategy=Strategy.UNCERTAINTY, control_share=0.0)
    make_user("lena", project, Role.LEAD)
    page = pages.page()
    login(page, "lena", "/dashboard/unsure/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    caveat = page.locator('[data-slot="strategy-caveat"]')
    for strategy in (Strategy.UNCERTAINTY, Strategy.VALUE, Strategy.CONVINCING_WRONG, Strategy.ANSWER_STRATIFIED):
        project.selection_strategy = strategy
        project.save()
        page.reload()
        page.locator("#sl-dashboard[data-loaded=true]").wait_for()
        below, slower = _evidence(strategy)
        expect(caveat).to_contain_text(slower)
        if below:
            expect(caveat).to_contain_text("Caution")
            expect(caveat).to_contain_text("below random with its 95% interval under zero on")
        else:
            expect(caveat).not_to_contain_text("Caution")
        if strategy == Strategy.ANSWER_STRATIFIED:  # the default: no savings promised
            expect(caveat).to_contain_text("It needs no model and stays the default by a rule written before")
        else:
            expect(caveat).to_contain_text("The default, Answer-stratified, needs no model and was kept by a rule")
    expect(page.locator('[data-slot="savings"]')).to_contain_text("no control share is set")
    project.selection_strategy = Strategy.RANDOM  # the baseline itself
    project.save()
    page.reload()
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    expect(caveat).to_have_text("")
    expect(page.locator('[data-slot="savings"]')).to_have_text(
        "Labels saved vs random: not applicable, the queue is in random order already."
    )
