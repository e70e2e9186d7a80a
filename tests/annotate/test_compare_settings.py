"""The new-project form of a compare project through Django's test client on PostgreSQL: the
step-only settings, hidden in the browser while Compare is chosen but still posted, are not stored."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from annotate.models import Project
from annotate.services.projects import PROJECT_CREATORS

pytestmark = pytest.mark.django_db


def test_step_only_settings_ticked_before_choosing_compare_are_not_stored(client):
    lead = get_user_model().objects.create_user("lena", password="pw-steplabel-test")
    lead.groups.add(Group.objects.get(name=PROJECT_CREATORS))
    client.force_login(lead)
    form = {
        "name": "Agent pairs",
        "slug": "agent-pairs",
        "overlap": "1",
        "qc_rate": "0",
        "retrain_every": "100",
        "content_kind": "trace",
        "guidelines": "",
        # ticked while Steps was chosen, then hidden by choosing Compare (the page still posts them)
        "selection_strategy": "uncertainty",
        "control_share": "0.2",
        "rate_observations": "on",
        "critique_required": "on",
    }
    assert client.post("/projects/new/", {**form, "task_kind": "compare"}).status_code == 302
    pairs = Project.objects.get(slug="agent-pairs")
    defaults = Project()
    assert (pairs.rate_observations, pairs.critique_required) == (False, False)
    assert (pairs.selection_strategy, pairs.control_share) == (defaults.selection_strategy, defaults.control_share)
    # a steps project keeps them as posted
    assert client.post("/projects/new/", {**form, "slug": "agent-steps", "task_kind": "steps"}).status_code == 302
    steps = Project.objects.get(slug="agent-steps")
    assert (steps.rate_observations, steps.critique_required, steps.selection_strategy) == (True, True, "uncertainty")
