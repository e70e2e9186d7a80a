"""Changing a project's overlap on its settings page reopens or closes its solutions at once: raising
it after every solution got its one label serves them again to a second annotator (it said "Saved"
while the queue stayed empty and the dashboard said "0 labels to go"), lowering it closes the
solutions that now have enough labels; active assignments, gold and screening solutions are kept.
Real claims and submits through the API, PostgreSQL."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from annotate.models import Assignment, AssignmentStatus, AuditEvent, Comparison, Project, Role, Solution, TaskKind
from annotate.selectors.stats import project_stats
from annotate.selectors.stats import snapshot as stats_snapshot
from annotate.services.projects import update_settings
from tests.api_clients import member_client
from tests.factories import make_project, make_solutions, make_user, payload

pytestmark = pytest.mark.django_db


def _next(client, project: Project):
    return client.get(f"/api/v1/projects/{project.slug}/tasks/next/")


def _label(client, project: Project, key: str) -> int:
    """Claim and submit one task; returns its solution's id."""
    response = _next(client, project)
    assert response.status_code == 200, response.content
    task = response.json()
    body = payload([1] * len(task["steps"]), key=key)
    done = client.post(f"/api/v1/assignments/{task['assignment_id']}/submit/?next=false", body, format="json")
    assert done.status_code in (200, 201), done.content
    return Assignment.objects.get(pk=task["assignment_id"]).solution_id


def _label_all(client, project: Project) -> None:
    n = 0
    while _next(client, project).status_code == 200:
        _label(client, project, key=f"{client.user.pk}-{n}")
        n += 1


def _progress(project: Project) -> dict:
    cache.delete(stats_snapshot._snapshot_key(project))
    return project_stats(project=project)["progress"]


@pytest.fixture
def project():
    project = make_project("overlap", overlap=1)
    make_solutions(project, 3)
    return project


@pytest.fixture
def lead(project):
    return make_user("lead", project=project, role=Role.LEAD)


def test_raising_overlap_on_the_settings_page_serves_labeled_solutions_to_a_second_annotator(client, project, lead):
    first = member_client(project, "first", Role.ANNOTATOR)
    _label_all(first, project)
    assert not Solution.objects.filter(project=project, is_open=True).exists()
    second = member_client(project, "second", Role.ANNOTATOR)
    assert _next(second, project).status_code == 204
    assert _progress(project)["labels_remaining"] == 0

    Project.objects.filter(pk=project.pk).update(name="Overlap")
    client.force_login(lead)
    form = {"name": "Overlap", "task_kind": "steps", "overlap": "2", "qc_rate": "0", "control_share": "0.1"}
    form |= {"selection_strategy": "uncertainty", "retrain_every": "300", "guidelines": ""}
    response = client.post(f"/projects/{project.slug}/settings/", form, follow=True)
    assert response.redirect_chain and "Saved: Overlap" in response.content.decode()

    assert Solution.objects.filter(project=project, is_open=True).count() == 3
    progress = _progress(project)
    assert progress["solutions_open"] == 3 and progress["labels_remaining"] == 3
    assert _next(first, project).status_code == 204  # never the same solution twice
    labeled = _label(second, project, key="s-0")
    assert Solution.objects.get(pk=labeled).annotation_count == 2
    assert Solution.objects.get(pk=labeled).is_open is False  # two labels: done at overlap 2
    assert _progress(project)["labels_remaining"] == 2
    event = AuditEvent.objects.get(action="project.settings_changed")
    assert event.details["changes"]["overlap"] == [1, 2] and event.details["solutions_open_changed"] == 3


def test_lowering_overlap_closes_solutions_with_enough_labels_and_keeps_active_assignments(project, lead):
    update_settings(project=project, user=lead, overlap=3)
    first = member_client(project, "first", Role.ANNOTATOR)
    labeled = [_label(first, project, key="f-0"), _label(first, project, key="f-1")]
    second = member_client(project, "second", Role.ANNOTATOR)
    _label(second, project, key="s-0")
    held = _next(second, project).json()  # second's active assignment, on a solution labeled once
    held_solution = Assignment.objects.get(pk=held["assignment_id"]).solution
    assert held_solution.annotation_count == 1

    update_settings(project=project, user=lead, overlap=1)

    open_ids = set(Solution.objects.filter(project=project, is_open=True).values_list("pk", flat=True))
    unlabeled = set(Solution.objects.filter(project=project, annotation_count=0).values_list("pk", flat=True))
    assert open_ids == unlabeled and not open_ids & set(labeled)
    assert _progress(project)["labels_remaining"] == len(unlabeled)
    # The active assignment is kept: served again on reload, and its label is stored.
    assert _next(second, project).json()["assignment_id"] == held["assignment_id"]
    body = payload([1] * len(held["steps"]), key="s-held")
    response = second.post(f"/api/v1/assignments/{held['assignment_id']}/submit/?next=false", body, format="json")
    assert response.status_code in (200, 201), response.content
    assert Assignment.objects.get(pk=held["assignment_id"]).status == AssignmentStatus.SUBMITTED
    assert Solution.objects.get(pk=held_solution.pk).annotation_count == 2


