"""A first-wrong mark's step label goes with the preference that made it (compare/marks.py): deleted
in the admin by a superuser, with its pair, or with the pair's other solution, the label leaves the
PRM800K export with a tombstone, and its solution counts it no more. Before, a deleted preference
left its marks' labels in the export and their solutions counted as labeled. Real admin over HTTP
(PostgreSQL), as a superuser and as a lead (who may delete no label)."""

from __future__ import annotations

import importlib
import json

import pytest
from django.apps import apps
from django.contrib.admin.utils import NestedObjects

from annotate.cascade import cascade_counts
from annotate.models import Annotation, AuditEvent, Comparison, DeletedLabel, Preference, Project, Role, Solution
from tests.api_clients import member_client
from tests.security.test_admin_edit_events import _superuser
from tests.security.test_admin_identity import _lead_of, duel  # noqa: F401  (duel: a fixture)

pytestmark = pytest.mark.django_db


def _lines(response) -> list[dict]:
    assert response.status_code == 200, response.content
    return [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]


def _answer_with_marks(project: Project, name: str = "duel-ann") -> Preference:
    """One preference with a mark on each side: two step labels, one per solution of the pair."""
    annotator = member_client(project, name, Role.ANNOTATOR)
    task = annotator.get("/api/v1/projects/duel/tasks/next/").json()
    body = {
        "idempotency_key": "p1",
        "preference": "A",
        "strength": 2,
        "total_time_ms": 900,
        "first_wrong": {"A": 0, "B": 1},
    }
    answered = annotator.post(f"/api/v1/assignments/{task['assignment_id']}/submit/", body, format="json")
    assert answered.status_code == 201, answered.content
    preference = Preference.objects.get(annotator=annotator.user)
    assert set(preference.mark_labels.values_list("idempotency_key", flat=True)) == {
        f"compare:{preference.pk}:A",
        f"compare:{preference.pk}:B",
    }
    return preference


def _counts(pair: Comparison) -> tuple[int, int]:
    pair_solutions = Solution.objects.filter(pk__in=[pair.solution_a_id, pair.solution_b_id])
    rows = dict(pair_solutions.values_list("pk", "annotation_count"))
    return rows[pair.solution_a_id], rows[pair.solution_b_id]


def test_a_superusers_preference_deletion_takes_its_marks_labels_with_tombstones(duel):  # noqa: F811
    preference = _answer_with_marks(duel)
    pair = preference.comparison
    assert _counts(pair) == (1, 1)
    lead = member_client(duel, "duel-lead", Role.LEAD)
    assert len(_lines(lead.get("/api/v1/projects/duel/export/?format=prm800k"))) == 2  # numbered: delivered
    cursor = lead.get("/api/v1/projects/duel/export/?format=prm800k")["X-Export-Cursor"]
    # what the admin's confirmation and its audit row count is what goes
    counts = cascade_counts(Preference.objects.filter(pk=preference.pk))
    assert counts[Preference] == 1 and counts[Annotation] == 2

    admin_lead = _lead_of(duel)
    assert admin_lead.get(f"/admin/annotate/preference/{preference.pk}/delete/").status_code == 403
    assert admin_lead.post(f"/admin/annotate/preference/{preference.pk}/delete/", {"post": "yes"}).status_code == 403
    assert Annotation.objects.filter(preference=preference).count() == 2

    root = _superuser()
    page = root.get(f"/admin/annotate/preference/{preference.pk}/delete/").content.decode()
    assert page.count("Annotation: ") == 2  # the confirmation lists the two labels it takes
    assert root.post(f"/admin/annotate/preference/{preference.pk}/delete/", {"post": "yes"}).status_code == 302

    assert not Annotation.objects.filter(project=duel).exists()
    assert _counts(pair) == (0, 0)  # neither solution counts as labeled any more
    assert lead.get("/api/v1/projects/duel/stats/").json()["progress"]["solutions_labeled"] == 0
    assert _lines(lead.get("/api/v1/projects/duel/export/?format=prm800k")) == []
    # a consumer that pulled the two records drops them: two tombstones after its cursor
    deletions = lead.get("/api/v1/projects/duel/export/deletions/", {"since": cursor}).json()["deletions"]
    assert [d["labeler"] for d in deletions] == [preference.labeler_uuid] * 2
    assert DeletedLabel.objects.filter(kind=DeletedLabel.Kind.ANNOTATION).count() == 2
    event = AuditEvent.objects.get(action="preference.deleted")
    assert event.details["with"] == {"annotate.Annotation": 2}


