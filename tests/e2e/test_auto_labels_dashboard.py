"""The dashboard's automatic-labels panel in Chromium: coverage, agreement with people, the latest job."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone
from playwright.sync_api import expect

from annotate.models import Annotation, AnnotationSource, Project, Role, Solution
from autolabel.models import AutolabelJob, AutolabelSettings
from core.models import JobStatus
from prm800k.labels import label_counters
from prm800k.records import dumps_label_steps
from tests.e2e.helpers import login, make_user
from tests.factories import gold_label_steps

pytestmark = pytest.mark.django_db(transaction=True)
SHOTS = Path(os.environ.get("SCREENSHOT_DIR", Path(__file__).resolve().parents[2] / "test-results" / "screenshots"))
TAG = "ки"


def _line(i: int, marks: str) -> str:
    text = f"Problem {i}: how many? " + "\n".join(f"Step {k + 1}: part {k} {TAG}" for k in range(len(marks)))
    label = text
    for mark in marks:
        label = label.replace(TAG, mark, 1)
    return json.dumps({"input": text, "label": label, "task": "GSM8K"})


def test_lead_sees_automatic_labels_and_their_agreement_with_people(pages, tmp_path: Path) -> None:
    source = tmp_path / "ms.jsonl"
    source.write_text("".join(_line(i, m) + "\n" for i, m in enumerate(["++-", "+++", "-++", "++-"])))
    call_command("import_prm800k", str(source), project="algebra", no_progress=True, stdout=io.StringIO())
    project = Project.objects.get(slug="algebra")
    make_user("lena", project, role=Role.LEAD)
    # People labeled two of them: one agrees on the first error (step 3), one finds it at step 2.
    for text, ratings in (("Problem 0:", [1, 1, -1]), ("Problem 3:", [1, -1])):
        steps = gold_label_steps(ratings)
        Annotation.objects.create(
            project=project,
            solution=Solution.objects.get(problem__text__startswith=text),
            labeler_uuid="h",
            source=AnnotationSource.IMPORT,
            submitted_at=timezone.now(),
            finish_reason="found_error",
            label_steps=dumps_label_steps(steps),
            **label_counters(steps),
        )
    AutolabelSettings.objects.create(project=project, completions_used=1200, completions_budget=50000)
    job = AutolabelJob.objects.create(
        project=project,
        base_url="http://gpu:8000/v1",
        model="qwen",
        status=JobStatus.RUNNING,
        solutions_total=40,
        solutions_done=12,
        completions_used=1200,
    )

    page = pages.page()
    login(page, "lena", "/dashboard/algebra/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    panel = page.locator("#auto-labels")
    expect(panel.locator(".sl-figure")).to_have_count(4)
    expect(panel).to_contain_text("solutions with auto labels")
    expect(panel).to_contain_text("4 on every step · imported Math-Shepherd 4")
    # Problem 0: same first error; Problem 3: automatic `+` on the human's error step, `-` one later.
    expect(panel).to_contain_text("50.0%")  # first-error agreement over 2 labels
    expect(panel).to_contain_text("over 2 labels")
    expect(panel).to_contain_text("100.0% / 50.0%")  # precision / recall of `-`
    expect(panel).to_contain_text(f"#{job.pk} running")  # ids move on across a full run
    expect(panel).to_contain_text("12 / 40 solutions")
    expect(panel.locator('[data-slot="auto-note"]')).to_contain_text("1,200 of 50,000 completions used")
    SHOTS.mkdir(parents=True, exist_ok=True)
    panel.scroll_into_view_if_needed()
    panel.screenshot(path=str(SHOTS / "dashboard-auto-labels.png"))


def test_lead_compares_human_and_automatic_labels_in_the_admin(pages, tmp_path: Path) -> None:
    from annotate.services.members import add_member
    from autolabel.models import AutoSource, AutoStepLabel

    source = tmp_path / "ms.jsonl"
    source.write_text(_line(0, "++-") + "\n")
    call_command("import_prm800k", str(source), project="algebra", no_progress=True, stdout=io.StringIO())
    project = Project.objects.get(slug="algebra")
    lead = make_user("lena")
    add_member(project=project, user=lead, role=Role.LEAD)  # leads are staff with the Leads group
    solution = Solution.objects.get()
    AutoStepLabel.objects.create(
        solution=solution, index=0, source=AutoSource.ROLLOUT, label=1, estimate=0.5, n_completions=8, n_correct=4
    )
    steps = gold_label_steps([1, -1])
    Annotation.objects.create(
        project=project,
        solution=solution,
        labeler_uuid="h",
        source=AnnotationSource.IMPORT,
        submitted_at=timezone.now(),
        finish_reason="found_error",
        label_steps=dumps_label_steps(steps),
        **label_counters(steps),
    )
    page = pages.page()
    login(page, "lena", f"/admin/autolabel/autolabeledsolution/{solution.pk}/change/")
    table = page.locator(".field-labels table")
    expect(table.locator("tbody tr")).to_have_count(3)
    rows = [[cell.strip() for cell in row.split("\t")] for row in table.locator("tbody").inner_text().splitlines()]
    assert rows == [
        ["1", "part 0", "+1", "+", "+ (0.50 of 8)"],
        ["2", "part 1", "-1", "+", "·"],
        ["3", "part 2", "·", "-", "·"],
    ]
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "admin-solution-labels.png"), full_page=True)
