"""The warm start on automatic labels of agent traces, on PostgreSQL: an observation shown but not
rated is context for the steps after it, never a training example of its own, as with people's
labels (their examples skip it); its rollout label was trained on as if a person had rated it."""

from __future__ import annotations

import pytest

from annotate.models import Project, Role, Solution
from autolabel.models import AutoSource, AutoStepLabel
from ml import services
from tests.api_clients import member_client
from tests.autolabel.test_kinds_walkthrough_exports import TRACE
from tests.labeling_api.test_kinds_api import _upload

pytestmark = pytest.mark.django_db


def _trace_labeled(labels: list[int]) -> Project:
    project = Project.objects.create(slug="traces")
    _upload(member_client(project, "lead", Role.LEAD), "traces", [TRACE])
    trace = Solution.objects.get()
    AutoStepLabel.objects.bulk_create(
        AutoStepLabel(solution=trace, index=i, source=AutoSource.ROLLOUT, label=label) for i, label in enumerate(labels)
    )
    return project


def test_an_unrated_observation_is_context_not_an_example() -> None:
    project = _trace_labeled([1, 1, 1, -1, -1])
    examples = services.build_examples(project=project, auto_labels="add")
    texts = [step["text"] for step in TRACE["steps"]]
    assert [(e.step_index, e.target) for e in examples] == [(0, 1), (1, 1), (3, -1)]
    assert examples[-1].previous == tuple(texts[:3])  # the observation is read before the step after it

    # where the project rates observations, the observation is an example like any step
    Project.objects.filter(pk=project.pk).update(rate_observations=True)
    examples = services.build_examples(project=Project.objects.get(pk=project.pk), auto_labels="add")
    assert [(e.step_index, e.target) for e in examples] == [(0, 1), (1, 1), (2, 1), (3, -1)]


def test_a_first_minus_on_an_observation_falls_on_the_step_after_it() -> None:
    project = _trace_labeled([1, 1, -1, -1, -1])
    examples = services.build_examples(project=project, auto_labels="add")
    assert [(e.step_index, e.target) for e in examples] == [(0, 1), (1, 1), (3, -1)]
