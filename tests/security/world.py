"""A hand-built project with one caller of every kind and one real row of every admin model."""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field

from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import (
    Annotation,
    AnnotationSource,
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
from annotate.services import audit, queue
from annotate.services.members import add_member
from annotate.services.team import remove_member
from autolabel.models import AutoLabeledSolution, AutolabelJob, AutolabelSettings, AutoSource, AutoStepLabel
from ml.models import StepScore, TrainingRun
from prm800k.labels import label_counters
from prm800k.records import dumps_label_steps
from tests.factories import gold_label_steps, make_solutions

User = get_user_model()
_seq = itertools.count()


@dataclass
class World:
    project: Project
    other: Project
    users: dict[str, object]
    rows: dict[str, object] = field(default_factory=dict)
    removed_assignment: Assignment | None = None

    def api_client(self, kind: str) -> APIClient:
        """Tokens act with their user's roles: API calls authenticate by token only."""
        client = APIClient()
        user = self.users.get(kind)
        if user is not None:
            client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
        return client

    def session_client(self, kind: str) -> Client:
        client = Client()
        user = self.users.get(kind)
        if user is not None:
            client.force_login(user)
        return client


def _axes_rows(username: str) -> dict[str, object]:
    where = {"user_agent": "test", "ip_address": "127.0.0.1", "username": username, "http_accept": "*/*"}
    return {
        "axes.accessattempt": AccessAttempt.objects.create(
            **where, path_info="/accounts/login/", get_data="", post_data="", failures_since_start=1
        ),
        "axes.accesslog": AccessLog.objects.create(**where, path_info="/accounts/login/"),
        "axes.accessfailurelog": AccessFailureLog.objects.create(**where, path_info="/accounts/login/"),
    }


def build_world(*, slug: str | None = None, with_revision: bool = True) -> World:
    """`with_revision`: one audit-trail row on the annotation (for the admin pages); audit tests
    that count revisions, or check the database guard inside one transaction, go without."""
    n = next(_seq)
    project = Project.objects.create(slug=slug or f"sec{n}", name="Security matrix")
    other = Project.objects.create(slug=f"other{n}")
    users: dict[str, object] = {
        "annotator": User.objects.create_user(f"ann{n}", password="pw-steplabel-test"),
        "lead": User.objects.create_user(f"lead{n}", password="pw-steplabel-test"),
        "ml_engineer": User.objects.create_user(f"ml{n}", password="pw-steplabel-test"),
        "staff": User.objects.create_user(f"staff{n}", password="pw-steplabel-test", is_staff=True),
        "superuser": User.objects.create_superuser(f"root{n}", f"root{n}@example.com", "pw-steplabel-test"),
        "outsider": User.objects.create_user(f"out{n}", password="pw-steplabel-test"),
        "removed": User.objects.create_user(f"gone{n}", password="pw-steplabel-test"),
    }
    add_member(project=project, user=users["annotator"], role=Role.ANNOTATOR)
    add_member(project=project, user=users["lead"], role=Role.LEAD)
    add_member(project=project, user=users["ml_engineer"], role=Role.ML_ENGINEER)
    add_member(project=other, user=users["outsider"], role=Role.LEAD)
    add_member(project=project, user=users["removed"], role=Role.ANNOTATOR)
    for user in users.values():
        user.refresh_from_db()

    solutions = make_solutions(project, 4, n_steps=3)
    assignment = queue.claim_next(project=project, user=users["annotator"], roles={Role.ANNOTATOR})
    # A member who claimed a task and was then removed by the lead.
    removed_assignment = queue.claim_next(project=project, user=users["removed"], roles={Role.ANNOTATOR})
    remove_member(project=project, actor=users["lead"], user_id=users["removed"].pk)
    labeled = solutions[-1]
    label_steps = gold_label_steps([1, 1, -1])
    annotation = Annotation.objects.create(
        project=project,
        solution=labeled,
        annotator=users["lead"],
        labeler_uuid=str(LabelerProfile.objects.get(user=users["lead"]).labeler_uuid),
        source=AnnotationSource.APP,
        submitted_at=assignment.created_at,
        finish_reason="found_error",
        total_time_ms=1000,
        label_steps=dumps_label_steps(label_steps),
        is_gold=True,
        **label_counters(label_steps),
    )
    revision = (
        audit.record_event(annotation=annotation, user=users["lead"], reason="checked by the lead")
        if with_revision
        else None
    )
    run = TrainingRun.objects.create(project=project)
    step = Step.objects.filter(solution=labeled).first()
    rows = {
        "annotate.project": project,
        "annotate.membership": Membership.objects.get(project=project, user=users["annotator"]),
        "annotate.labelerprofile": LabelerProfile.objects.get(user=users["annotator"]),
        "annotate.annotatorstatus": AnnotatorStatus.objects.get(project=project, user=users["annotator"]),
        "annotate.problem": labeled.problem,
        "annotate.solution": labeled,
        "annotate.step": step,
        "annotate.assignment": assignment,
        "annotate.annotation": annotation,
        "annotate.annotationrevision": revision,
        "annotate.importjob": ImportJob.objects.create(project=project, requested_by=users["lead"]),
        "annotate.auditevent": AuditEvent.objects.create(actor=users["lead"], project=project, action="test"),
        "annotate.invite": Invite.objects.create(
            project=project,
            roles=["annotator"],
            token_hash=uuid.uuid4().hex * 2,  # unique per world
            created_by=users["lead"],
            expires_at=timezone.now(),
        ),
        "annotate.export": Export.objects.create(project=project, requested_by=users["lead"]),
        "annotate.deletedlabel": DeletedLabel.objects.create(
            project=project,
            kind="annotation",
            export_seq=1,
            label_export_seq=1,
            labeler_uuid="gone",
            timestamp_text="t",
        ),
        "annotate.comparison": (
            pair := Comparison.objects.create(
                project=project, problem=solutions[0].problem, solution_a=solutions[0], solution_b=solutions[1]
            )
        ),
        "annotate.preference": Preference.objects.create(
            project=project,
            comparison=pair,
            annotator=users["lead"],
            labeler_uuid="lead",
            preferred="A",
            shown="A",
            strength=2,
            idempotency_key=f"world{n}",
            submitted_at=timezone.now(),
        ),
        "ml.trainingrun": run,
        "ml.stepscore": StepScore.objects.create(
            step=step, training_run=run, p_positive=0.5, p_neutral=0.3, p_negative=0.2, uncertainty=1.0
        ),
        "autolabel.autolabeljob": (
            job := AutolabelJob.objects.create(project=project, base_url="http://127.0.0.1:9/v1", model="m")
        ),
        "autolabel.autosteplabel": AutoStepLabel.objects.create(
            solution=labeled, index=0, source=AutoSource.ROLLOUT, label=1, estimate=0.5, job=job
        ),
        "autolabel.autolabelsettings": AutolabelSettings.objects.create(project=project),
        "autolabel.autolabeledsolution": AutoLabeledSolution.objects.get(pk=labeled.pk),
        "auth.user": users["annotator"],
        "auth.group": Group.objects.get(name="Leads"),
        "annotate.apitoken": ApiToken.objects.get(key=Token.objects.get_or_create(user=users["annotator"])[0].key),
        **_axes_rows(users["annotator"].username),
    }
    assert isinstance(assignment, Assignment) and isinstance(labeled, Solution) and isinstance(step, Step)
    assert isinstance(labeled.problem, Problem)
    return World(project=project, other=other, users=users, rows=rows, removed_assignment=removed_assignment)
