"""The work-queue endpoints over HTTP with token and session auth."""

from datetime import timedelta

import pytest
import yaml
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import Annotation, Assignment, AssignmentStatus, Role, Solution
from tests.e2e.helpers import store_label
from tests.factories import make_gold_annotation, make_project, make_solutions, make_user, payload

pytestmark = pytest.mark.django_db


def client_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.fixture
def project():
    project = make_project("algebra", show_ground_truth=True, lease_minutes=30)
    make_solutions(project, 3)
    return project


@pytest.fixture
def annotator(project):
    return make_user("ann", project=project)


def next_task(client, slug="algebra"):
    return client.get(f"/api/v1/projects/{slug}/tasks/next/")


def test_next_task_body(project, annotator):
    response = next_task(client_for(annotator))

    assert response.status_code == 200
    task = response.json()
    assignment = Assignment.objects.get(pk=task["id"])
    assert task["assignment_id"] == assignment.pk and assignment.annotator == annotator
    assert task["mode"] == "phase2" and task["project"] == "algebra" and task["lease_seconds"] == 1800
    assert task["problem"]["text"] == assignment.solution.problem.text
    assert task["problem"]["ground_truth_answer"] == assignment.solution.problem.ground_truth_answer
    assert task["steps"] == [
        {"index": i, "text": f"Step {i} of solution {assignment.solution_id}.", "rated": True} for i in range(3)
    ]
    assert task["kind"] == "math" and task["critique_required"] is False
    assert task["draft"] is None and task["generation"] == 0 and task["lease_expires_at"]
    assert "is_gold" not in str(task)


def test_ground_truth_hidden_when_project_says_so(project, annotator):
    project.show_ground_truth = False
    project.save()
    assert "ground_truth_answer" not in next_task(client_for(annotator)).json()["problem"]


def test_reload_returns_same_task_and_204_when_empty(project, annotator):
    client = client_for(annotator)
    first = next_task(client).json()
    assert next_task(client).json()["id"] == first["id"]
    for task_id in Assignment.objects.values_list("id", flat=True):
        client.post(f"/api/v1/assignments/{task_id}/skip/?next=false")
    seen = {first["id"]}
    while (response := next_task(client)).status_code == 200:
        seen.add(response.json()["id"])
        client.post(f"/api/v1/assignments/{response.json()['id']}/skip/?next=false")
    assert response.status_code == 204 and len(seen) == 3


def test_submit_returns_annotation_and_next_task_in_one_round_trip(project, annotator):
    client = client_for(annotator)
    task = next_task(client).json()

    response = client.post(f"/api/v1/assignments/{task['id']}/submit/", payload([1, 0, 1], key="abc"), format="json")

    assert response.status_code == 201
    body = response.json()
    annotation = Annotation.objects.get(pk=body["annotation_id"])
    assert annotation.annotator == annotator and body["created"] is True and body["assignment_id"] == task["id"]
    assert body["next"]["id"] != task["id"] and body["next"]["steps"]
    # The retry of the same submit (e.g. after a network error) returns the first result.
    again = client.post(f"/api/v1/assignments/{task['id']}/submit/", payload([1, 0, 1], key="abc"), format="json")
    assert again.status_code == 200
    assert again.json()["annotation_id"] == annotation.pk and again.json()["created"] is False
    assert again.json()["next"]["id"] == body["next"]["id"]  # the claimed next task, reload-safe
    assert Annotation.objects.count() == 1


def test_submit_validation_errors_name_the_field_path(project, annotator):
    client = client_for(annotator)
    task = next_task(client).json()
    data = payload([1, 5, -1], key="v")
    data["steps"][2]["alternatives"] = [{"text": "", "rating": 1, "flagged": False}]

    response = client.post(f"/api/v1/assignments/{task['id']}/submit/", data, format="json")

    assert response.status_code == 400
    assert set(response.json()) == {"steps[1].rating", "steps[2].alternatives[0].text"}
    for bad in ("not json", '{"steps": "x"}', "[]"):
        response = client.post(f"/api/v1/assignments/{task['id']}/submit/", bad, content_type="application/json")
        assert response.status_code == 400, bad
    assert not Annotation.objects.exists()


