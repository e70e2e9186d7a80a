"""The hand-checked code data set (tests/annotate/fixtures/code_steps.jsonl): 14 Python solutions in
PRM800K form (kind code), 8 with one planted bug whose first wrong step is rated -1 with a critique
and the corrected step. The labels are checked by running the code, the file round-trips through
import and export, and a lead reviews the critique and the flagged lines in the admin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.urls import reverse

from annotate.models import Annotation, Problem, Project
from annotate.services.exports import ExportOptions, iter_lines, plan_export
from annotate.services.imports import import_file

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "code_steps.jsonl"
RECORDS = [json.loads(line) for line in FIXTURE.read_text().splitlines()]


def _passes(steps: list[str], tests: str) -> bool:
    namespace: dict = {}
    try:
        exec("\n".join(steps) + "\n" + tests, namespace)  # our own fixture's code, a few lines each
    except AssertionError:
        return False
    return True


@pytest.mark.parametrize("record", RECORDS, ids=[r["question"]["problem"].split("`")[1] for r in RECORDS])
def test_labels_match_what_the_code_does(record):
    question, label = record["question"], record["label"]
    steps, tests = question["pre_generated_steps"], question["tests"]
    ratings = [s["completions"][0]["rating"] for s in label["steps"]]
    if label["finish_reason"] == "solution":
        assert ratings == [1] * len(steps) and _passes(steps, tests)
        return
    # One -1, on the last labeled step; the steps before it are +1 and the code fails its tests...
    wrong = len(label["steps"]) - 1
    assert ratings == [1] * wrong + [-1] and label["finish_reason"] == "found_error"
    assert not _passes(steps, tests)
    # ...and replacing that step alone by the corrected one makes them pass: it is where the bug is.
    fixed = [*steps[:wrong], label["steps"][wrong]["human_completion"]["text"], *steps[wrong + 1 :]]
    assert _passes(fixed, tests)
    assert label["steps"][wrong]["completions"][0]["critique"].strip()


def test_fixture_counts():
    assert len(RECORDS) == 14
    assert sum(r["label"]["finish_reason"] == "found_error" for r in RECORDS) == 8


@pytest.mark.django_db
def test_code_file_imports_and_exports_back_byte_exact():
    project = Project.objects.create(slug="code-fixture")
    result = import_file(project=project, path=FIXTURE)
    assert (result.solutions_created, result.annotations_created) == (14, 14)
    assert set(Problem.objects.filter(project=project).values_list("kind", "language")) == {("code", "python")}
    plan = plan_export(project=project, options=ExportOptions())
    assert "".join(iter_lines(plan=plan)) == FIXTURE.read_text()
    critiques = list(iter_lines(plan=plan_export(project=project, options=ExportOptions(format="critique"))))
    row = json.loads(critiques[0])
    assert row["verdicts"][-1]["lines"] == [3, 3] and row["verdicts"][-1]["rating"] == -1


@pytest.mark.django_db
def test_lead_reviews_critique_and_flagged_lines_in_the_admin(admin_client_pg):
    project = Project.objects.create(slug="code-review")
    import_file(project=project, path=FIXTURE)
    annotation = Annotation.objects.get(project=project, solution__problem__text__contains="binary_search")
    page = admin_client_pg.get(reverse("admin:annotate_annotation_change", args=[annotation.pk])).content.decode()
    assert "With lo &lt; hi the last candidate" in page  # the critique, escaped
    assert "lines 3–3" in page and "−1 Negative" in page and "code (python)" in page
    listing = admin_client_pg.get(reverse("admin:annotate_annotation_changelist"), {"project__id__exact": project.pk})
    assert "values[1] is the second smallest" in listing.content.decode()
