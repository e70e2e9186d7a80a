"""The admin: every registered model's changelist and change page render with data, and the
actions (mark as gold, reopen for relabeling, activate a model) change the database."""

import json
from datetime import timedelta

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from annotate.models import (
    Annotation,
    AnnotationRevision,
    AnnotatorStatus,
    ApiToken,
    Assignment,
    AuditEvent,
    Comparison,
    DeletedLabel,
    Export,
    ImportJob,
    Invite,
    LabelerProfile,
    Membership,
    Preference,
    Problem,
    Project,
    Role,
    Solution,
    Step,
)
from annotate.services import audit
from ml import services as ml_services
from ml.models import StepScore, TrainingRun
from tests.ml.loop_helpers import TINY, planted_project

pytestmark = pytest.mark.django_db

LABEL_STEPS = [
    {
        "completions": [{"text": "Let $x^2 = 4$.", "rating": 1, "flagged": False}],
        "human_completion": None,
        "chosen_completion": 0,
    },
    {
        "completions": [{"text": "So $x = 3$.", "rating": -1, "flagged": False}],
        "human_completion": None,
        "chosen_completion": None,
    },
]


@pytest.fixture
def data():
    User = get_user_model()
    annotator = User.objects.create_user("ann-admin", password="x")
    project = Project.objects.create(slug="adm", name="Admin project")
    membership = Membership.objects.create(project=project, user=annotator, role=Role.ANNOTATOR)
    profile = LabelerProfile.objects.create(user=annotator)
    status = AnnotatorStatus.objects.create(project=project, user=annotator, screening_status="passed")
    problem = Problem.objects.create(
        project=project,
        text="Solve $x^2 = 4$ for $x > 0$.",
        ground_truth_answer="2",
        content_hash="p" * 64,
        text_hash="t" * 64,
    )
    solution = Solution.objects.create(
        project=project,
        problem=problem,
        final_answer="3",
        answer_correct=False,
        content_hash="s" * 64,
        n_steps=2,
        is_open=False,
    )
    steps = [
        Step.objects.create(solution=solution, index=0, text="Let $x^2 = 4$."),
        Step.objects.create(solution=solution, index=1, text="So $x = 3$.\n\n# Answer\n\n3"),
    ]
    assignment = Assignment.objects.create(
        project=project,
        solution=solution,
        annotator=annotator,
        status="submitted",
        lease_expires_at=timezone.now() + timedelta(minutes=30),
    )
    annotation = Annotation.objects.create(
        project=project,
        solution=solution,
        assignment=assignment,
        annotator=annotator,
        labeler_uuid=str(profile.labeler_uuid),
        submitted_at=timezone.now(),
        finish_reason="found_error",
        total_time_ms=12000,
        label_steps=json.dumps(LABEL_STEPS),
        n_label_steps=2,
        n_positive=1,
        n_negative=1,
        first_error_index=1,
    )
    import_job = ImportJob.objects.create(
        project=project, filename="demo.jsonl", status="succeeded", counters={"records": 1}
    )
    export = Export.objects.create(project=project, status="succeeded", record_count=1, byte_size=100)
    run_old = TrainingRun.objects.create(
        project=project,
        status="succeeded",
        label_count=10,
        metrics={"accuracy": 0.5},
        is_active=True,
        activated_at=timezone.now(),
    )
    run_new = TrainingRun.objects.create(project=project, status="succeeded", label_count=20, metrics={"accuracy": 0.7})
    score = StepScore.objects.create(
        step=steps[0], training_run=run_old, p_positive=0.7, p_neutral=0.2, p_negative=0.1, uncertainty=0.8
    )
    return {
        Project: project,
        AnnotatorStatus: status,
        Membership: membership,
        LabelerProfile: profile,
        Problem: problem,
        Solution: solution,
        Step: steps[1],
        Assignment: assignment,
        Annotation: annotation,
        AnnotationRevision: audit.record_event(annotation=annotation, user=None, reason="audit trail row"),
        ImportJob: import_job,
        AuditEvent: AuditEvent.objects.create(project=project, action="project.created", details={"slug": "x"}),
        Invite: Invite.objects.create(
            project=project, roles=["annotator"], token_hash="1" * 64, expires_at=timezone.now() + timedelta(days=1)
        ),
        Export: export,
        DeletedLabel: DeletedLabel.objects.create(
            project=project, kind="annotation", export_seq=2, label_export_seq=1, labeler_uuid="x", timestamp_text="t"
        ),
        ApiToken: ApiToken.objects.create(user=annotator),
        Comparison: (
            pair := Comparison.objects.create(
                project=project, problem=problem, solution_a=solution, solution_b=_second_solution(solution)
            )
        ),
        Preference: Preference.objects.create(
            project=project,
            comparison=pair,
            annotator=annotator,
            labeler_uuid="ann",
            preferred="B",
            shown="A",
            swapped=True,
            strength=3,
            idempotency_key="admin-pref",
            submitted_at=timezone.now(),
        ),
        TrainingRun: run_new,
        StepScore: score,
        "run_old": run_old,
        "annotator": annotator,
    }


