"""The admin as the operator and a lead use it: what a lead may change there stays inside what the
product checks elsewhere (found by the operator walkthrough)."""

from __future__ import annotations

import pytest

from ml.models import TrainingRun
from tests.security.world import build_world

pytestmark = pytest.mark.django_db


def test_a_training_run_is_read_only_in_the_admin():
    """Was: a lead could add a training run in the admin, or edit a run's `config`, with server
    paths the API refuses (`base_checkpoint`, `hf_model_path`: "the deployment's choice, never a
    request's"), so the worker read any file on the server, another project's model included; and
    a hand-made `created` run was trained without its settings checked."""
    world = build_world()
    run = world.rows["ml.trainingrun"]
    for kind in ("lead", "superuser"):
        client = world.session_client(kind)
        assert client.get("/admin/ml/trainingrun/add/").status_code == 403, kind
        posted = client.post(
            "/admin/ml/trainingrun/add/",
            {"project": world.project.pk, "status": "created", "config": '{"base_checkpoint": "/etc/passwd"}'},
        )
        assert posted.status_code == 403, kind
        page = client.get(f"/admin/ml/trainingrun/{run.pk}/change/")
        assert page.status_code == 200, kind
        assert 'name="config"' not in page.content.decode(), kind  # shown, not a form field
        client.post(
            f"/admin/ml/trainingrun/{run.pk}/change/",
            {"project": world.project.pk, "status": "created", "config": '{"hf_model_path": "/srv/other"}'},
        )
        run.refresh_from_db()
        assert "hf_model_path" not in run.config and "base_checkpoint" not in run.config, kind
    assert not TrainingRun.objects.filter(config__has_key="base_checkpoint").exists()
    # The list and its action stay: a lead still activates (rolls back to) a model here.
    listing = world.session_client("lead").get("/admin/ml/trainingrun/")
    assert listing.status_code == 200
    assert "activate_this_model" in listing.content.decode()

    # The active run is not deleted (the project was left with no model); another one is.
    TrainingRun.objects.filter(pk=run.pk).update(status="succeeded", is_active=True)
    lead = world.session_client("lead")
    assert lead.post(f"/admin/ml/trainingrun/{run.pk}/delete/", {"post": "yes"}).status_code == 403
    bulk = lead.post(
        "/admin/ml/trainingrun/", {"action": "delete_selected", "_selected_action": [run.pk], "post": "yes"}
    )
    assert bulk.status_code == 403 and TrainingRun.objects.filter(pk=run.pk, is_active=True).exists()
    TrainingRun.objects.filter(pk=run.pk).update(is_active=False)
    assert lead.post(f"/admin/ml/trainingrun/{run.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not TrainingRun.objects.filter(pk=run.pk).exists()


def test_a_lead_picks_people_from_a_list_on_every_add_form():
    """Was: the members inline got a plain list of the lead's people, but the Membership,
    Annotator status and Assignment add forms kept the user search, which asks the users' admin
    (superusers only): it answered the lead 403, so they could pick nobody."""
    world = build_world()
    lead = world.session_client("lead")
    outsider = world.users["outsider"]  # a lead of the other project
    own = world.users["annotator"]
    for url, field in (
        ("/admin/annotate/membership/add/", "user"),
        ("/admin/annotate/annotatorstatus/add/", "user"),
        ("/admin/annotate/assignment/add/", "annotator"),
    ):
        page = lead.get(url)
        assert page.status_code == 200, url
        html = page.content.decode()
        select = html.split(f'name="{field}"', 1)[1].split("</select>", 1)[0]
        assert "admin-autocomplete" not in select.split(">", 1)[0], url  # a plain <select>
        assert f">{own.username}<" in select, url
        assert outsider.username not in select, url
    # The superuser keeps the search (it reaches every user).
    html = world.session_client("superuser").get("/admin/annotate/membership/add/").content.decode()
    assert 'data-field-name="user"' in html


def test_a_lead_changes_no_preference_and_no_pseudonym_in_the_admin():
    """Was: a lead could edit a submitted preference (which side won, its strength, its first-wrong
    marks, `export_seq`) with no audit revision, and re-point or delete a pseudonym, a row every
    project of that person shares (their next label then got a fresh UUID in every export)."""
    world = build_world()
    lead = world.session_client("lead")
    preference = world.rows["annotate.preference"]
    profile = world.rows["annotate.labelerprofile"]
    before = (preference.preferred, preference.strength, preference.export_seq)
    page = lead.get(f"/admin/annotate/preference/{preference.pk}/change/")
    assert page.status_code == 200 and 'name="preferred"' not in page.content.decode()
    flipped = "A" if preference.preferred != "A" else "B"
    lead.post(
        f"/admin/annotate/preference/{preference.pk}/change/",
        {"preferred": flipped, "strength": 3, "export_seq": 1, "idempotency_key": "x", "submitted_at_0": "2026-01-01"},
    )
    preference.refresh_from_db()
    assert (preference.preferred, preference.strength, preference.export_seq) == before
    page = lead.get(f"/admin/annotate/labelerprofile/{profile.pk}/change/")
    assert page.status_code == 200 and 'name="user"' not in page.content.decode()
    assert lead.post(f"/admin/annotate/labelerprofile/{profile.pk}/delete/", {"post": "yes"}).status_code == 403
    profile.refresh_from_db()  # still there
    # A superuser may delete a pseudonym (an operator's decision, across projects).
    root = world.session_client("superuser")
    assert root.get(f"/admin/annotate/labelerprofile/{profile.pk}/delete/").status_code == 200


def test_an_assignments_identity_is_fixed_in_the_admin_and_its_status_is_not():
    """The operator walkthrough: a lead could re-point a claim (its project, solution or annotator)
    after the fact, as the admin fixes for problems, solutions and pairs."""
    world = build_world()
    assignment = world.rows["annotate.assignment"]
    lead = world.session_client("lead")
    page = lead.get(f"/admin/annotate/assignment/{assignment.pk}/change/").content.decode()
    for field in ("project", "solution", "annotator"):
        assert f'name="{field}"' not in page, field
    assert 'name="status"' in page
    before = (assignment.project_id, assignment.solution_id, assignment.annotator_id)
    lead.post(
        f"/admin/annotate/assignment/{assignment.pk}/change/",
        {"annotator": world.users["lead"].pk, "status": assignment.status, "generation": assignment.generation or 0},
    )
    assignment.refresh_from_db()
    assert (assignment.project_id, assignment.solution_id, assignment.annotator_id) == before
