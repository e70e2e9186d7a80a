"""Deletions in the admin at any size: what a deletion takes is counted in SQL (the same counts as
Django's collector), a superuser's big deletion is confirmed by counts, and rows that go only with
their parent (revisions, invites, tombstones, steps) no longer block the parent's deletion."""

import uuid

import pytest
from django.contrib.admin.utils import NestedObjects
from django.contrib.auth import get_user_model
from django.test import Client

from annotate.admin_scope import LISTED_DELETIONS
from annotate.cascade import cascade_counts
from annotate.models import (
    Annotation,
    AnnotationRevision,
    AuditEvent,
    DeletedLabel,
    Invite,
    Problem,
    Project,
    Solution,
    Step,
)
from ml.models import StepScore, TrainingRun
from tests.security.world import build_world

pytestmark = pytest.mark.django_db


def _root() -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", "root@example.com", "pw"))
    return client


def _collected(rows) -> dict:
    collector = NestedObjects(using="default")
    collector.collect(list(rows))
    return {model: len(objs) for model, objs in collector.model_objs.items() if objs}


@pytest.mark.parametrize("label", ["annotate.project", "annotate.solution", "annotate.annotation"])
def test_cascade_counts_are_djangos_collector_counts(label):
    world = build_world()
    row = world.project if label == "annotate.project" else world.rows[label]
    rows = type(row).objects.filter(pk=row.pk)
    assert cascade_counts(rows) == _collected(rows)


def test_a_superuser_deletes_a_corrected_label_and_a_project_that_sent_invites():
    """Was: 403 for both. The label's revision, the project's invite and tombstones had read-only
    admins that refused every deletion reaching them, a superuser's included."""
    world = build_world()  # a corrected annotation (one revision), an invite, a tombstone
    annotation = world.rows["annotate.annotation"]
    assert AnnotationRevision.objects.filter(annotation=annotation).exists()
    root = _root()
    assert root.get(f"/admin/annotate/annotation/{annotation.pk}/delete/").context["perms_lacking"] == set()
    assert root.post(f"/admin/annotate/annotation/{annotation.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not Annotation.objects.filter(pk=annotation.pk).exists()
    event = AuditEvent.objects.get(action="annotation.deleted")
    assert event.details["with"] == {"annotate.AnnotationRevision": 1}
    assert Invite.objects.filter(project=world.project).exists()
    assert DeletedLabel.objects.filter(project=world.project).exists()
    assert root.post(f"/admin/annotate/project/{world.project.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not Project.objects.filter(pk=world.project.pk).exists()
    # never alone: their own delete pages stay refused
    world2 = build_world()
    revision = AnnotationRevision.objects.filter(annotation__project=world2.project).first()
    assert root.get(f"/admin/annotate/annotationrevision/{revision.pk}/delete/").status_code == 403
    invite = Invite.objects.filter(project=world2.project).first()
    assert root.get(f"/admin/annotate/invite/{invite.pk}/delete/").status_code == 403


def test_a_big_deletion_is_confirmed_by_counts_and_audited_with_them():
    project = Project.objects.create(slug="big")
    problem = Problem.objects.create(project=project, content_hash="p", text="q", ground_truth_answer="1")
    solutions = Solution.objects.bulk_create(
        Solution(project=project, problem=problem, content_hash=uuid.uuid4().hex, n_steps=10, final_answer="1")
        for _ in range(60)
    )
    steps = Step.objects.bulk_create(Step(solution=s, index=i, text="t") for s in solutions for i in range(10))
    run = TrainingRun.objects.create(project=project, status="succeeded")
    StepScore.objects.bulk_create(
        StepScore(step=st, training_run=run, p_positive=0.5, p_neutral=0.3, p_negative=0.2, uncertainty=1.0)
        for st in steps
    )
    assert 1 + 1 + 60 + 600 + 1 + 600 > LISTED_DELETIONS
    root = _root()
    page = root.get(f"/admin/annotate/problem/{problem.pk}/delete/")
    assert page.status_code == 200 and page.context["perms_lacking"] == set()
    assert dict(page.context["model_count"]) == {"problems": 1, "solutions": 60, "steps": 600, "step scores": 600}
    listed = page.context["deleted_objects"]
    assert len(listed) == 2 and listed[1] == "and the 1,260 rows counted in the summary above"
    assert f"/admin/annotate/problem/{problem.pk}/change/" in listed[0]
    assert root.post(f"/admin/annotate/problem/{problem.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not Step.objects.filter(solution__project=project).exists() and not StepScore.objects.exists()
    event = AuditEvent.objects.get(action="problem.deleted")
    assert event.details["with"] == {"annotate.Solution": 60, "annotate.Step": 600, "ml.StepScore": 600}
    # A small deletion keeps Django's page, which lists each row
    small = Problem.objects.create(project=project, content_hash="s", text="q2", ground_truth_answer="1")
    Solution.objects.create(project=project, problem=small, content_hash="s1", n_steps=0, final_answer="1")
    page = root.get(f"/admin/annotate/problem/{small.pk}/delete/")
    assert "rows counted in the summary" not in str(page.context["deleted_objects"])
