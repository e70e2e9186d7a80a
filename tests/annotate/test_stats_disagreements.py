"""The dashboard's disagreements: the solutions behind the first-error agreement figure where two
labels put the first error at different steps (annotate.selectors.stats.disagreements), through
the API on PostgreSQL with labels submitted the way annotators submit them."""

from __future__ import annotations

import pytest

from annotate.models import Assignment, Project, Role
from tests.api_clients import member_client
from tests.factories import make_solutions, payload

pytestmark = pytest.mark.django_db


def _label_all(client, slug: str, ratings_by_solution: dict[int, list[int | None]], key: str) -> None:
    """Claim until the queue is empty, rating each solution as `ratings_by_solution` says."""
    while (response := client.get(f"/api/v1/projects/{slug}/tasks/next/")).status_code == 200:
        task = response.json()
        solution_id = Assignment.objects.get(pk=task["assignment_id"]).solution_id
        body = payload(ratings_by_solution[solution_id], key=f"{key}-{solution_id}")
        assert (
            client.post(f"/api/v1/assignments/{task['assignment_id']}/submit/", body, format="json").status_code == 201
        )


def test_the_solutions_whose_labels_differ_on_the_first_error_are_listed_with_their_labels():
    project = Project.objects.create(slug="algebra", overlap=2)
    same, moved, none_vs_one = make_solutions(project, 3)
    ann = member_client(project, "ann", Role.ANNOTATOR)
    bob = member_client(project, "bob", Role.ANNOTATOR)
    _label_all(ann, "algebra", {same.pk: [1, -1, None], moved.pk: [1, -1, None], none_vs_one.pk: [1, 1, 1]}, "a")
    _label_all(bob, "algebra", {same.pk: [1, -1, None], moved.pk: [1, 1, -1], none_vs_one.pk: [-1, None, None]}, "b")

    lead = member_client(project, "lena", Role.LEAD)
    response = lead.get("/api/v1/projects/algebra/disagreements/")
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    body = response.json()
    assert (body["solutions_compared"], body["disagreeing"]) == (3, 2)
    shown = {row["solution"]: row for row in body["shown"]}
    assert set(shown) == {moved.pk, none_vs_one.pk}  # the one they agree on is not listed
    assert [(label["annotator"], label["first_error_step"]) for label in shown[moved.pk]["labels"]] == [
        ("ann", 2),
        ("bob", 3),
    ]
    assert [
        (label["annotator"], label["first_error_step"], label["finish_reason"])
        for label in shown[none_vs_one.pk]["labels"]
    ] == [
        ("ann", None, "solution"),
        ("bob", 1, "found_error"),
    ]
    assert shown[moved.pk]["n_steps"] == 3 and shown[moved.pk]["problem"] == moved.problem.text[:140]
    # the figure on the dashboard agrees: 1 of 3 label pairs put the first error at the same step
    stats = lead.get("/api/v1/projects/algebra/stats/").json()
    assert stats["quality"]["agreement"]["pairs"] == 3
    assert stats["quality"]["agreement"]["first_error_agreement"] == pytest.approx(1 / 3)
    # leads only
    assert ann.get("/api/v1/projects/algebra/disagreements/").status_code == 403
    ml = member_client(project, "mlops", Role.ML_ENGINEER)
    assert ml.get("/api/v1/projects/algebra/disagreements/").status_code == 403


def test_no_overlap_means_nothing_to_compare():
    project = Project.objects.create(slug="solo", overlap=1)
    make_solutions(project, 2)
    ann = member_client(project, "ann", Role.ANNOTATOR)
    _label_all(ann, "solo", {s.pk: [1, 1, 1] for s in project.solutions.all()}, "a")
    body = member_client(project, "lena", Role.LEAD).get("/api/v1/projects/solo/disagreements/").json()
    assert body == {"solutions_compared": 0, "disagreeing": 0, "sample_limit": 500, "shown": []}
