"""Screening that asks for more answers than the project has screening questions: the annotator's
empty queue says why (not "everything is labeled"), and the lead's dashboard warns."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotate.models import Role
from tests.e2e.helpers import STEPS, login, make_project, make_solution, make_user, open_workspace

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_too_few_screening_questions_are_explained_to_the_annotator_and_the_lead(pages):
    project = make_project(screening_required=2)
    make_user("ann", project)
    make_user("lena", project, Role.LEAD)
    for _ in range(3):
        make_solution(project, STEPS)  # regular work, held back until screening passes

    page = pages.page()
    open_workspace(page, "ann")
    empty = page.locator(".sl-empty")
    expect(empty).to_be_visible()
    expect(empty).to_contain_text("asks for 2 screening answers before regular work, and you have given 0")

    lead = pages.page()
    login(lead, "lena", f"/dashboard/{project.slug}/")
    lead.locator("#sl-dashboard[data-loaded=true]").wait_for()
    expect(lead.locator('[data-slot="quality-note"]')).to_contain_text(
        "Screening asks each annotator for 2 answers before regular work, but the project has 0 screening questions"
    )