def test_a_pairs_deletion_takes_its_preferences_marks_and_agrees_with_the_admins_count(duel):  # noqa: F811
    preference = _answer_with_marks(duel)
    pair = preference.comparison
    # cascade_counts (the confirmation of a big deletion, the audit row) and Django's own collector
    # (the page of a small one) count the same rows
    counted = cascade_counts(Comparison.objects.filter(pk=pair.pk))
    collector = NestedObjects(using="default")
    collector.collect([pair])
    assert counted == {model: len(rows) for model, rows in collector.model_objs.items() if rows}
    assert counted[Annotation] == 2

    lead = _lead_of(duel)
    assert lead.post(f"/admin/annotate/comparison/{pair.pk}/delete/", {"post": "yes"}).status_code == 403  # labels
    assert _superuser().post(f"/admin/annotate/comparison/{pair.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not Preference.objects.exists() and not Annotation.objects.exists()
    assert _counts(pair) == (0, 0)
    assert AuditEvent.objects.get(action="comparison.deleted").details["with"]["annotate.Annotation"] == 2


def test_deleting_one_solution_of_a_pair_releases_the_other_ones_mark(duel):  # noqa: F811
    """The solution goes with its labels; the pair, its preference and the mark on the other
    solution go with it, and that other solution (still there) counts the mark no more."""
    preference = _answer_with_marks(duel)
    pair = preference.comparison
    deleted = _superuser().post(f"/admin/annotate/solution/{pair.solution_a_id}/delete/", {"post": "yes"})
    assert deleted.status_code == 302
    assert not Annotation.objects.filter(solution_id=pair.solution_b_id).exists()
    assert Solution.objects.get(pk=pair.solution_b_id).annotation_count == 0


def test_a_mark_label_deleted_on_its_own_is_released_once(duel):  # noqa: F811
    """The annotation's admin releases it; the mark's own release stays out (its solution must not
    lose a second label's count)."""
    preference = _answer_with_marks(duel)
    pair = preference.comparison
    Solution.objects.filter(pk=pair.solution_a_id).update(annotation_count=2)  # another label besides the mark's
    label = preference.mark_labels.get(solution_id=pair.solution_a_id)
    root = _superuser()
    page = root.get(f"/admin/annotate/annotation/{label.pk}/change/")  # names the preference it goes with
    assert page.status_code == 200 and f"/admin/annotate/preference/{preference.pk}/change/" in page.content.decode()
    assert root.post(f"/admin/annotate/annotation/{label.pk}/delete/", {"post": "yes"}).status_code == 302
    assert _counts(pair) == (1, 1)
    assert Preference.objects.filter(pk=preference.pk).exists()  # the preference stays


def test_a_preference_deleted_with_two_annotators_marks_releases_only_its_own(duel):  # noqa: F811
    preference = _answer_with_marks(duel)
    pair = preference.comparison
    Solution.objects.filter(pk__in=[pair.solution_a_id, pair.solution_b_id]).update(annotation_count=3)
    assert _superuser().post(f"/admin/annotate/preference/{preference.pk}/delete/", {"post": "yes"}).status_code == 302
    assert _counts(pair) == (2, 2)


def test_the_migration_ties_earlier_marks_labels_to_their_preferences(duel):  # noqa: F811
    preference = _answer_with_marks(duel)
    Annotation.objects.update(preference=None)  # as stored before the field
    stray = preference.mark_labels.model.objects.first()
    Annotation.objects.filter(pk=stray.pk).update(idempotency_key="compare:999999:A")  # its preference gone
    migration = importlib.import_module("annotate.migrations.0027_annotation_mark_preference")
    migration.link_marks(apps, None)
    assert list(Annotation.objects.filter(preference=preference).values_list("pk", flat=True)) == list(
        Annotation.objects.exclude(pk=stray.pk).values_list("pk", flat=True)
    )
    assert Annotation.objects.get(pk=stray.pk).preference_id is None
