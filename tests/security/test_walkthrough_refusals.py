"""Refusals found by the role walkthroughs (PostgreSQL; the reward-model run through the service the
worker calls): ids past 64 bits, rounds past 32 bits, the server's mark keys, and a reward model's
PRM taken from a project the requester may not use. Each is a clear 4xx that changes nothing, never
a 500 or a leak."""

from __future__ import annotations

import pytest
from django.test import override_settings

from annotate.models import Annotation, Assignment, Export, Project, Role
from core.models import JobStatus
from ml import services
from ml.models import TrainingRun
from ml.prm.config import PRMConfig
from ml.prm.synthetic import planted_examples
from ml.prm.train import save_checkpoint, train_prm
from tests.api_clients import member_client
from tests.factories import make_solutions, payload
from tests.ml.reward_helpers import planted_pair_examples
from tests.ml.test_reward_real import _project_of_pairs

pytestmark = pytest.mark.django_db

PAST_64_BITS = 2**63


@pytest.fixture
def project() -> Project:
    project = Project.objects.create(slug="walk", retrain_every=0)
    make_solutions(project, 2)
    return project


@pytest.mark.parametrize("action", ["submit", "heartbeat", "skip", "draft"])
def test_an_assignment_id_past_64_bits_is_not_found(project, action):
    annotator = member_client(project, "walker", Role.ANNOTATOR)
    send = annotator.put if action == "draft" else annotator.post
    for assignment_id in (PAST_64_BITS, 10**30):
        response = send(f"/api/v1/assignments/{assignment_id}/{action}/", {}, format="json")
        assert response.status_code == 404, (assignment_id, response.content)
    # the largest id is still an id: looked up, and not one of the caller's
    response = send(f"/api/v1/assignments/{PAST_64_BITS - 1}/{action}/", {}, format="json")
    assert response.status_code == 404 and "assignment" in response.json()["detail"].lower()


def test_export_ids_past_64_bits_are_not_found(project):
    lead = member_client(project, "walk-lead", Role.LEAD)
    assert lead.get(f"/api/v1/exports/{PAST_64_BITS}/").status_code == 404
    assert lead.get(f"/api/v1/exports/{PAST_64_BITS}/download/").status_code == 404


def test_a_round_past_32_bits_is_refused_by_field_on_both_export_paths(project):
    lead = member_client(project, "walk-lead", Role.LEAD)
    huge = "99999999999999999999999"
    streamed = lead.get(f"/api/v1/projects/walk/export/?generation={huge}")
    assert streamed.status_code == 400 and list(streamed.json()) == ["generation"], streamed.content
    job = lead.post("/api/v1/projects/walk/exports/", {"generation": f"1,{2**31}"}, format="json")
    assert job.status_code == 400 and "generation" in job.json(), job.content
    assert Export.objects.count() == 0  # refused before a job was queued
    # rounds that can exist still pass
    assert lead.get("/api/v1/projects/walk/export/?generation=-1,0,2147483647").status_code == 200


def test_a_client_key_in_the_servers_mark_key_space_is_refused(project):
    annotator = member_client(project, "walker", Role.ANNOTATOR)
    task = annotator.get("/api/v1/projects/walk/tasks/next/").json()
    response = annotator.post(
        f"/api/v1/assignments/{task['assignment_id']}/submit/",
        payload([1] * len(task["steps"]), key="compare:1:A"),
        format="json",
    )
    assert response.status_code == 400, response.content
    assert "reserved" in str(response.json()["idempotency_key"])
    assert Annotation.objects.count() == 0
    assert Assignment.objects.get(pk=task["assignment_id"]).status == "active"  # still the caller's to submit


def _steps_project_with_prm(slug: str, media) -> Project:
    steps_project = Project.objects.create(slug=slug)
    checkpoint = train_prm(planted_examples(400), PRMConfig(ensemble_size=1, max_epochs=2, step_hash_dim=1024))
    save_checkpoint(checkpoint, media / "models" / slug / "run-1.pt")
    TrainingRun.objects.create(
        project=steps_project,
        status=JobStatus.SUCCEEDED,
        is_active=True,
        artifact_path=f"models/{slug}/run-1.pt",
        metrics={"model": "prm"},
    )
    return steps_project


