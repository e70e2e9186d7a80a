"""Where the pages used to go quiet: screening that asks for more answers than the project has
screening questions (the annotator's empty queue says why, the lead's dashboard warns), and
annotator medians that wait for the statistics snapshot (they say "pending", not "—")."""

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


def test_medians_of_labels_newer_than_the_snapshot_say_pending(pages):
    """Medians come from the statistics snapshot; an annotator whose labels all came after it
    showed "—" with no reason until the next refresh."""
    from django.core.cache import cache

    from annotate.selectors import stats
    from annotate.selectors.stats import snapshot as stats_snapshot
    from tests.e2e.helpers import store_label

    project = make_project("medians")
    make_user("lena", project, Role.LEAD)
    early, late = make_user("early", project), make_user("late", project)
    steps = [{"completions": [{"text": t, "rating": 1, "flagged": False}], "human_completion": None} for t in STEPS]
    for step in steps:
        step["chosen_completion"] = 0
    store_label(make_solution(project, STEPS), early, steps, labeler_uuid="7b4f3a52-0000-4000-8000-00000000000a")
    key = stats_snapshot._snapshot_key(project)
    cache.delete_many([key, f"{key}:refreshing"])
    stats.project_stats(project=project)  # the snapshot: early's label is in it
    store_label(make_solution(project, STEPS), late, steps, labeler_uuid="7b4f3a52-0000-4000-8000-00000000000b")

    page = pages.page()
    login(page, "lena", "/dashboard/medians/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    rows = page.locator('[data-slot="annotators"] tbody tr')
    expect(rows.filter(has_text="late").locator("td").nth(4)).to_have_text("pending")
    expect(rows.filter(has_text="early").locator("td").nth(4)).to_have_text("1.0 s")
    cache.delete_many([key, f"{key}:refreshing"])