def test_reopened_for_relabeling_gold_and_screening_keep_their_state(project, lead):
    relabel, *_ = Solution.objects.filter(project=project).order_by("pk")
    # A lead reopened it for one label beyond the overlap (the admin's action): 1 label, 1 extra.
    Solution.objects.filter(pk=relabel.pk).update(annotation_count=1, extra_labels=1, is_open=True)
    gold, screening = make_solutions(project, 1, is_gold=True) + make_solutions(project, 1, is_screening=True)
    Solution.objects.filter(pk__in=[gold.pk, screening.pk]).update(annotation_count=5)

    update_settings(project=project, user=lead, overlap=2)
    assert Solution.objects.get(pk=relabel.pk).is_open  # 1 < 2 + 1
    update_settings(project=project, user=lead, overlap=1)
    assert Solution.objects.get(pk=relabel.pk).is_open  # 1 < 1 + 1: the extra label is still wanted
    Solution.objects.filter(pk=relabel.pk).update(annotation_count=2)
    update_settings(project=project, user=lead, overlap=2)
    assert Solution.objects.get(pk=relabel.pk).is_open  # 2 < 2 + 1
    update_settings(project=project, user=lead, overlap=1)
    assert not Solution.objects.get(pk=relabel.pk).is_open  # 2 labels = 1 + 1
    assert Solution.objects.filter(pk__in=[gold.pk, screening.pk], is_open=True).count() == 2


def test_other_settings_leave_the_queue_alone(project, lead):
    Solution.objects.filter(project=project).update(annotation_count=3)  # inconsistent on purpose
    update_settings(project=project, user=lead, name="Renamed", qc_rate=0.2)
    assert Solution.objects.filter(project=project, is_open=True).count() == 3
    assert "solutions_open_changed" not in AuditEvent.objects.get(action="project.settings_changed").details


def test_pairs_of_a_compare_project_follow_the_overlap(lead):
    project = make_project("pairs", overlap=1, task_kind=TaskKind.COMPARE)
    lead = make_user("pairs-lead", project=project, role=Role.LEAD)
    a, b, c = make_solutions(project, 3)
    for x, y in [(a, b), (a, c), (b, c)]:
        Comparison.objects.create(project=project, problem=x.problem, solution_a=x, solution_b=y, annotation_count=1)
    Comparison.objects.filter(project=project).update(is_open=False)
    Comparison.objects.filter(solution_b=c).update(is_gold=True)

    update_settings(project=project, user=lead, overlap=2)
    assert list(Comparison.objects.filter(project=project, is_open=True).values_list("is_gold", flat=True)) == [False]
    update_settings(project=project, user=lead, overlap=1)
    assert not Comparison.objects.filter(project=project, is_open=True).exists()


def test_guidelines_left_as_they_were_are_not_a_change(client, project, lead):
    # Stored with a trailing newline (as the demo and imports write them); the form strips the
    # text's ends and the browser sends CRLF, so an untouched editor differed from the stored text.
    Project.objects.filter(pk=project.pk).update(name="Overlap", guidelines="# Rules\n\nRate each step.\n")
    client.force_login(lead)
    form = {"name": "Overlap", "task_kind": "steps", "overlap": "2", "qc_rate": "0", "control_share": "0.1"}
    form |= {"selection_strategy": "uncertainty", "retrain_every": "300"}
    form["guidelines"] = "# Rules\r\n\r\nRate each step."
    response = client.post(f"/projects/{project.slug}/settings/", form, follow=True)
    page = response.content.decode()
    assert "Saved: Overlap" in page and "Guidelines" not in page.split("Saved:")[1].split("</li>")[0]
    event = AuditEvent.objects.get(action="project.settings_changed")
    assert "overlap" in event.details["changes"] and "guidelines" not in event.details["changes"]
    project.refresh_from_db()
    assert project.guidelines == "# Rules\n\nRate each step.\n"


def test_a_number_below_its_range_gets_one_error_not_two():
    """Found by the lead walkthrough: -5 as the auto-retrain threshold said both ">= 0" (the model
    field's own bound) and ">= 1"."""
    from annotate.forms import ProjectSettingsForm
    from annotate.models import Project

    project = Project.objects.create(slug="bounds", name="Bounds")
    data = {
        "name": "Bounds",
        "task_kind": "steps",
        "overlap": -5,
        "qc_rate": 0,
        "selection_strategy": "random",
        "control_share": 0.1,
        "retrain_every": -5,
        "guidelines": "",
    }
    form = ProjectSettingsForm(data=data, instance=project)
    assert not form.is_valid()
    assert form.errors["retrain_every"] == ["Ensure this value is greater than or equal to 0."]  # 0: off
    assert form.errors["overlap"] == ["Ensure this value is greater than or equal to 1."]
