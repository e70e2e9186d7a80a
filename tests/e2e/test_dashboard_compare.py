"""The dashboard of a compare project in Chromium (issue 16): the pair section shows gold-pair
accuracy, agreement on pairs, agreement with the graded answers and position bias from
…/compare-stats/, and the reward model's held-out pairwise accuracy, which is also the learning
curve (against preferences). Screenshot: test-results/screenshots/dashboard-compare.png."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import transaction
from django.db.models import Count
from django.utils import timezone
from playwright.sync_api import expect

from annotate.models import Assignment, AssignmentStatus, Comparison, Preference, Role
from annotate.services.compare.marks import record_marks
from annotate.services.imports import import_file
from ml.models import TrainingRun
from tests.e2e.helpers import COUNT_COLOR_PIXELS, SHOTS, login, make_project, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _line(problem: str, answer: str, steps: list[str], truth: str) -> dict:
    return {"problem": problem, "ground_truth_answer": truth, "steps": steps, "answer": answer}


LINES = [
    _line("What is $\\frac{1}{2} + \\frac{1}{4}$?", "3/4", ["So the sum is $\\frac{3}{4}$.", "# Answer\n\n3/4"], "3/4"),
    _line("What is $\\frac{1}{2} + \\frac{1}{4}$?", "2/6", ["Add tops and bottoms.", "# Answer\n\n2/6"], "3/4"),
    _line("Solve $2x = 10$.", "5", ["Divide by 2: $x = 5$.", "# Answer\n\n5"], "5"),
    _line("Solve $2x = 10$.", "8", ["Subtract 2: $x = 8$.", "# Answer\n\n8"], "5"),
    _line("What is $7 \\cdot 6$?", "42", ["$7 \\cdot 6 = 42$.", "# Answer\n\n42"], "42"),
    _line("What is $7 \\cdot 6$?", "42", ["Six sevens are $42$.", "# Answer\n\n42"], "42"),
]


def _build(tmp_path: Path):
    project = make_project("duel", name="Which is better", task_kind="compare", overlap=3)
    lead = make_user("lena", project, Role.LEAD)
    annotators = [make_user(name, project) for name in ("ann", "bo", "cy")]
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    import_file(project=project, path=path)
    pairs = list(Comparison.objects.filter(project=project).select_related("solution_a", "solution_b").order_by("id"))
    graded = [p for p in pairs if p.solution_a.answer_correct != p.solution_b.answer_correct]
    gold = next(p for p in pairs if p not in graded)
    Comparison.objects.filter(pk=gold.pk).update(is_gold=True, gold_preference="A")
    right = {p.pk: "A" if p.solution_a.answer_correct else "B" for p in graded}
    wrong = {k: "B" if v == "A" else "A" for k, v in right.items()}
    # (pair, annotator, preferred in pair terms, shown on the left?)
    answers = [
        (graded[0], 0, right[graded[0].pk], True),
        (graded[0], 1, right[graded[0].pk], False),
        (graded[0], 2, wrong[graded[0].pk], True),
        (graded[1], 0, right[graded[1].pk], True),
        (graded[1], 1, right[graded[1].pk], False),
        (gold, 0, "A", True),
        (gold, 1, "B", False),
    ]
    now = timezone.now()
    for i, (pair, who, preferred, left) in enumerate(answers):
        swapped = (preferred == "A") != left  # shown "A" (left) is solution_b when swapped
        Preference.objects.create(
            project=project,
            comparison=pair,
            annotator=annotators[who],
            labeler_uuid=str(annotators[who].pk),
            preferred=preferred,
            shown="A" if left else "B",
            swapped=swapped,
            strength=2,
            is_gold=pair.pk == gold.pk,
            idempotency_key=f"k{i}",
            submitted_at=now - timedelta(minutes=i),
        )
    for i, (labels, accuracy, ci, n) in enumerate([(4, 0.55, [0.45, 0.65], 40), (7, 0.62, [0.52, 0.71], 90)]):
        TrainingRun.objects.create(
            project=project,
            status="succeeded",
            label_count=labels,
            is_active=i == 1,
            metrics={
                "model": "bradley_terry",
                "heldout": {"pairwise_accuracy": accuracy, "pairwise_accuracy_ci": ci, "n_pairs": n},
            },
            finished_at=now - timedelta(hours=3 - i),
        )
    return lead


def _mark_first_wrong(project) -> None:
    """One preference marks solution B's first step wrong, its pair served in generation 1 (after a
    reward model ordered the pairs): a step label of that solution (compare/marks.py)."""
    preference = Preference.objects.filter(project=project).order_by("id").first()
    pair = preference.comparison
    preference.assignment = Assignment.objects.create(
        project=project,
        solution_id=pair.solution_a_id,
        comparison=pair,
        annotator=preference.annotator,
        status=AssignmentStatus.SUBMITTED,
        lease_expires_at=timezone.now(),
        generation=1,
    )
    preference.first_wrong_b, preference.total_time_ms = 0, 900
    preference.save(update_fields=["assignment", "first_wrong_b", "total_time_ms"])
    with transaction.atomic():  # as a submit stores it
        record_marks(preference=preference)


def test_lead_sees_pair_quality_and_the_reward_models_pairwise_accuracy(pages, tmp_path):
    lead = _build(tmp_path)
    _mark_first_wrong(lead.memberships.get().project)
    page = pages.page()
    login(page, "lena", "/dashboard/duel/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    figures = page.locator('[data-slot="compare-figures"]')
    expect(figures.locator('[data-figure="gold"]')).to_contain_text("50.0%")  # 1 of 2 gold answers
    expect(figures.locator('[data-figure="gold"]')).to_contain_text("2 answers on gold pairs")
    expect(figures.locator('[data-figure="agreement"]')).to_contain_text("40.0%")  # 2 of 5 annotator pairs
    expect(figures.locator('[data-figure="grading"]')).to_contain_text("80.0%")  # 4 of 5 preferred the right one
    expect(figures.locator('[data-figure="position"]')).to_contain_text("57.1%")  # 4 of 7 chose the left
    # 7 decided answers: too few to tell a position bias, which the note says instead of implying none
    expect(figures.locator('[data-figure="position"]')).to_contain_text("too few answers to tell (n=7")
    expect(figures.locator('[data-figure="position"]')).not_to_have_class(re.compile("sl-warn"))
    reward = figures.locator('[data-figure="reward"]')
    expect(reward).to_contain_text("0.620 (0.52–0.71)")
    expect(reward).to_contain_text("run #")
    expect(reward).to_contain_text("90 held-out pairs")
    expect(page.locator('[data-slot="compare-note"]')).to_contain_text("7 preferences on 3 pairs")
    # the learning curve is the reward model's pairwise accuracy against preferences
    curve = page.locator('[data-chart="curve"]')
    expect(curve).to_have_attribute("data-drawn", "true")
    expect(curve.locator(".u-legend")).to_contain_text("Pairwise accuracy")
    assert page.evaluate(COUNT_COLOR_PIXELS, [curve.element_handle(), "#1f6feb"]) > 20
    expect(page.locator('[data-slot="curve-note"]')).to_contain_text("7 preferences): pairwise accuracy 0.620")
    expect(page.locator("#model h3")).to_contain_text("against preferences")
    expect(page.locator('[data-slot="runs"] thead')).to_contain_text("Preferences")
    expect(page.locator('[data-slot="runs"] tr.sl-active')).to_contain_text("90 pairs")
    # the step-label cards say what they count here, and the solutions' queue card is not shown
    expect(page.locator('[data-slot="throughput-note"]')).to_contain_text("not preferences")
    expect(page.locator('[data-slot="agreement"]')).to_contain_text("under Pairs and the reward model")
    expect(page.locator("#queue")).to_have_count(0)
    # Progress: pairs are queued, never a solution, so no solution reads "queued without a model"
    # (a reward model is active); the mark's step label counts under its pair's generation
    progress = page.locator("#progress")
    expect(progress.locator("[data-generation]")).to_have_text(
        [
            "all solutions: 1 of 6 solutions with a step label; their labels count under the generation their pair "
            "was served in",
            "pairs served in gen 1: 1 step label from first-wrong marks, 1 step",
        ]
    )
    expect(progress.locator("p.sl-figure-note")).to_contain_text("queues pairs, not solutions")
    expect(progress).not_to_contain_text("queued without a model")
    # the annotators table counts each one's preferences, beside the step labels the marks made
    table = page.locator('[data-slot="annotators"]')
    expect(table.locator("thead th").nth(1)).to_have_text("Preferences")
    counts = {
        row.locator("th").inner_text(): int(row.locator("td").nth(0).inner_text())
        for row in table.locator("tbody tr").all()
    }
    expected = dict(
        Preference.objects.values("annotator__username").annotate(n=Count("id")).values_list("annotator__username", "n")
    )
    assert {k: v for k, v in counts.items() if k in expected} == expected and sum(expected.values()) == 7
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#pairs").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "dashboard-compare.png"))
    progress.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "dashboard-compare-progress.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    progress.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "dashboard-compare-progress-390.png"))
    page.set_viewport_size({"width": 1440, "height": 900})
    page.locator("#model").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "dashboard-compare-model.png"))


def test_a_steps_project_has_no_pair_section(pages):
    project = make_project("steps-only")
    make_user("lena", project, Role.LEAD)
    page = pages.page()
    login(page, "lena", "/dashboard/steps-only/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    expect(page.locator("#pairs")).to_have_count(0)
    expect(page.locator("#model h3")).to_contain_text("against step labels")


def test_a_reward_model_trained_without_held_out_pairs_is_named_not_missing(pages, tmp_path):
    """A run on too few problems to hold any out is the active reward model: the pair section names
    it (trained, not measured) instead of saying there is no trained reward model."""
    lead = _build(tmp_path)
    project = lead.memberships.get().project
    TrainingRun.objects.filter(project=project).delete()
    TrainingRun.objects.create(
        project=project,
        status="succeeded",
        label_count=4,
        is_active=True,
        metrics={"model": "bradley_terry", "heldout": {"pairwise_accuracy": None, "n_pairs": 0}},
        finished_at=timezone.now(),
    )
    page = pages.page()
    login(page, "lena", "/dashboard/duel/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    reward = page.locator('[data-slot="compare-figures"] [data-figure="reward"]')
    expect(reward).to_contain_text("is trained but not measured")
    expect(reward).not_to_contain_text("no trained reward model yet")
    run = TrainingRun.objects.get(project=project)
    expect(reward).to_contain_text(f"run #{run.pk} (4 preferences)")
