"""A lead's admin edits to gold, QC and screening marks, open or closed, and a problem's answer leave
an audit row: who, when, the old and the new value (annotate.admin.audited). Left alone in earlier
notes: a lead could mark or unmark gold in the admin, moving every gold score, with no trace.
Real admin forms over HTTP (PostgreSQL); the rows are read as a superuser reads them, in the admin."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotate.models import AuditEvent, Comparison, Project, Role
from tests.api_clients import member_client
from tests.factories import make_solutions
from tests.security.test_admin_identity import _lead_of, duel, form_data  # noqa: F401  (duel: a fixture)

pytestmark = pytest.mark.django_db


def test_marking_a_solution_gold_and_changing_its_problems_answer_are_recorded():
    algebra = Project.objects.create(slug="algebra")
    solution = make_solutions(algebra, 1)[0]
    lead = _lead_of(algebra)
    url = f"/admin/annotate/solution/{solution.pk}/change/"
    data = form_data(lead.get(url))
    assert lead.post(url, data).status_code == 302  # saved unchanged: no row
    assert not AuditEvent.objects.exists()

    assert lead.post(url, {**data, "is_gold": "on", "is_quality_control": "on"}).status_code == 302
    event = AuditEvent.objects.get()
    assert event.action == "solution.changed" and event.project == algebra
    assert event.actor.username == "two-project-lead"
    assert event.details == {
        "id": solution.pk,
        "changes": {"is_gold": [False, True], "is_quality_control": [False, True]},
    }

    problem_url = f"/admin/annotate/problem/{solution.problem_id}/change/"
    before = solution.problem.ground_truth_answer
    data = form_data(lead.get(problem_url))
    assert lead.post(problem_url, {**data, "ground_truth_answer": "17"}).status_code == 302
    latest = AuditEvent.objects.order_by("-id").first()
    assert latest.action == "problem.changed"
    assert latest.details["changes"] == {"ground_truth_answer": [before, "17"]}

    # a superuser reads them in the admin's audit log; no lead or annotator sees the log
    root = Client()
    root.force_login(get_user_model().objects.create_superuser("boss", "boss@example.org", "pw"))
    page = root.get("/admin/annotate/auditevent/").content.decode()
    assert "solution.changed" in page and "problem.changed" in page
    assert lead.get("/admin/annotate/auditevent/").status_code == 403
    annotator = member_client(algebra, "alg-ann", Role.ANNOTATOR)
    assert annotator.get("/admin/annotate/auditevent/").status_code == 302  # not staff: to the login page


def test_unmarking_a_gold_pair_is_recorded(duel):  # noqa: F811
    lead = _lead_of(duel)
    pair = Comparison.objects.filter(project=duel).order_by("id").first()
    url = f"/admin/annotate/comparison/{pair.pk}/change/"
    data = form_data(lead.get(url))
    assert lead.post(url, {**data, "is_gold": "on", "gold_preference": "B"}).status_code == 302
    data = form_data(lead.get(url))
    data.pop("is_gold")
    assert lead.post(url, {**data, "gold_preference": ""}).status_code == 302
    marked, unmarked = AuditEvent.objects.filter(action="comparison.changed").order_by("id")
    assert marked.details["changes"] == {"is_gold": [False, True], "gold_preference": ["", "B"]}
    assert unmarked.details["changes"] == {"is_gold": [True, False], "gold_preference": ["B", ""]}
    assert marked.project == duel and unmarked.details["id"] == pair.pk
