"""A choice left in a closed tab, whose claim then ran out and went to another annotator, is named
when the compare page opens again (annotator walkthrough). Was: the next pair appeared and the
choice was gone without a word (the compare page gave the draft keeper no words for its work, so
drafts of other pairs were dropped unasked; the step page names its ratings)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotate.models import Assignment, Role
from annotate.services.imports import import_file
from tests.api_clients import member_client
from tests.compare_lines import LINES
from tests.e2e.helpers import make_project, make_user, open_second_tab, open_workspace

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_choice_lost_to_an_expired_claim_is_named_on_the_next_pair(pages, tmp_path: Path):
    project = make_project("lostduel", name="Which is better", task_kind="compare")
    ann = make_user("ann", project)
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    import_file(project=project, path=path)

    ctx = pages.context()
    page = pages.page(ctx)
    open_workspace(page, "ann", slug="lostduel")
    page.keyboard.press("b")
    page.keyboard.press("2")
    page.keyboard.press("q")  # A's first step marked
    expect(page.locator(".sl-save")).to_have_text("Saved")
    page.close()

    first = Assignment.objects.get(annotator=ann)
    Assignment.objects.filter(pk=first.pk).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    bob = member_client(project, "bob", Role.ANNOTATOR)
    taken = bob.get("/api/v1/projects/lostduel/tasks/next/").json()
    assert Assignment.objects.get(pk=taken["assignment_id"]).comparison_id == first.comparison_id
    body = {"idempotency_key": "bob-1", "preference": "A", "strength": 1, "total_time_ms": 1000}
    assert bob.post(f"/api/v1/assignments/{taken['assignment_id']}/submit/", body, format="json").status_code == 201

    page = open_second_tab(pages, ctx, slug="lostduel")  # the same browser, later
    expect(page.locator(".sl-alert")).to_have_text(
        "Your claim on the previous pair expired and it went to someone else; your choice on it was not "
        "recorded (B is clearly better · first wrong step: A step 1)."
    )
    expect(page.locator(".sl-compare-verdict")).to_have_text("Which is better? ← / a, → / b, t for a tie")
    assert Assignment.objects.get(annotator=ann, status="active").comparison_id != first.comparison_id
