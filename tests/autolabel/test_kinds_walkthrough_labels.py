"""A lead reads an agent trace's human and automatic labels side by side (API and admin), on
PostgreSQL: each step says its type, so the observation an annotator was shown but did not rate
is told apart from a step they left unrated, and a tool call from the agent's own words."""

from __future__ import annotations

import pytest
from django.test import Client

from annotate.models import Project, Role, Solution
from annotate.services.members import grant_lead_admin
from autolabel.models import AutoSource, AutoStepLabel
from tests.api_clients import member_client
from tests.autolabel.test_kinds_walkthrough_exports import TRACE
from tests.labeling_api.test_kinds_api import _upload

pytestmark = pytest.mark.django_db


def test_a_trace_side_by_side_names_each_step_type() -> None:
    project = Project.objects.create(slug="traces")
    lead = member_client(project, "lead", Role.LEAD)
    _upload(lead, "traces", [TRACE, {"problem": "What is 1+1?", "ground_truth_answer": "2", "steps": ["2"]}])
    trace = Solution.objects.get(problem__kind="trace")
    AutoStepLabel.objects.bulk_create(
        AutoStepLabel(solution=trace, index=i, source=AutoSource.ROLLOUT, label=1 if i < 3 else -1) for i in range(5)
    )
    view = lead.get(f"/api/v1/projects/traces/solutions/{trace.pk}/labels/").json()
    assert [step["type"] for step in view["steps"]] == ["thought", "tool_call", "observation", "thought", "answer"]
    math = Solution.objects.get(problem__kind="math")
    assert "type" not in lead.get(f"/api/v1/projects/traces/solutions/{math.pk}/labels/").json()["steps"][0]

    grant_lead_admin(user=lead.user)  # as add_member does for a lead
    browser = Client()
    browser.force_login(lead.user)
    page = browser.get(f"/admin/autolabel/autolabeledsolution/{trace.pk}/change/").content.decode()
    assert "<td>observation: Paris has 2.1 million inhabitants.</td>" in page
    assert "<td>tool call: search({&quot;q&quot;: &quot;population of Paris&quot;})</td>" in page
