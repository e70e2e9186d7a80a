"""The audit trail: every change to a submitted annotation keeps the previous version with who,
when and why; the database refuses changes that skip it; exports carry the history on request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.db import IntegrityError, transaction

from annotate.models import Annotation, AnnotationRevision, LabelerProfile, Solution
from annotate.services import audit, exports
from tests.factories import gold_label_steps
from tests.security.world import build_world

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).resolve().parents[1] / "annotate" / "fixtures"


def _admin_change(client, annotation: Annotation, **overrides):
    url = f"/admin/annotate/annotation/{annotation.pk}/change/"
    form = client.get(url).context["adminform"].form
    payload = {k: v for k, v in form.initial.items() if v is not None and k in form.fields}
    payload.update(
        submitted_at_0=annotation.submitted_at.strftime("%Y-%m-%d"),
        submitted_at_1=annotation.submitted_at.strftime("%H:%M:%S"),
        project=annotation.project_id,
        solution=annotation.solution_id,
        annotator=annotation.annotator_id,
        **overrides,
    )
    payload.pop("submitted_at", None)
    payload = {k: v for k, v in payload.items() if v is not False}
    return client.post(url, payload)


def test_a_leads_correction_in_the_admin_keeps_the_previous_version():
    world = build_world(with_revision=False)
    annotation = world.rows["annotate.annotation"]
    before = annotation.label_steps
    corrected = gold_label_steps([1, 1, 1])
    response = _admin_change(
        world.session_client("lead"),
        annotation,
        label_steps=json.dumps(corrected),
        finish_reason="solution",
        change_reason="Step 3 is right: 2x = 6 gives x = 3.",
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    annotation.refresh_from_db()
    assert json.loads(annotation.label_steps) == corrected and annotation.n_negative == 0
    (revision,) = AnnotationRevision.objects.filter(annotation=annotation)
    assert revision.version == 1 and revision.label_steps == before
    assert revision.fields["finish_reason"] == "found_error"
    assert revision.changed_by == world.users["lead"]
    assert revision.reason == "Step 3 is right: 2x = 6 gives x = 3."
    # A second correction is version 2 and keeps the first correction.
    _admin_change(world.session_client("lead"), annotation, label_steps=before, finish_reason="found_error")
    versions = list(AnnotationRevision.objects.filter(annotation=annotation).values_list("version", "reason"))
    assert versions == [(1, "Step 3 is right: 2x = 6 gives x = 3."), (2, "Edited in the admin")]
    assert AnnotationRevision.objects.get(annotation=annotation, version=2).label_steps == json.dumps(corrected)


def _edited(change) -> tuple[list[dict], dict]:
    steps = gold_label_steps([1, 1, -1])
    extra = change(steps) or {}
    return steps, extra


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda s: s[0].update(chosen_completion=9), "steps[0].chosen_completion"),
        (lambda s: s[0]["completions"][0].update(rating=7), "steps[0].completions[0].rating"),
        (lambda s: s[1]["completions"][0].update(text="a different step"), "steps[1].completions[0].text"),
        (lambda s: {"finish_reason": "solution"}, "steps[2].rating"),  # a -1 ends the pass: found_error
        (lambda s: {"finish_reason": "give_up"}, "reason"),  # give_up needs a reason (the Finish note)
    ],
)
def test_an_admin_correction_that_breaks_the_label_is_refused_and_changes_nothing(change, path):
    """The checks of a submit hold for a lead's correction too: what the TRL converter, the importer
    or PRM800K's readers would refuse or drop never reaches the stored label."""
    world = build_world(with_revision=False)
    annotation = world.rows["annotate.annotation"]
    before = (annotation.label_steps, annotation.finish_reason)
    steps, extra = _edited(change)
    response = _admin_change(world.session_client("lead"), annotation, label_steps=json.dumps(steps), **extra)
    assert response.status_code == 200
    form = response.context["adminform"].form
    errors = form.errors["finish_note" if path == "reason" else "label_steps"]
    assert any(message.startswith(path) for message in errors), form.errors
    # the page (its heading and breadcrumb) shows the stored annotation, not the refused edit
    assert form.instance.finish_reason == before[1]
    annotation.refresh_from_db()
    assert (annotation.label_steps, annotation.finish_reason) == before
    assert not AnnotationRevision.objects.filter(annotation=annotation).exists()


