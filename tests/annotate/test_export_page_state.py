"""The export page's "Export what is newer" link carries the past export's settings, and the page
reopened from it starts the same export from the cursor on (the form's fields, and hidden inputs
for options an API job set that the form has no field for)."""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qs

import pytest

from annotate.models import Export, Membership, Project, Role
from annotate.services.exports import ExportOptions, encode_cursor
from tests.factories import make_user


@pytest.mark.django_db
def test_export_what_is_newer_reopens_the_form_with_that_exports_settings(client):
    project = Project.objects.create(slug="exp-state", name="Export state")
    lead = make_user("lena")
    Membership.objects.create(project=project, user=lead, role=Role.LEAD)
    options = ExportOptions(
        format="trl",
        neutral="negative",
        finish_reason=["solution", "found_error"],
        generation=[0, 2],
        labeler="7b4f3a52-0000-4000-8000-000000000002",
        min_agreement=0.5,
    )
    cursor = encode_cursor(project=project, seq=7)
    Export.objects.create(
        project=project,
        requested_by=lead,
        status="succeeded",
        format="trl",
        filters={**options.as_dict(), "gzip": True, "cursor": cursor},
    )
    client.force_login(lead)
    page = client.get("/projects/exp-state/export/").content.decode()
    link = html.unescape(re.search(r'<a href="\?([^"]+)">Export what is newer</a>', page).group(1))
    assert parse_qs(link) == {
        "format": ["trl"],
        "generation": ["0,2"],
        "neutral": ["negative"],
        "finish_reason": ["solution", "found_error"],
        "gzip": ["true"],
        "labeler": ["7b4f3a52-0000-4000-8000-000000000002"],
        "min_agreement": ["0.5"],
        "since": [cursor],
    }
    reopened = client.get(f"/projects/exp-state/export/?{link}").content.decode()
    assert re.search(r'<option value="trl" selected>', reopened)
    assert re.search(r'<option value="negative" selected>', reopened)
    assert re.search(r'name="generation" value="0,2"', reopened)
    assert re.search(r'name="since" value="' + re.escape(cursor), reopened)
    assert len(re.findall(r'name="finish_reason" value="(solution|found_error)"[^>]*checked', reopened)) == 2
    assert re.search(r'name="gzip"[^>]*checked', reopened)
    # the options the form has no field for ride along as hidden inputs, and the page says so
    assert '<input type="hidden" name="labeler" value="7b4f3a52-0000-4000-8000-000000000002">' in reopened
    assert '<input type="hidden" name="min_agreement" value="0.5">' in reopened
    assert "Also from that export" in reopened


@pytest.mark.django_db
def test_the_format_menu_offers_the_projects_own_formats_and_keeps_a_reopened_one(client):
    steps = Project.objects.create(slug="exp-steps", name="Steps")
    duel = Project.objects.create(slug="exp-duel", name="Duel", task_kind="compare")
    lead = make_user("lena")
    for project in (steps, duel):
        Membership.objects.create(project=project, user=lead, role=Role.LEAD)
    client.force_login(lead)

    def options(page: str) -> list[str]:
        select = page.split('name="format"')[1].split("</select>")[0]
        return re.findall(r'<option value="([a-z_0-9]+)"', select)

    assert options(client.get("/projects/exp-steps/export/").content.decode()) == [
        "prm800k",
        "trl",
        "critique",
        "math_shepherd",
    ]
    # a compare project's first-wrong-step marks are step labels: the API exports them, so the page does
    assert options(client.get("/projects/exp-duel/export/").content.decode()) == ["preference", "prm800k", "trl"]
    # a past math_shepherd job with automatic labels reopens as one (it came back as PRM800K records)
    page = client.get("/projects/exp-steps/export/?format=math_shepherd&labels=auto&since=x").content.decode()
    assert '<option value="math_shepherd" selected>' in page and '<option value="auto" selected>' in page
    page = client.get("/projects/exp-duel/export/?format=preference&ties=include").content.decode()
    assert '<option value="preference" selected>' in page and '<option value="include" selected>' in page
    # the step-label filters are the step formats' only: a compare project's page leaves them out
    duel_page = client.get("/projects/exp-duel/export/").content.decode()
    steps_page = client.get("/projects/exp-steps/export/").content.decode()
    for name in ("generation", "finish_reason", "screening"):
        assert f'name="{name}"' in steps_page and f'name="{name}"' not in duel_page
    assert 'name="since"' in duel_page and 'name="split"' in duel_page


@pytest.mark.django_db
def test_past_exports_say_what_each_held_so_two_of_one_format_can_be_told_apart(client):
    project = Project.objects.create(slug="exp-rows", name="Export rows")
    lead = make_user("lena")
    Membership.objects.create(project=project, user=lead, role=Role.LEAD)
    cursor = encode_cursor(project=project, seq=3)
    plain = ExportOptions().as_dict()
    narrow = ExportOptions(split="train", qc="exclude", finish_reason=["solution", "give_up"], since=cursor)
    for filters in (plain, {**narrow.as_dict(), "since": cursor, "gzip": True}):
        Export.objects.create(project=project, requested_by=lead, status="succeeded", format="prm800k", filters=filters)
    client.force_login(lead)
    page = client.get("/projects/exp-rows/export/").content.decode()
    cells = [
        html.unescape(c) for c in re.findall(r"<td data-label=\"Settings\" data-export-settings>([^<]*)</td>", page)
    ]
    assert cells == [  # newest first
        "finish_reason=solution,give_up, split=train, qc=exclude, gzip, since a cursor",  # the form's order
        "all labels",
    ]
