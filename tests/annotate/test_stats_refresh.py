"""The dashboard snapshot is refreshed by a worker, off the request path (real Celery worker)."""

from datetime import timedelta

import pytest
from django.core.cache import cache

from annotate.models import Project
from annotate.selectors import stats
from annotate.selectors.stats import snapshot as stats_snapshot
from tests.celery_worker import celery_worker, purge_broker, wait_for


@pytest.mark.django_db(transaction=True)
def test_stale_snapshot_is_served_then_rebuilt_by_a_worker():
    project = Project.objects.create(slug="refresh")
    key = stats_snapshot._snapshot_key(project)
    cache.delete_many([key, f"{key}:refreshing"])
    first = stats.project_stats(project=project)  # no snapshot yet: built in the request
    snapshot = cache.get(key)
    assert snapshot is not None and first["snapshot_at"] == snapshot["at"].isoformat()

    stale_at = snapshot["at"] - timedelta(seconds=stats_snapshot.SNAPSHOT_SECONDS + 60)
    cache.set(key, {**snapshot, "at": stale_at}, stats_snapshot.SNAPSHOT_MAX_AGE)
    purge_broker()
    with celery_worker(queues="default"):
        served = stats.project_stats(project=project)
        # The request answered from the stale snapshot and asked a worker for a new one.
        assert served["snapshot_at"] == stale_at.isoformat()
        wait_for(lambda: cache.get(key)["at"] > snapshot["at"], timeout=60, message="snapshot rebuilt by the worker")
    assert stats.project_stats(project=project)["snapshot_at"] > stale_at.isoformat()
    cache.delete_many([key, f"{key}:refreshing"])


@pytest.mark.django_db(transaction=True)
def test_marking_gold_has_a_worker_rebuild_the_snapshot_at_once():
    """Was: a label marked gold left the snapshot's label counts (and ratings, finish reasons) with
    it until the snapshot went stale, 5 minutes, while the solution total dropped at once."""
    import io
    from pathlib import Path

    from django.core.management import call_command

    from annotate.models import Annotation
    from annotate.services import audit

    fixture = Path(__file__).parent / "fixtures" / "edge_cases.jsonl"
    call_command("import_prm800k", str(fixture), project="goldsnap", no_progress=True, stdout=io.StringIO())
    project = Project.objects.get(slug="goldsnap")
    key = stats_snapshot._snapshot_key(project)
    cache.delete_many([key, f"{key}:refreshing"])
    labels = stats.project_stats(project=project)["progress"]["labels"]  # builds the snapshot
    assert labels > 1
    first = Annotation.objects.filter(project=project).order_by("pk")[:1]
    purge_broker()
    with celery_worker(queues="default"):
        assert audit.mark_gold(annotations=Annotation.objects.filter(pk__in=first), user=None, reason="gold") == 1
        wait_for(
            lambda: stats.project_stats(project=project)["progress"]["labels"] == labels - 1,
            timeout=60,
            message="snapshot rebuilt after marking gold",
        )
    cache.delete_many([key, f"{key}:refreshing"])