def test_give_up_needs_a_reason(project, annotator):
    client = client_for(annotator)
    task = next_task(client).json()
    url = f"/api/v1/assignments/{task['id']}/submit/"
    response = client.post(url, payload([1], key="g", finish_reason="give_up"), format="json")
    assert response.status_code == 400 and "reason" in response.json()
    response = client.post(url, payload([1], key="g", finish_reason="give_up", reason="stuck"), format="json")
    assert response.status_code == 201


def test_heartbeat_skip_and_draft(project, annotator):
    client = client_for(annotator)
    task = next_task(client).json()
    base = f"/api/v1/assignments/{task['id']}"

    Assignment.objects.filter(pk=task["id"]).update(lease_expires_at=timezone.now() + timedelta(seconds=5))
    beat = client.post(f"{base}/heartbeat/")
    assert beat.status_code == 200 and beat.json()["status"] == "active"
    assert Assignment.objects.get(pk=task["id"]).lease_expires_at > timezone.now() + timedelta(minutes=29)

    draft = {"ratings": [1, None], "flags": [False, True], "elapsed_ms": 4200}
    saved = client.put(f"{base}/draft/", draft, format="json")
    assert saved.status_code == 200 and saved.json()["id"] == task["id"]
    assert next_task(client).json()["draft"] == draft

    skipped = client.post(f"{base}/skip/")
    assert skipped.status_code == 200 and skipped.json()["status"] == "skipped"
    assert skipped.json()["next"]["id"] != task["id"]
    assert client.post(f"{base}/heartbeat/").status_code == 409
    response = client.post(f"{base}/submit/", payload([1, 1, 1], key="late"), format="json")
    assert response.status_code == 409


def test_late_submit_conflict_over_http(project, annotator):
    project.overlap = 1
    project.save()
    client = client_for(annotator)
    task = next_task(client).json()
    Assignment.objects.exclude(pk=task["id"]).delete()
    Assignment.objects.filter(pk=task["id"]).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    other = client_for(make_user(project=project))
    taken = [next_task(other).json() for _ in range(1)][0]
    assert Assignment.objects.get(pk=taken["id"]).solution_id == Assignment.objects.get(pk=task["id"]).solution_id

    response = client.post(f"/api/v1/assignments/{task['id']}/submit/", payload([1, 1, 1], key="late"), format="json")

    assert response.status_code == 409 and "another annotator" in response.json()["detail"]
    assert Assignment.objects.get(pk=task["id"]).draft["refused_submit"]["idempotency_key"] == "late"


def test_a_refused_late_submit_is_given_back_until_dismissed(project, annotator):
    """Was: kept in the expired assignment's draft, but no endpoint gave it back."""
    project.overlap = 1
    project.save()
    client = client_for(annotator)
    task = next_task(client).json()
    Assignment.objects.filter(pk=task["id"]).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    next_task(client_for(make_user(project=project)))  # someone else takes the solution
    sent = payload([1, 1, -1], key="late")
    refused = client.post(f"/api/v1/assignments/{task['id']}/submit/", sent, format="json")
    assert refused.status_code == 409 and "refused_submits" in refused.json()["detail"]

    # The workspace reads the annotator's progress when it opens: the work is there.
    progress = client.get("/api/v1/projects/algebra/me/").json()
    [back] = progress["refused_submits"]
    assert back["assignment_id"] == task["id"] and back["submit"] == sent
    assert back["problem"] == task["problem"]["text"][:200] and "not recorded" in back["message"]
    # Nobody else sees it.
    assert client_for(make_user(project=project)).get("/api/v1/projects/algebra/me/").json()["refused_submits"] == []
    # A tab still saving its work on that assignment cannot overwrite it.
    late_save = client.put(f"/api/v1/assignments/{task['id']}/draft/", {"v": 1, "rev": 9}, format="json")
    assert late_save.status_code == 409 and "refused submit" in late_save.json()["detail"]
    assert client.get("/api/v1/projects/algebra/me/").json()["refused_submits"][0]["submit"] == sent
    # Dismissed by clearing that assignment's draft.
    assert (
        client.put(f"/api/v1/assignments/{task['id']}/draft/", "null", content_type="application/json").status_code
        == 200
    )
    assert client.get("/api/v1/projects/algebra/me/").json()["refused_submits"] == []