@pytest.mark.django_db(transaction=True)
def test_a_reward_model_takes_a_prm_only_from_a_project_where_its_requester_may_score(tmp_path):
    with override_settings(MEDIA_ROOT=tmp_path):
        mine = _steps_project_with_prm("my-prm", tmp_path)
        _steps_project_with_prm("their-prm", tmp_path)  # a project the requester is no member of
        compare = _project_of_pairs("duel-prm", planted_pair_examples(60, seed=3))
        engineer = member_client(compare, "duel-ml", Role.ML_ENGINEER)

        def train_with_prm_of(slug: str):
            body = {"config": {"features": ["prm"], "prm_project": slug}}
            return engineer.post("/api/v1/projects/duel-prm/training-runs/", body, format="json")

        answers = {}
        for slug in ("their-prm", "no-such-prm"):
            response = train_with_prm_of(slug)
            assert response.status_code == 400, response.content
            answers[slug] = response.json()["config"]["prm_project"][0].replace(repr(slug), "SLUG")
        # a project that exists but is not theirs reads exactly like one that does not exist
        assert answers["their-prm"] == answers["no-such-prm"]
        assert TrainingRun.objects.filter(project=compare).count() == 0

        # an annotator of the PRM's project may not score with it either
        mine.memberships.create(user=engineer.user, role=Role.ANNOTATOR)
        response = train_with_prm_of("my-prm")
        assert response.status_code == 400, response.content

        # as its ml_engineer they may; a role taken away before the worker trains counts there too
        mine.memberships.create(user=engineer.user, role=Role.ML_ENGINEER)
        response = train_with_prm_of("my-prm")
        assert response.status_code == 202, response.content
        mine.memberships.filter(user=engineer.user).delete()
        failed = services.run_training(run_id=response.json()["id"])
        assert failed.status == JobStatus.FAILED
        assert "prm_project 'my-prm'" in failed.error
        assert "Traceback" not in failed.error and ".py" not in failed.error  # no server internals
        listed = engineer.get("/api/v1/projects/duel-prm/training-runs/").json()[0]
        assert listed["error"] == failed.error


def test_a_body_past_the_upload_limit_is_a_json_413_that_changes_nothing(project, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100_000
    annotator = member_client(project, "walker", Role.ANNOTATOR)
    task = annotator.get("/api/v1/projects/walk/tasks/next/").json()
    huge = {"draft": {"notes": "x" * 200_000}}
    for send, action in ((annotator.put, "draft"), (annotator.post, "submit")):
        response = send(f"/api/v1/assignments/{task['assignment_id']}/{action}/", huge, format="json")
        assert response.status_code == 413, (action, response.content[:200])
        assert response["Content-Type"] == "application/json"
        assert "100,000 bytes" in response.json()["detail"]
    assert Annotation.objects.count() == 0
    assert Assignment.objects.get(pk=task["assignment_id"]).draft in (None, {})


@pytest.mark.parametrize("action", ["submit", "skip"])
def test_a_bad_next_flag_is_refused_before_anything_is_stored(project, action):
    annotator = member_client(project, "walker", Role.ANNOTATOR)
    task = annotator.get("/api/v1/projects/walk/tasks/next/").json()
    url = f"/api/v1/assignments/{task['assignment_id']}/{action}/"
    body = payload([1] * len(task["steps"]), key="n1") if action == "submit" else {}
    response = annotator.post(f"{url}?next=maybe", body, format="json")
    assert response.status_code == 400 and list(response.json()) == ["next"], response.content
    assert Annotation.objects.count() == 0
    assert Assignment.objects.get(pk=task["assignment_id"]).status == "active"
    done = annotator.post(f"{url}?next=FALSE", body, format="json")
    assert done.status_code in (200, 201) and done.json()["next"] is None


def test_a_finished_assignment_answers_409_with_a_code_a_client_can_act_on(project):
    annotator = member_client(project, "walker", Role.ANNOTATOR)
    task = annotator.get("/api/v1/projects/walk/tasks/next/").json()
    url = f"/api/v1/assignments/{task['assignment_id']}"
    body = payload([1] * len(task["steps"]), key="first")
    assert annotator.post(f"{url}/submit/?next=false", body, format="json").status_code == 201
    # what a page the browser kept (Back, Forward) or another tab would send now
    answers = [
        annotator.post(f"{url}/submit/?next=false", {**body, "idempotency_key": "second"}, format="json"),
        annotator.post(f"{url}/skip/?next=false", {}, format="json"),
        annotator.post(f"{url}/heartbeat/", {}, format="json"),
        annotator.put(f"{url}/draft/", {"draft": {"ratings": [1]}}, format="json"),
    ]
    for answer in answers:
        assert answer.status_code == 409, answer.content
        assert answer.json()["code"] == "assignment_finished", answer.content
    assert Annotation.objects.count() == 1
