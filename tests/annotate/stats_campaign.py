"""The hand-built project of the dashboard statistics tests, where every figure is known (the
`campaign` fixture in tests/annotate/conftest.py builds it), and the helpers that build it.

The project (overlap 2, screening threshold 0.8), at NOW = 2026-01-10 12:30 UTC:

| solution | gen | strategy         | steps | answer  | labels (annotator: main-line ratings)        | open |
|----------|-----|------------------|-------|---------|----------------------------------------------|------|
| S1       | 0   | random           | 4     | wrong   | ann [1,1,-1] (-30 min), bob [1,0,-1] (-2 h)  | no   |
| S2       | 0   | random           | 3     | right   | ann [1,1,1] (-3 days)                        | yes  |
| S3       | 1   | uncertainty      | 5     | wrong   | -                                            | yes  |
| S4       | 1   | convincing_wrong | 2     | unknown | -                                            | yes  |
| G1 gold  | -   | -                | 3     | -       | gold [1,1,-1]; QC: bob [1,-1] (-1 h), ann [1,1,-1] (-5 h) | - |
"""

from __future__ import annotations

import hashlib
import itertools
from datetime import UTC, datetime, timedelta

from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import (
    Annotation,
    AnnotationSource,
    AnnotatorStatus,
    Membership,
    Problem,
    Project,
    Role,
    ScreeningStatus,
    Solution,
    Step,
)
from ml.models import TrainingRun
from prm800k.labels import label_counters
from prm800k.records import dumps_label_steps

NOW = datetime(2026, 1, 10, 12, 30, tzinfo=UTC)
_seq = itertools.count()


def _hash(*parts) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def new_user(name: str, project: Project | None = None, role: str | None = Role.ANNOTATOR):
    user = get_user_model().objects.create_user(name, password="pw-steplabel-test")
    if project is not None and role:
        Membership.objects.create(project=project, user=user, role=role)
    return user


def new_solution(project, *, n_steps, generation=None, strategy="", answer_correct=None, count=0, is_open=True, **kw):
    tag = next(_seq)
    problem = Problem.objects.create(
        project=project, text=f"Problem {tag}", content_hash=_hash("p", tag), text_hash=_hash("t", tag)
    )
    solution = Solution.objects.create(
        project=project,
        problem=problem,
        content_hash=_hash("s", tag),
        n_steps=n_steps,
        generation=generation,
        strategy=strategy,
        answer_correct=answer_correct,
        annotation_count=count,
        is_open=is_open,
        **kw,
    )
    Step.objects.bulk_create([Step(solution=solution, index=i, text=f"step {i}") for i in range(n_steps)])
    return solution


def new_label(solution, user, ratings, *, at, ms, finish="found_error", flagged=(), **kw):
    steps = [
        {
            "completions": [{"text": f"step {i}", "rating": r, "flagged": i in flagged}],
            "human_completion": None,
            "chosen_completion": None if r == -1 else 0,
        }
        for i, r in enumerate(ratings)
    ]
    return Annotation.objects.create(
        project=solution.project,
        solution=solution,
        annotator=user,
        labeler_uuid=str(user.pk) if user else "gold",
        source=AnnotationSource.APP if user else AnnotationSource.IMPORT,
        submitted_at=at,
        generation=solution.generation,
        finish_reason=finish,
        total_time_ms=ms,
        label_steps=dumps_label_steps(steps),
        **label_counters(steps),
        **kw,
    )


def build_campaign() -> dict:
    """The project of the module docstring: lead lena, annotators ann, bob and cy, ML engineer mel, four runs."""
    project = Project.objects.create(slug="algebra", name="Algebra", overlap=2, screening_threshold=0.8)
    lead = new_user("lena", project, Role.LEAD)
    ann = new_user("ann", project)
    bob = new_user("bob", project)
    cy = new_user("cy", project)
    mel = new_user("mel", project, Role.ML_ENGINEER)
    s1 = new_solution(project, n_steps=4, generation=0, strategy="random", answer_correct=False, count=2, is_open=False)
    s2 = new_solution(project, n_steps=3, generation=0, strategy="random", answer_correct=True, count=1)
    new_solution(project, n_steps=5, generation=1, strategy="uncertainty", answer_correct=False)
    new_solution(project, n_steps=2, generation=1, strategy="convincing_wrong")
    g1 = new_solution(project, n_steps=3, count=3, is_gold=True, is_quality_control=True, is_open=False)
    new_label(s1, ann, [1, 1, -1], at=NOW - timedelta(minutes=30), ms=40_000, flagged={1})
    new_label(s1, bob, [1, 0, -1], at=NOW - timedelta(hours=2), ms=60_000)
    new_label(s2, ann, [1, 1, 1], at=NOW - timedelta(days=3), ms=30_000, finish="solution")
    new_label(g1, None, [1, 1, -1], at=NOW - timedelta(days=20), ms=None, is_gold=True, is_quality_control=True)
    new_label(g1, bob, [1, -1], at=NOW - timedelta(hours=1), ms=20_000, is_quality_control=True)
    new_label(g1, ann, [1, 1, -1], at=NOW - timedelta(hours=5), ms=50_000, is_quality_control=True)
    AnnotatorStatus.objects.create(
        project=project, user=ann, screening_status=ScreeningStatus.PASSED, screening_agreement=0.9
    )
    AnnotatorStatus.objects.create(
        project=project, user=cy, screening_status=ScreeningStatus.FAILED, screening_agreement=0.4
    )

    def run(label_count, status, heldout=None, **kw):
        metrics = {"train": {"accuracy": 0.99}, "heldout": heldout} if heldout else {}
        return TrainingRun.objects.create(
            project=project, label_count=label_count, status=status, metrics=metrics, **kw
        )

    runs = [
        run(100, "succeeded", {"auroc_negative": 0.6, "accuracy": 0.5, "first_error_f1": 0.3, "ece": 0.2}),
        run(
            300,
            "succeeded",
            {"auroc_negative": 0.7, "accuracy": 0.6, "first_error_f1": 0.4, "ece": 0.1},
            is_active=True,
        ),
        run(350, "failed", error="Traceback (most recent call last):\n  ...\nValueError: boom"),
        run(400, "running"),
    ]
    return {"project": project, "lead": lead, "ann": ann, "bob": bob, "cy": cy, "mel": mel, "runs": runs}


def api_client(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client