def test_a_second_tab_submitting_other_ratings_with_the_same_key_is_refused_and_kept(project, annotator):
    """Was: two tabs resumed one draft (one key); the second submit got 200 created=false and the
    page said "Submitted" while its ratings were dropped."""
    client = client_for(annotator)
    task = next_task(client).json()
    first = client.post(f"/api/v1/assignments/{task['id']}/submit/", payload([1, -1], key="tab"), format="json")
    assert first.status_code == 201

    # A retry of the same labels is still the first result, also with a later clock (a reload).
    again = payload([1, -1], key="tab", total_time_ms=9999)
    retry = client.post(f"/api/v1/assignments/{task['id']}/submit/", again, format="json")
    assert retry.status_code == 200 and retry.json()["annotation_id"] == first.json()["annotation_id"]

    other = payload([1, 1, 1], key="tab")
    refused = client.post(f"/api/v1/assignments/{task['id']}/submit/", other, format="json")
    assert refused.status_code == 409 and "another tab or device" in refused.json()["detail"]
    assert Annotation.objects.filter(assignment_id=task["id"]).count() == 1
    stored = Annotation.objects.get(assignment_id=task["id"])
    assert stored.n_negative == 1 and stored.pk == first.json()["annotation_id"]
    assignment = Assignment.objects.get(pk=task["id"])
    assert assignment.status == "submitted"  # the first submit stands

    [back] = client.get("/api/v1/projects/algebra/me/").json()["refused_submits"]
    assert back["assignment_id"] == task["id"] and back["submit"] == other and "another tab" in back["message"]
    # Dismissed like a late one: a null draft; any other save on the submitted assignment stays a 409.
    draft_url = f"/api/v1/assignments/{task['id']}/draft/"
    assert client.put(draft_url, {"v": 1}, format="json").status_code == 409
    assert client.put(draft_url, "null", content_type="application/json").status_code == 200
    assert client.get("/api/v1/projects/algebra/me/").json()["refused_submits"] == []
    assert client.put(draft_url, "null", content_type="application/json").status_code == 409


# --- permissions --------------------------------------------------------------------------------


def test_anonymous_is_refused(project):
    response = APIClient().get("/api/v1/projects/algebra/tasks/next/")
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"  # as the permission matrix says


def test_a_token_is_read_after_token_or_bearer_and_a_bad_header_says_what_is_wrong(project):
    user = make_user(project=project, role=Role.ANNOTATOR)
    key = Token.objects.create(user=user).key
    for scheme in ("Token", "Bearer", "bearer"):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"{scheme} {key}")
        assert next_task(client).status_code == 200, scheme
    refused = {
        f"Bearer {key[:-1]}x": "Invalid token.",
        "Bearer": "Invalid token header: give `Token <key>`, a key with no spaces.",
        f"Token {key} extra": "Invalid token header: give `Token <key>`, a key with no spaces.",
    }
    for header, detail in refused.items():
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=header)
        response = next_task(client)
        assert response.status_code == 401 and response.json() == {"detail": detail}, header
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Basic {key}")  # another scheme: not ours to read
    assert next_task(client).status_code == 401


def test_only_annotators_and_leads_may_claim(project):
    assert next_task(client_for(make_user(project=project, role=Role.LEAD))).status_code == 200
    ml = next_task(client_for(make_user(project=project, role=Role.ML_ENGINEER)))
    assert ml.status_code == 403 and "annotators and leads" in ml.json()["detail"]
    # Not a member at all: the project is not even visible.
    assert next_task(client_for(make_user())).status_code == 404
    assert next_task(client_for(make_user(project=project)), slug="nope").status_code == 404


