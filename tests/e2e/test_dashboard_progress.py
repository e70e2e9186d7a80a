"""The dashboard's progress, ETA and learning-curve figures on a project as a new lead first sees it:
14 imported solutions (queued without a model), 6 labeled in the first 4 minutes, one early training run."""

from __future__ import annotations

import hashlib
import io
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone
from playwright.sync_api import expect

from annotate.models import Annotation, Comparison, Problem, Project, Role, Solution, Step
from ml import services
from ml.models import TrainingRun
from prm800k.labels import label_counters
from prm800k.records import dumps_label_steps
from tests.e2e.helpers import login, make_user
from tests.ml.loop_helpers import TINY, planted_project

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _hash(*parts) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def fresh_project() -> Project:
    project = Project.objects.create(slug="fresh", name="Fresh import", overlap=1, current_generation=0)
    make_user("lena", project, Role.LEAD)
    ann = make_user("ann", project)
    solutions = []
    for i in range(14):
        problem = Problem.objects.create(
            project=project, text=f"Problem {i}", content_hash=_hash("p", i), text_hash=_hash("t", i)
        )
        solutions.append(
            Solution.objects.create(project=project, problem=problem, content_hash=_hash("s", i), n_steps=3)
        )
        Step.objects.bulk_create([Step(solution=solutions[-1], index=k, text=f"step {k}") for k in range(3)])
    # The first 4 minutes of labeling: the claim serves imported solutions in the current generation.
    now = timezone.now()
    start = now - timedelta(minutes=4)
    if start.hour != now.hour:  # keep the 4 minutes in one clock hour, as the scenario has it, and in the past
        start = now.replace(minute=0, second=0, microsecond=0) - timedelta(minutes=5)
    for i, solution in enumerate(solutions[:6]):
        steps = [
            {
                "completions": [{"text": f"step {k}", "rating": 1, "flagged": False}],
                "human_completion": None,
                "chosen_completion": 0,
            }
            for k in range(3)
        ]
        Annotation.objects.create(
            project=project,
            solution=solution,
            annotator=ann,
            labeler_uuid=str(ann.pk),
            submitted_at=start + timedelta(seconds=40 * i),
            generation=0,
            finish_reason="solution",
            total_time_ms=35_000,
            label_steps=dumps_label_steps(steps),
            **label_counters(steps),
        )
        Solution.objects.filter(pk=solution.pk).update(annotation_count=1, is_open=False)
    heldout = {
        "accuracy": 1.0,
        "first_error_f1": 1.0,
        "auroc_negative": 1.0,
        "ece": 0.05,
        "n_steps": 4,
        "n_solutions": 2,
        "accuracy_ci": [0.51, 1.0],
        "first_error_f1_ci": [0.0, 1.0],
    }
    TrainingRun.objects.create(
        project=project, status="succeeded", label_count=19, is_active=True, metrics={"heldout": heldout}
    )
    return project