def _second_solution(solution: Solution) -> Solution:
    return Solution.objects.create(
        project=solution.project, problem=solution.problem, content_hash="second-" + solution.content_hash[:50]
    )


def _url(model, view, *args):
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


def test_every_domain_model_is_registered():
    from django.apps import apps

    for app_label in ("annotate", "ml"):
        for model in apps.get_app_config(app_label).get_models():
            assert admin.site.is_registered(model), f"{model.__name__} is not in the admin"


def test_changelist_and_change_page_of_every_model(admin_client_pg, data):
    registered = [m for m in admin.site._registry if m._meta.app_label in ("annotate", "ml")]
    assert len(registered) >= 13
    for model in registered:
        assert model in data, f"add a {model.__name__} row to the data fixture of this test"
        obj = data[model]
        response = admin_client_pg.get(_url(model, "changelist"))
        assert response.status_code == 200, model
        assert _url(model, "change", obj.pk) in response.content.decode(), f"{model.__name__} row not listed"
        # Search answers too (search_fields include related lookups).
        assert admin_client_pg.get(_url(model, "changelist"), {"q": "x"}).status_code == 200, model
        response = admin_client_pg.get(_url(model, "change", obj.pk))
        assert response.status_code == 200, model


def test_big_foreign_keys_render_no_dropdowns(admin_client_pg, data):
    add = admin_client_pg.get(_url(Solution, "add")).content.decode()
    assert '<select name="problem"' not in add
    assert 'name="problem"' in add  # raw id input
    page = admin_client_pg.get(_url(Solution, "change", data[Solution].pk)).content.decode()
    assert 'name="problem"' not in page  # fixed once added (FixedIdentityMixin): shown, not an input
    # Steps inline, read-only.
    assert "So $x = 3$." in page
    assert 'name="steps-0-text"' not in page
    page = admin_client_pg.get(_url(Annotation, "change", data[Annotation].pk)).content.decode()
    assert '<select name="solution"' not in page and '<select name="assignment"' not in page
    page = admin_client_pg.get(_url(Project, "change", data[Project].pk)).content.decode()
    assert "memberships-0-role" in page and "ann-admin" in page


def test_mark_as_gold_action(admin_client_pg, data):
    annotation = data[Annotation]
    response = admin_client_pg.post(
        _url(Annotation, "changelist"), {"action": "mark_as_gold", "_selected_action": [annotation.pk]}, follow=True
    )
    assert response.status_code == 200
    annotation.refresh_from_db()
    assert annotation.is_gold
    assert Solution.objects.get(pk=annotation.solution_id).is_gold


def test_reopen_for_relabeling_action(admin_client_pg, data):
    solution = data[Solution]
    assert not solution.is_open
    admin_client_pg.post(
        _url(Solution, "changelist"), {"action": "reopen_for_relabeling", "_selected_action": [solution.pk]}
    )
    solution.refresh_from_db()
    assert solution.is_open


def test_activate_model_and_roll_back(admin_client_pg, tmp_path):
    """Two real (tiny) trained runs: the action activates the older one, as the API would."""
    project = planted_project("adm-ml", labeled=40, open_=10)
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY):
        first = ml_services.run_training(run_id=ml_services.request_retrain(project=project, enqueue=False).pk)
        second = ml_services.run_training(
            run_id=ml_services.request_retrain(project=project, config={"seed": 7}, enqueue=False).pk
        )

        def activate(run):
            return admin_client_pg.post(
                _url(TrainingRun, "changelist"),
                {"action": "activate_this_model", "_selected_action": [run.pk]},
                follow=True,
            )

        assert TrainingRun.objects.get(is_active=True, project=project) == second
        generation = Project.objects.get(pk=project.pk).current_generation
        response = activate(first)  # roll back
        assert f"Run {first.pk} is now the active model" in response.content.decode()
        ml_services.rescore_after_activation(run_id=first.pk, previous_id=second.pk)  # the enqueued job
        assert list(TrainingRun.objects.filter(is_active=True, project=project)) == [first]
        assert Project.objects.get(pk=project.pk).current_generation == generation + 1
        # The open queue is rescored by the activated model.
        open_ids = Solution.objects.filter(project=project, is_open=True).values_list("model_run_id", flat=True)
        assert set(open_ids) == {first.pk}

        # A failed run cannot be activated; the active one stays.
        failed = TrainingRun.objects.create(project=project, status="failed")
        response = activate(failed)
        assert "only a succeeded run" in response.content.decode()
        assert list(TrainingRun.objects.filter(is_active=True, project=project)) == [first]


