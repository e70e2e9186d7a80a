"""A project's autolabel budget in the admin: a lead's change is an audit event, and the operator's
AUTOLABEL_MAX_BUDGET caps what a lead (not a superuser) may set it to."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotate.models import AuditEvent
from autolabel.models import AutolabelSettings
from tests.security.world import build_world

pytestmark = pytest.mark.django_db


def _save(client: Client, row: AutolabelSettings, budget: int):
    return client.post(
        f"/admin/autolabel/autolabelsettings/{row.pk}/change/",
        {"project": row.project_id, "completions_budget": budget, "disagreement_first": "on"},
    )


def test_a_leads_budget_change_is_audited_and_capped_by_the_operator(settings):
    world = build_world()
    row = world.rows["autolabel.autolabelsettings"]
    before = row.completions_budget
    lead = world.session_client("lead")
    settings.AUTOLABEL_MAX_BUDGET = 500_000

    refused = _save(lead, row, 500_001)
    assert refused.status_code == 200
    assert refused.context["adminform"].form.errors["completions_budget"] == [
        "At most 500,000 completions (AUTOLABEL_MAX_BUDGET, set by the operator); ask a superuser for more."
    ]
    row.refresh_from_db()
    assert row.completions_budget == before and not AuditEvent.objects.filter(action="autolabelsettings.changed")

    assert _save(lead, row, 500_000).status_code == 302
    event = AuditEvent.objects.get(action="autolabelsettings.changed")
    assert event.actor == world.users["lead"] and event.project == world.project
    assert event.details["changes"]["completions_budget"] == [before, 500_000]
    assert event.details["changes"]["disagreement_first"] == [False, True]

    root = Client()
    root.force_login(get_user_model().objects.create_superuser("root", "root@example.com", "pw"))
    assert _save(root, row, 2_000_000).status_code == 302  # the operator's own account is not capped
    row.refresh_from_db()
    assert row.completions_budget == 2_000_000
    settings.AUTOLABEL_MAX_BUDGET = None  # unset: no cap for anyone
    assert _save(lead, row, 3_000_000).status_code == 302
