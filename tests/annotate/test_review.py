"""annotate/review.py: the steps of a label as a lead reviews it in the admin, numbered as the
workspace ("Step 1 of 3"), the dashboard's disagreements ("ann: step 2") and the admin's
side-by-side of human and automatic labels number them, from 1."""

from __future__ import annotations

import re

import pytest

from annotate.models import Role
from annotate.review import review_table
from tests.e2e.helpers import STEPS, make_project, make_solution, make_user, store_label

pytestmark = pytest.mark.django_db


def _cells(html: str) -> list[list[str]]:
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", html, flags=re.S)[1:]  # the header row left out
    return [re.findall(r"<td>(.*?)</td>", row, flags=re.S) for row in rows]


def _step(text: str, rating: int) -> dict:
    completion = {"text": text, "rating": rating, "flagged": False}
    return {"completions": [completion], "human_completion": None, "chosen_completion": None if rating == -1 else 0}


def test_steps_are_numbered_from_1_as_the_dashboard_names_the_first_error():
    project = make_project("review")
    ann = make_user("ann", project, Role.ANNOTATOR)
    steps = [_step(STEPS[0], 1), _step(STEPS[1], -1)]
    solution = make_solution(project, STEPS)
    annotation = store_label(solution, ann, steps, labeler_uuid="7b4f3a52-0000-4000-8000-00000000000a")
    annotation.first_error_index = 1  # the second step, which the dashboard calls "step 2"
    html = str(review_table(annotation))
    assert [cells[0] for cells in _cells(html)] == ["1", "2", "3"]
    shaded = re.search(r'<tr style="background:#ffebe9"><td>(\d+)</td>', html)
    assert shaded and shaded.group(1) == "2"