def test_a_label_that_already_broke_a_rule_can_still_have_a_rating_corrected():
    """Imported labels (real PRM800K phase-1 records among them) may walk a trajectory longer than
    the stored steps; a correction is refused only for what it breaks itself."""
    from annotate.models import Step

    world = build_world(with_revision=False)
    annotation = world.rows["annotate.annotation"]
    Step.objects.filter(solution_id=annotation.solution_id, index=2).delete()  # the label has 3 steps, the solution 2
    steps = json.loads(annotation.label_steps)
    steps[0]["completions"][0]["flagged"] = True
    response = _admin_change(
        world.session_client("lead"), annotation, label_steps=json.dumps(steps), change_reason="unsure of step 1"
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    annotation.refresh_from_db()
    assert annotation.n_flagged == 1
    steps.append(steps[-1])  # but it may not grow past both
    refused = _admin_change(world.session_client("lead"), annotation, label_steps=json.dumps(steps))
    assert refused.status_code == 200 and "steps: 4 steps" in str(refused.context["adminform"].form.errors)


def test_a_correction_comes_again_in_the_next_incremental_export():
    """An export's cursor must not hide a later correction: the corrected label is numbered again."""
    world = build_world(with_revision=False)
    project, annotation = world.project, world.rows["annotate.annotation"]

    def pull(since=None):
        params = {"format": "trl"} if since is None else {"format": "trl", "since": since}
        plan = exports.plan_export(project=project, options=exports.parse_options(project=project, params=params))
        return [json.loads(line) for line in exports.iter_lines(plan=plan)], plan.cursor

    rows, cursor = pull()
    assert rows and rows[0]["labels"][-1] is False
    assert pull(cursor)[0] == []
    response = _admin_change(
        world.session_client("lead"),
        annotation,
        label_steps=json.dumps(gold_label_steps([1, 1, 1])),
        finish_reason="solution",
        change_reason="step 3 is right",
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    newer, next_cursor = pull(cursor)
    assert [row["labels"] for row in newer] == [[True, True, True]]
    assert pull(next_cursor)[0] == []


def test_gold_mark_and_reopen_leave_a_trace():
    world = build_world(with_revision=False)
    annotation = world.rows["annotate.annotation"]
    Annotation.objects.filter(pk=annotation.pk)  # is_gold is set by the world; clear it through the service
    audit.revise_annotation(annotation=annotation, user=world.users["lead"], reason="not gold yet", is_gold=False)
    lead = world.session_client("lead")
    lead.post("/admin/annotate/annotation/", {"action": "mark_as_gold", "_selected_action": [annotation.pk]})
    annotation.refresh_from_db()
    assert annotation.is_gold and Solution.objects.get(pk=annotation.solution_id).is_gold
    last = AnnotationRevision.objects.filter(annotation=annotation).latest("version")
    assert last.fields["is_gold"] is False and last.reason == "Marked as gold in the admin"
    Solution.objects.filter(pk=annotation.solution_id).update(is_open=False)
    lead.post(
        "/admin/annotate/solution/", {"action": "reopen_for_relabeling", "_selected_action": [annotation.solution_id]}
    )
    assert Solution.objects.get(pk=annotation.solution_id).is_open
    last = AnnotationRevision.objects.filter(annotation=annotation).latest("version")
    assert last.reason == "Reopened for relabeling" and last.changed_by == world.users["lead"]


def test_a_change_needs_a_reason_and_a_no_op_leaves_no_revision():
    world = build_world(with_revision=False)
    annotation = world.rows["annotate.annotation"]
    with pytest.raises(audit.AuditError):
        audit.revise_annotation(annotation=annotation, user=None, reason="  ", is_gold=False)
    with pytest.raises(audit.AuditError):
        audit.revise_annotation(annotation=annotation, user=None, reason="x", n_positive=9)
    assert audit.revise_annotation(annotation=annotation, user=None, reason="same", is_gold=True) is None
    assert not AnnotationRevision.objects.exists()


@pytest.mark.parametrize(
    "change",
    [{"label_steps": "[]"}, {"is_gold": False}, {"finish_reason": "give_up"}, {"total_time_ms": 1}],
)
def test_the_database_refuses_an_update_without_a_revision(change):
    world = build_world(with_revision=False)
    annotation = world.rows["annotate.annotation"]
    with pytest.raises(IntegrityError, match="without an audit revision"), transaction.atomic():
        Annotation.objects.filter(pk=annotation.pk).update(**change)
    # Bookkeeping columns stay writable: the export sequence is stamped in place.
    assert Annotation.objects.filter(pk=annotation.pk).update(export_seq=7) == 1


@pytest.mark.django_db(transaction=True)
def test_a_revision_from_an_earlier_transaction_licenses_nothing():
    world = build_world(with_revision=False)
    annotation = world.rows["annotate.annotation"]
    audit.record_event(annotation=annotation, user=None, reason="an old trace")  # committed on its own
    with pytest.raises(IntegrityError), transaction.atomic():
        Annotation.objects.filter(pk=annotation.pk).update(label_steps="[]")
    assert Annotation.objects.get(pk=annotation.pk).label_steps == annotation.label_steps


def test_export_has_history_only_on_request():
    world = build_world(with_revision=False)
    project, annotation = world.project, world.rows["annotate.annotation"]
    original = annotation.label_steps
    audit.revise_annotation(
        annotation=annotation, user=world.users["lead"], reason="fix step 3", label_steps=gold_label_steps([1, 1, 1])
    )

    def lines(**params):
        options = exports.parse_options(project=project, params=params)
        return list(exports.iter_lines(plan=exports.plan_export(project=project, options=options)))

    plain = lines()
    assert len(plain) == 1 and "history" not in json.loads(plain[0])
    (with_history,) = lines(include_history="true")
    record = json.loads(with_history)
    assert list(record)[-1] == "history"
    assert {k: v for k, v in record.items() if k != "history"} == json.loads(plain[0])
    (entry,) = record["history"]
    lead_uuid = str(LabelerProfile.objects.get(user=world.users["lead"]).labeler_uuid)
    assert entry["changed_by"] == lead_uuid and world.users["lead"].username not in with_history
    assert entry["reason"] == "fix step 3" and entry["version"] == 1
    assert entry["previous"]["steps"] == json.loads(original)
    assert entry["previous"]["finish_reason"] == "found_error"
    with pytest.raises(exports.ExportOptionError):
        exports.parse_options(project=project, params={"include_history": "maybe"})
    with pytest.raises(exports.ExportOptionError):
        exports.parse_options(project=project, params={"include_history": "true", "format": "trl"})


def test_export_api_accepts_include_history():
    world = build_world(with_revision=False)
    lead = world.api_client("lead")
    response = lead.get(f"/api/v1/projects/{world.project.slug}/export/?include_history=true")
    assert response.status_code == 200
    record = json.loads(b"".join(response.streaming_content).decode().splitlines()[0])
    assert record["history"] == []
    bad = lead.get(f"/api/v1/projects/{world.project.slug}/export/?include_history=perhaps")
    assert bad.status_code == 400 and "include_history" in bad.json()


def _imported_annotations(project_slug: str, count: int, tmp_path) -> list[Annotation]:
    """`count` imported PRM800K records, each with one revision in its history."""
    from django.contrib.auth import get_user_model

    from annotate.models import Project
    from annotate.services.imports import import_file

    template = json.loads((FIXTURES / "edge_cases.jsonl").read_text().splitlines()[0])
    lines = []
    for i in range(count):
        template["question"]["problem"] = f"Problem {i}: compute $\\sqrt{{16}}$."
        lines.append(json.dumps(template))
    source = tmp_path / f"{project_slug}.jsonl"
    source.write_text("\n".join(lines) + "\n")
    project = Project.objects.create(slug=project_slug)
    import_file(project=project, path=source)
    lead = get_user_model().objects.create_user(f"lead-{project_slug}", password="pw-steplabel-test")
    annotations = list(Annotation.objects.filter(project=project))
    for annotation in annotations:
        audit.revise_annotation(annotation=annotation, user=lead, reason="recheck", finish_reason="give_up")
    return annotations


def test_export_with_history_fetches_it_in_bulk(tmp_path):
    """Issue 11: include_history cost two queries per exported line; now a fixed number per chunk."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    counts = {}
    for slug, n in (("few", 3), ("many", 40)):
        annotations = _imported_annotations(slug, n, tmp_path)
        project = annotations[0].project
        options = exports.parse_options(project=project, params={"include_history": "true"})
        plan = exports.plan_export(project=project, options=options)
        with CaptureQueriesContext(connection) as queries:
            lines = list(exports.iter_lines(plan=plan))
        assert len(lines) == n
        assert all(json.loads(line)["history"][0]["reason"] == "recheck" for line in lines)
        counts[n] = len(queries)
    assert counts[3] == counts[40] <= 6, counts


def test_a_reimported_export_with_history_leaves_the_history_out(tmp_path):
    """`history` tells of edits in the project the file came from, by its pseudonyms: an import
    into another project keeps the record byte-exact without it, and that project's own
    include_history export starts empty, never a copy of the other project's."""
    from annotate.models import Project
    from annotate.services.imports import import_file

    source = _imported_annotations("first", 2, tmp_path)[0].project

    def export(project, **params) -> list[str]:
        options = exports.parse_options(project=project, params=params)
        return list(exports.iter_lines(plan=exports.plan_export(project=project, options=options)))

    with_history = export(source, include_history="true")
    assert all(json.loads(line)["history"] for line in with_history)
    copy_file = tmp_path / "with_history.jsonl"
    copy_file.write_text("".join(with_history))
    copy = Project.objects.create(slug="second")
    import_file(project=copy, path=copy_file)
    assert export(copy) == export(source)  # byte for byte, no history key
    assert all(json.loads(line)["history"] == [] for line in export(copy, include_history="true"))


@pytest.mark.django_db(transaction=True)
def test_a_revision_restored_from_another_cluster_licenses_nothing():
    """After a restore into a new cluster, transaction ids start over: an old revision can carry the
    id a new transaction gets. Its transaction start differs, so it licenses nothing."""
    from django.db import connection

    world = build_world(with_revision=False)
    annotation = world.rows["annotate.annotation"]
    with pytest.raises(IntegrityError, match="without an audit revision"), transaction.atomic():
        AnnotationRevision.objects.create(
            annotation=annotation, version=1, label_steps=annotation.label_steps, reason="restored"
        )
        with connection.cursor() as cursor:  # as pg_restore leaves it: this id, another transaction's start
            cursor.execute(
                "UPDATE annotate_annotationrevision SET xact_start = xact_start - interval '30 days' "
                "WHERE annotation_id = %s",
                [annotation.pk],
            )
        Annotation.objects.filter(pk=annotation.pk).update(label_steps="[]")
    assert Annotation.objects.get(pk=annotation.pk).label_steps == annotation.label_steps
    # The guard's own path still works: a revision written now licenses this transaction's change.
    audit.revise_annotation(annotation=annotation, user=None, reason="a real correction", total_time_ms=12345)
    assert Annotation.objects.get(pk=annotation.pk).total_time_ms == 12345