def test_progress_legend_agrees_with_the_headline_and_small_heldout_is_called_out(pages, screenshot):
    fresh_project()
    page = pages.page()
    login(page, "lena", "/dashboard/fresh/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()

    figures = page.locator('[data-slot="progress-figures"]')
    expect(figures).to_contain_text("18steps labeled")
    # The legend lists the generation the labels were served in: its steps add up to the headline.
    lines = page.locator('[data-chart="generations"] li[data-generation]').all_inner_texts()
    assert lines == [
        "queued without a model: 6 of 14 solutions labeled at least once; "
        "their labels count under the generation that served them",
        "gen 0 (no solutions of its own): 6 labels served, 18 steps",
    ]
    steps = sum(int(m) for line in lines for m in re.findall(r"(\d+) steps", line))
    assert steps == 18

    # 6 labels of 35 s in 4 minutes: 210 s of labeling, 8 labels to go -> 280 s, about 5 min (not
    # "32 h at 0.3/h" over the wall clock, nor "1.3 h at 6 per active hour" over the clock hour).
    expect(figures).to_contain_text("about 5 min")
    expect(figures).to_contain_text(
        "at 103 labels per hour of labeling (6 labels in 3 min 30 s of active labeling time, last 7 days)"
    )

    note = page.locator('[data-slot="curve-note"]')
    expect(note).to_contain_text("step accuracy 1.000 (0.51–1.00)")
    expect(note).to_contain_text("4 held-out steps, 2 solutions: too small to mean anything")
    expect(note).to_have_class(re.compile("sl-warn"))
    expect(page.locator('[data-slot="runs"] tbody td.sl-warn')).to_have_text("4 steps, 2 solutions (too small)")
    page.locator("#progress").scroll_into_view_if_needed()
    screenshot(page, "dashboard-progress-fresh")
    page.locator("#model").scroll_into_view_if_needed()
    screenshot(page, "dashboard-heldout-too-small")


def test_a_project_imported_already_labeled_reads_as_nothing_queued(pages, screenshot):
    # Every solution arrived labeled: no steps queued, no ETA, the file's generations marked as such.
    fixture = Path(__file__).resolve().parents[1] / "annotate" / "fixtures" / "edge_cases.jsonl"
    call_command("import_prm800k", str(fixture), project="done", no_progress=True, stdout=io.StringIO())
    project = Project.objects.get(slug="done")
    make_user("lena", project, Role.LEAD)
    n = Solution.objects.filter(project=project, is_gold=False, is_screening=False).count()
    page = pages.page()
    login(page, "lena", "/dashboard/done/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()

    figures = page.locator('[data-slot="progress-figures"]')
    expect(figures).to_contain_text(f"{n} / {n}solutions labeled")
    expect(figures).to_contain_text("0solutions open0 labels to go")
    expect(figures).to_contain_text("· 0 of ")
    expect(figures).to_contain_text("solution steps still queued")
    expect(figures).to_contain_text(f"emptyqueueall {n} solutions arrived labeled in an import")
    expect(figures).not_to_contain_text("queue done in")
    # The file's generation numbers are marked, not shown as if this project's models had made them.
    lines = page.locator('[data-chart="generations"] li[data-generation]').all_inner_texts()
    assert "gen 3 (imported): 1 of 1 solution labeled at least once; 1 label imported, 2 steps" in lines, lines
    assert "gen 9 (imported): 1 label imported, 1 step" in lines, lines  # a quality-control question's label
    assert all("served" not in line for line in lines), lines
    expect(page.locator('[data-chart="generations"]')).to_contain_text("PRM800K numbers its own rounds")
    page.locator("#progress").scroll_into_view_if_needed()
    screenshot(page, "dashboard-progress-imported-labeled")


def _dashboard_after_a_tiny_run(pages, tmp_path, slug: str, *, labeled: int, open_: int):
    """A planted project, one real (tiny) training run on its labels, and its lead's dashboard loaded."""
    project = planted_project(slug, labeled=labeled, open_=open_)
    make_user("lena", project, Role.LEAD)
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY):
        run = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
    assert run.status == "succeeded", run.error
    page = pages.page()
    login(page, "lena", f"/dashboard/{slug}/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    return run, page


def test_an_empty_learning_curve_says_why_and_what_to_do(pages, screenshot, tmp_path):
    # A real (tiny) run on labels of 3 problems: too few to hold any out, so no held-out metrics.
    run, page = _dashboard_after_a_tiny_run(pages, tmp_path, "few", labeled=12, open_=4)
    why = page.locator('[data-chart="curve"] [data-slot="curve-empty"]')
    expect(why).to_contain_text(f"Run #{run.pk} trained on labels of 3 problems: too few to hold any out")
    expect(why).to_contain_text("at least 4 problems")
    expect(why).to_contain_text("Label solutions of more problems, then retrain.")
    page.locator("#model").scroll_into_view_if_needed()
    screenshot(page, "dashboard-curve-empty-reason")


def test_the_curve_note_sets_the_prms_first_error_f1_beside_the_graded_answer_alone(pages, screenshot, tmp_path):
    # A real (tiny) run with problems held out: its held-out metrics carry the F1 of a reader with
    # no PRM (one constant first error per graded answer), and the note under the curve says both.
    run, page = _dashboard_after_a_tiny_run(pages, tmp_path, "beside", labeled=80, open_=10)
    heldout = run.metrics["heldout"]
    note = page.locator('[data-slot="curve-note"]')
    expect(note).to_contain_text(f"first-error F1 {heldout['first_error_f1']:.3f}")
    expect(note).to_contain_text(
        "Without a model, the graded answer alone (one constant first error per grade) scores "
        f"{heldout['grade_only_f1']:.3f} first-error F1 on these solutions; the PRM reads"
    )
    page.locator("#model").scroll_into_view_if_needed()
    screenshot(page, "dashboard-curve-note-grade-only")


def test_a_compare_projects_progress_counts_its_pairs(pages):
    # Solutions arrived labeled, and no problem has two different ones: no pairs. Progress counts
    # pairs and preferences (annotate.selectors.stats.pairs), not the labeled solutions.
    fixture = Path(__file__).resolve().parents[1] / "annotate" / "fixtures" / "edge_cases.jsonl"
    call_command("import_prm800k", str(fixture), project="duel", task="compare", no_progress=True, stdout=io.StringIO())
    make_user("lena", Project.objects.get(slug="duel"), Role.LEAD)
    page = pages.page()
    login(page, "lena", "/dashboard/duel/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    figures = page.locator('[data-slot="progress-figures"]')
    assert not Comparison.objects.filter(project__slug="duel").exists()
    expect(figures).to_contain_text("0 / 0pairs answered")
    expect(figures).to_contain_text("0pairs open0 preferences to go")
    # solutions came in, so "import solutions to pair" would send the lead to do what they did
    expect(figures).to_contain_text("emptyqueueno pairs: none of the ")
    expect(figures).to_contain_text("has another of its problem to pair with (import two or more per problem)")
    expect(figures).not_to_contain_text("solutions labeled")
    expect(figures).not_to_contain_text("arrived labeled")


def test_an_annotators_table_without_labels_says_so_under_its_header(pages):
    project = planted_project("nolabels", labeled=0, open_=4)
    make_user("lena", project, Role.LEAD)
    page = pages.page()
    login(page, "lena", "/dashboard/nolabels/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    table = page.locator('[data-slot="annotators"]')
    # one row under the column titles, across all of them (not a caption above the header)
    cell = table.locator("tbody tr td")
    expect(cell).to_have_count(1)
    expect(cell).to_have_text("No labels yet.")
    columns = table.locator("thead th").count()
    assert columns > 1 and cell.get_attribute("colspan") == str(columns)
    expect(table.locator("caption")).to_have_count(0)


def test_a_lead_rolls_back_from_the_runs_table_and_a_run_in_flight_does_not_undo_it(pages, screenshot, tmp_path):
    """Two real (tiny) runs; the lead activates the first from the runs table while a third waits.
    The third then finishes: it succeeds, the first stays the active model, and its row says why."""
    project = planted_project("rollback", labeled=60, open_=10)
    make_user("lena", project, Role.LEAD)
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY):
        first = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
        second = services.run_training(
            run_id=services.request_retrain(project=project, config={"seed": 7}, enqueue=False).pk
        )
        waiting = services.request_retrain(project=project, config={"seed": 8}, enqueue=False)
        page = pages.page()
        login(page, "lena", "/dashboard/rollback/")
        page.locator("#sl-dashboard[data-loaded=true]").wait_for()
        runs = page.locator('[data-slot="runs"]')
        expect(runs.locator("tr.sl-active th")).to_have_text(f"#{second.pk} (active)")
        expect(runs.get_by_role("button", name=f"Activate run #{second.pk}")).to_have_count(0)
        expect(runs.get_by_role("button", name=f"Activate run #{waiting.pk}")).to_have_count(0)  # not trained

        runs.get_by_role("button", name=f"Activate run #{first.pk}").click()
        message = page.locator('[data-slot="runs-message"]')
        expect(message).to_contain_text(f"Run #{first.pk} is the active model")
        expect(runs.locator("tr.sl-active th")).to_have_text(f"#{first.pk} (active)")
        # the redraw took the pressed button away: the keyboard's place is the note, not the page top
        expect(message).to_be_focused()
        first.refresh_from_db()
        assert first.is_active and first.activated_by.username == "lena"

        held = services.run_training(run_id=waiting.pk)
        assert held.status == "succeeded" and not held.is_active
        page.reload()
        page.locator("#sl-dashboard[data-loaded=true]").wait_for()
        expect(runs.locator("tr.sl-active th")).to_have_text(f"#{first.pk} (active)")
        held_row = runs.locator("tbody tr").filter(has_text=f"#{held.pk}")
        expect(held_row.locator('[data-slot="run-note"]')).to_contain_text(
            f"Not activated: a lead made run #{first.pk} the active model while this run waited or trained."
        )
        expect(held_row.get_by_role("button", name=f"Activate run #{held.pk}")).to_be_visible()
        page.locator("#model").scroll_into_view_if_needed()
        screenshot(page, "dashboard-rollback")

        # a model file gone from the server: the lead reads why, and nothing changes
        (tmp_path / second.artifact_path).unlink()
        runs.get_by_role("button", name=f"Activate run #{second.pk}").click()
        expect(message).to_have_text(
            f"Could not activate run #{second.pk}: 409: Run {second.pk}'s model file is missing."
        )
        expect(message).to_have_class(re.compile("sl-error"))
    first.refresh_from_db()
    assert first.is_active
