"""The dashboard's automatic-labels panel, walked through on PostgreSQL: a lead who imported
Math-Shepherd lines, gave their problems a ground truth in the admin and rolled them out has each
solution once in "solutions with auto labels", whatever its sources."""

from __future__ import annotations

import pytest

from annotate.models import Project, Role
from autolabel.models import AutoSource, AutoStepLabel
from tests.api_clients import member_client
from tests.factories import make_solutions

pytestmark = pytest.mark.django_db


def test_a_solution_with_both_sources_counts_once() -> None:
    project = Project.objects.create(slug="both")
    both, shepherd_only = make_solutions(project, 2, n_steps=2)
    for solution, sources in ((both, AutoSource.values), (shepherd_only, [AutoSource.MATH_SHEPHERD])):
        AutoStepLabel.objects.bulk_create(
            AutoStepLabel(solution=solution, index=i, source=source, label=1) for source in sources for i in range(2)
        )
    lead = member_client(project, "lead", Role.LEAD)
    panel = lead.get("/api/v1/projects/both/stats/").json()["auto_labels"]
    assert panel["by_source"] == {"math_shepherd": 2, "rollout": 1}
    assert panel["solutions_with_auto_labels"] == 2  # it said 3: the sources' counts added up
