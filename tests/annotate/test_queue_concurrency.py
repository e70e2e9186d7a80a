"""The queue under real concurrency: threads with their own PostgreSQL connections."""

import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotate.models import Annotation, Assignment, AssignmentStatus, Solution
from annotate.services.queue import claim_next
from labeling_api.serializers_submit import submit_payload
from tests.factories import make_project, make_solutions, make_user, payload

pytestmark = pytest.mark.django_db(transaction=True)


def run_threads(target, args_list):
    """Run target(*args) in one thread each, started together; re-raise the first error."""
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(args_list))
    results: list = [None] * len(args_list)

    def body(i, args):
        try:
            barrier.wait()
            results[i] = target(*args)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=body, args=(i, args)) for i, args in enumerate(args_list)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    if errors:
        raise errors[0]
    return results


def label_until_empty(project, user):
    done = []
    while True:
        assignment = claim_next(project=project, user=user)
        if assignment is None:
            return done
        result = submit_payload(assignment=assignment, user=user, payload=payload([1, 1, 1], key=f"a{assignment.pk}"))
        assert result.created
        done.append(assignment.solution_id)


@pytest.mark.parametrize("overlap", [1, 3])
def test_fifty_annotators_label_every_solution_exactly_overlap_times(overlap):
    project = make_project(overlap=overlap)
    solutions = make_solutions(project, 200)
    users = [make_user(project=project) for _ in range(50)]

    per_user = run_threads(label_until_empty, [(project, user) for user in users])

    annotations = list(Annotation.objects.filter(project=project).values_list("solution_id", "annotator_id"))
    assert len(annotations) == 200 * overlap == sum(len(done) for done in per_user)
    assert Counter(solution for solution, _ in annotations) == {s.pk: overlap for s in solutions}
    assert len(set(annotations)) == len(annotations), "an annotator labeled one solution twice"
    for done in per_user:
        assert len(done) == len(set(done))
    assert not Solution.objects.filter(project=project, is_open=True).exists()
    assert set(Solution.objects.filter(project=project).values_list("annotation_count", flat=True)) == {overlap}
    assert not Assignment.objects.filter(project=project).exclude(status=AssignmentStatus.SUBMITTED).exists()
    if overlap == 1:
        # 200 solutions over 50 annotators: work was actually shared, not done by one thread.
        assert sum(1 for done in per_user if done) > 1


def test_concurrent_duplicate_submits_store_one_annotation():
    project = make_project()
    make_solutions(project, 1)
    user = make_user(project=project)
    assignment = claim_next(project=project, user=user)
    connection.close()

    results = run_threads(
        lambda: submit_payload(assignment=assignment, user=user, payload=payload([1, 1, 1], key="same")), [()] * 20
    )

    assert Annotation.objects.filter(project=project).count() == 1
    assert len({r.annotation.pk for r in results}) == 1
    assert sum(r.created for r in results) == 1


def test_concurrent_claims_by_one_user_return_one_assignment():
    project = make_project()
    make_solutions(project, 10)
    user = make_user(project=project)

    results = run_threads(lambda: claim_next(project=project, user=user), [()] * 10)

    assert len({a.pk for a in results}) == 1
    assert Assignment.objects.filter(annotator=user).count() == 1


def test_expired_lease_is_reclaimed_by_another_annotator_under_contention():
    project = make_project(overlap=1)
    (solution,) = make_solutions(project, 1)
    first = make_user(project=project)
    stale = claim_next(project=project, user=first)
    Assignment.objects.filter(pk=stale.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    others = [make_user(project=project) for _ in range(10)]
    connection.close()

    claims = run_threads(lambda user: claim_next(project=project, user=user), [(u,) for u in others])

    winners = [a for a in claims if a is not None]
    assert len(winners) == 1 and winners[0].solution_id == solution.pk