def test_other_peoples_assignments_are_404(project, annotator):
    task = next_task(client_for(annotator)).json()
    intruder = client_for(make_user(project=project, role=Role.LEAD))
    base = f"/api/v1/assignments/{task['id']}"
    assert intruder.post(f"{base}/heartbeat/").status_code == 404
    assert intruder.post(f"{base}/skip/").status_code == 404
    assert intruder.put(f"{base}/draft/", {"x": 1}, format="json").status_code == 404
    assert intruder.post(f"{base}/submit/", payload([1, 1, 1]), format="json").status_code == 404
    assert Assignment.objects.get(pk=task["id"]).status == AssignmentStatus.ACTIVE


def test_session_auth_with_csrf(project, annotator):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(annotator)
    task = client.get("/api/v1/projects/algebra/tasks/next/").json()
    assert client.post(f"/api/v1/assignments/{task['id']}/heartbeat/").status_code == 403  # no CSRF token
    client.get("/accounts/login/")
    token = client.cookies["csrftoken"].value
    response = client.post(f"/api/v1/assignments/{task['id']}/heartbeat/", HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 200


# --- progress and screening ---------------------------------------------------------------------


def test_me_reports_todays_progress(project, annotator):
    client = client_for(annotator)
    task = next_task(client).json()
    client.post(f"/api/v1/assignments/{task['id']}/submit/?next=false", payload([1, 1, -1], key="m"), format="json")

    me = client.get("/api/v1/projects/algebra/me/").json()

    assert me["solutions_today"] == 1 and me["steps_today"] == 3 and me["time_today_ms"] == 1234
    assert me["solutions_total"] == 1 and me["roles"] == ["annotator"] and me["active_assignment_id"] is None
    assert me["screening"]["status"] == "not_required"
    # a trace's observation rides in the label unrated: it is no step rated
    trace = [
        {"completions": [{"text": t, "rating": r, "flagged": False}], "human_completion": None, "chosen_completion": 0}
        for t, r in (("call", 1), ("observation", None), ("answer", 1))
    ]
    other = Solution.objects.filter(project=project, annotation_count=0).first()
    store_label(other, annotator, trace, labeler_uuid=str(annotator.pk))
    assert client.get("/api/v1/projects/algebra/me/").json()["steps_today"] == 5


def test_screening_failure_is_told_clearly(project, annotator):
    project.screening_required = 1
    project.save()
    (screening,) = make_solutions(project, 1, is_screening=True)
    make_gold_annotation(screening, [1, 1, 1])
    client = client_for(annotator)
    assert client.get("/api/v1/projects/algebra/me/").json()["screening"]["status"] == "pending"
    task = next_task(client).json()
    assert Assignment.objects.get(pk=task["id"]).solution_id == screening.pk

    response = client.post(f"/api/v1/assignments/{task['id']}/submit/", payload([0, 0, 0], key="s"), format="json")

    assert response.status_code == 201 and response.json()["next"] is None
    assert "did not pass screening" in response.json()["detail"]
    blocked = next_task(client)
    assert blocked.status_code == 403 and "You did not pass screening" in blocked.json()["detail"]
    me = client.get("/api/v1/projects/algebra/me/").json()
    assert me["screening"] == {"required": 1, "submitted": 1, "status": "failed", "threshold": 0.75, "agreement": 0.0}


def test_schema_describes_every_queue_endpoint(admin_client_pg):
    schema = yaml.safe_load(admin_client_pg.get("/api/v1/schema/").content)  # YAML or JSON, whichever is served
    paths = schema["paths"]
    for path, method in [
        ("/api/v1/projects/{slug}/tasks/next/", "get"),
        ("/api/v1/projects/{slug}/me/", "get"),
        ("/api/v1/assignments/{id}/heartbeat/", "post"),
        ("/api/v1/assignments/{id}/skip/", "post"),
        ("/api/v1/assignments/{id}/draft/", "put"),
        ("/api/v1/assignments/{id}/submit/", "post"),
    ]:
        operation = paths[path][method]
        assert operation["description"] and operation["summary"]
        assert all(p.get("description") for p in operation.get("parameters", []))
    submit_op = paths["/api/v1/assignments/{id}/submit/"]["post"]
    assert {"201", "200", "400", "404", "409"} <= set(submit_op["responses"])