def test_editing_label_steps_recomputes_counters(admin_client_pg, data):
    annotation = data[Annotation]
    url = _url(Annotation, "change", annotation.pk)
    form = admin_client_pg.get(url).context["adminform"].form
    payload = {k: v for k, v in form.initial.items() if v is not None and k in form.fields}
    steps = json.loads(annotation.label_steps)
    steps[1]["completions"][0]["rating"] = 1
    steps[1]["chosen_completion"] = 0
    payload.update(
        label_steps=json.dumps(steps),
        finish_reason="solution",  # the -1 is gone: found_error would be refused (a correction keeps the rules)
        submitted_at_0=annotation.submitted_at.strftime("%Y-%m-%d"),
        submitted_at_1=annotation.submitted_at.strftime("%H:%M:%S"),
        project=annotation.project_id,
        solution=annotation.solution_id,
        assignment=annotation.assignment_id,
        annotator=annotation.annotator_id,
    )
    payload.pop("submitted_at", None)
    payload = {k: v for k, v in payload.items() if v is not False}
    response = admin_client_pg.post(url, payload)
    assert response.status_code == 302, response.context["adminform"].form.errors
    annotation.refresh_from_db()
    assert (annotation.n_positive, annotation.n_negative, annotation.first_error_index) == (2, 0, None)
    # Broken JSON is refused and nothing changes.
    payload["label_steps"] = "[{"
    response = admin_client_pg.post(url, payload)
    assert response.status_code == 200 and "Not valid JSON" in response.content.decode()


def test_the_lead_reads_a_give_up_reason_in_the_annotation_list(admin_client_pg, data):
    annotation = data[Annotation]
    annotation.finish_reason = "give_up"
    annotation.finish_note = "Step 2 uses a notation I do not know."
    annotation.save()
    page = admin_client_pg.get(_url(Annotation, "changelist")).content.decode()
    assert 'column-reason">' in page and ">Reason</a>" in page
    assert "Step 2 uses a notation I do not know." in page
    found = admin_client_pg.get(_url(Annotation, "changelist"), {"q": "notation"}).content.decode()
    assert _url(Annotation, "change", annotation.pk) in found


def test_annotator_status_is_spelled_in_the_plural(admin_client_pg, data):
    index = admin_client_pg.get(reverse("admin:index")).content.decode()
    assert "Annotator statuses" in index and "Annotator statuss" not in index


def test_token_admin_shows_whose_token_but_never_the_key_and_revokes(admin_client_pg, data):
    from django.contrib.admin.models import LogEntry
    from rest_framework.authtoken.models import Token

    token = Token.objects.get(user=data[ApiToken].user)
    listed = admin_client_pg.get(_url(ApiToken, "changelist")).content.decode()
    assert "ann-admin" in listed and f"{token.key[:6]}…" in listed
    assert token.key not in listed  # a key is a password: DRF's admin listed every one whole
    assert "never (no API_TOKEN_MAX_AGE_DAYS)" in listed
    with override_settings(API_TOKEN_MAX_AGE_DAYS=30):  # when the API stops taking it
        listed = admin_client_pg.get(_url(ApiToken, "changelist")).content.decode()
        assert f"{token.created + timedelta(days=30):%Y-%m-%d %H:%M} UTC" in listed
    # (addressed by its user's id, as DRF's admin does, so no URL holds the key)
    for view in ("change", "delete"):
        page = admin_client_pg.get(_url(ApiToken, view, token.user.pk)).content.decode()
        assert "ann-admin" in page and token.key not in page, view
    assert admin_client_pg.get(_url(ApiToken, "add")).status_code == 403  # made by its user, seen once
    response = admin_client_pg.post(_url(ApiToken, "delete", token.user.pk), {"post": "yes"})
    assert response.status_code == 302 and not Token.objects.filter(pk=token.pk).exists()
    logged = LogEntry.objects.get(object_id=str(token.user.pk))
    assert token.key not in logged.object_repr and "ann-admin" in logged.object_repr
