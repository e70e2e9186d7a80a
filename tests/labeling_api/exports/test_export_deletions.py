"""`export/deletions/`: a label deleted after an export delivered it is listed by its PRM800K key, once
per cursor, whether it went alone or with its solution; numbering goes on above the tombstones."""

import threading

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test import Client

from annotate.models import Annotation, DeletedLabel, Membership, Project, Role
from prm800k.schema import format_timestamp
from tests.labeling_api.exports.helpers import add_solution, label_in_app, lines_of

User = get_user_model()
EXPORT = "/api/v1/projects/exp/export/"
DELETIONS = "/api/v1/projects/exp/export/deletions/"


def _superuser() -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    return client


def _key(label: Annotation) -> tuple[str, str]:
    return label.labeler_uuid, label.timestamp_text or format_timestamp(label.submitted_at)


def _keys(records: list[dict]) -> set[tuple[str, str]]:
    return {(r["labeler"], r["timestamp"]) for r in records}


def _deleted(response) -> list[tuple[str, str]]:
    assert response.status_code == 200, response.content
    return [(d["labeler"], d["timestamp"]) for d in response.json()["deletions"]]


@pytest.mark.django_db
def test_a_label_deleted_after_a_pull_is_listed_by_its_record_key(project, clients):
    first = clients["ml"].get(EXPORT)
    records, cursor = lines_of(first), first["X-Export-Cursor"]
    assert _deleted(clients["ml"].get(DELETIONS, {"since": cursor})) == []
    doomed = Annotation.objects.filter(project=project).order_by("id").first()
    root = _superuser()
    assert root.post(f"/admin/annotate/annotation/{doomed.pk}/delete/", {"post": "yes"}).status_code == 302

    listed = _deleted(clients["ml"].get(DELETIONS, {"since": cursor}))
    assert len(listed) == 1 and listed[0] in _keys(records)
    assert listed[0] not in _keys(lines_of(clients["ml"].get(EXPORT)))  # the full pull no longer has it
    # The pipeline's next round: nothing new, and the deletion is not listed again after the new cursor.
    again = clients["ml"].get(EXPORT, {"since": cursor})
    assert lines_of(again) == [] and again["X-Export-Deleted"] == "1"  # the pull itself says so
    assert _deleted(clients["ml"].get(DELETIONS, {"since": again["X-Export-Cursor"]})) == []
    assert clients["ml"].get(EXPORT, {"since": again["X-Export-Cursor"]})["X-Export-Deleted"] == "0"
    assert not clients["ml"].get(EXPORT).has_header("X-Export-Deleted")  # a full pull has nothing to drop
    assert _deleted(clients["ml"].get(DELETIONS)) == listed  # without since: every deletion
    # Numbering goes on above the tombstone: a label made now arrives after the old cursor, once.
    add_solution(project, ["new step\n\n# Answer\n\n2"])
    label_in_app(project, clients["annotator"].user, [1], "solution")
    new = clients["ml"].get(EXPORT, {"since": again["X-Export-Cursor"]})
    assert [r["question"]["pre_generated_steps"] for r in lines_of(new)] == [["new step\n\n# Answer\n\n2"]]
    assert lines_of(clients["ml"].get(EXPORT, {"since": new["X-Export-Cursor"]})) == []


@pytest.mark.django_db
def test_a_solution_deleted_with_its_labels_lists_each_pulled_one_and_not_the_unpulled(project, clients):
    solution = add_solution(project, ["a\n\n# Answer\n\n2", "b"])
    pulled = label_in_app(project, clients["annotator"].user, [1, 1], "solution")
    cursor = clients["ml"].get(EXPORT)["X-Export-Cursor"]
    late = User.objects.create_user("late")
    Membership.objects.create(project=project, user=late, role=Role.ANNOTATOR)
    project.overlap = 2
    project.save(update_fields=["overlap"])
    type(solution).objects.filter(pk=solution.pk).update(is_open=True)  # room for a second label
    never_exported = label_in_app(project, late, [1, -1], "found_error")
    assert never_exported.solution_id == solution.pk and never_exported.export_seq is None

    assert _superuser().post(f"/admin/annotate/solution/{solution.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not Annotation.objects.filter(solution_id=solution.pk).exists()
    # Only the label an export may have delivered leaves a tombstone.
    assert _deleted(clients["ml"].get(DELETIONS, {"since": cursor})) == [_key(pulled)]


@pytest.mark.django_db
def test_a_project_deleted_whole_leaves_no_tombstones(project, clients):
    clients["ml"].get(EXPORT)  # numbers the labels
    assert Annotation.objects.filter(project=project, export_seq__isnull=False).exists()
    assert _superuser().post(f"/admin/annotate/project/{project.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not Project.objects.filter(pk=project.pk).exists() and not DeletedLabel.objects.exists()


@pytest.mark.django_db
def test_bad_options_are_named_and_the_cursor_must_be_this_projects(project, clients):
    unknown = clients["ml"].get(DELETIONS, {"labeler": "x"})
    assert unknown.status_code == 400 and "labeler" in unknown.json()
    bad = clients["ml"].get(DELETIONS, {"since": "nope"})
    assert bad.status_code == 400 and "not a cursor" in str(bad.json()["since"])
    wrong_sequence = clients["ml"].get(DELETIONS, {"format": "preference"})
    assert wrong_sequence.status_code == 400 and "format" in wrong_sequence.json()
    other = Project.objects.get(slug="other")
    Membership.objects.create(project=other, user=clients["ml"].user, role=Role.ML_ENGINEER)
    cursor = clients["ml"].get(EXPORT)["X-Export-Cursor"]
    foreign = clients["ml"].get("/api/v1/projects/other/export/deletions/", {"since": cursor})
    assert foreign.status_code == 400 and "another project" in str(foreign.json()["since"])
    assert clients["annotator"].get(DELETIONS).status_code == 403
    assert clients["none"].get(DELETIONS).status_code == 401


@pytest.mark.django_db(transaction=True)
def test_a_deletion_committing_during_a_pull_is_listed_after_that_pull(project, clients):
    """The pipeline pulls labels, then deletions with the same `since`: a deletion still in flight when
    the labels were pulled is either in that pull of deletions or after the new cursor, never lost."""
    cursor = clients["ml"].get(EXPORT)["X-Export-Cursor"]
    doomed = Annotation.objects.filter(project=project).order_by("id").last()
    key = _key(doomed)
    deleting, release = threading.Event(), threading.Event()

    def slow_deletion():
        try:
            with transaction.atomic():
                Annotation.objects.get(pk=doomed.pk).delete()
                deleting.set()
                release.wait(timeout=30)
        finally:
            connection.close()

    thread = threading.Thread(target=slow_deletion)
    thread.start()
    assert deleting.wait(timeout=30)
    pulled: dict = {}

    def pull():
        try:
            pulled["response"] = clients["ml"].get(EXPORT, {"since": cursor})  # waits on the numbering lock
        finally:
            connection.close()

    puller = threading.Thread(target=pull)
    puller.start()
    puller.join(timeout=1)
    assert puller.is_alive()  # the export waits for the deletion's transaction
    release.set()
    thread.join(timeout=30)
    puller.join(timeout=30)
    new_cursor = pulled["response"]["X-Export-Cursor"]
    assert _deleted(clients["ml"].get(DELETIONS, {"since": cursor})) == [key]
    assert new_cursor != cursor  # the tombstone's position is within the new pull's range
    assert _deleted(clients["ml"].get(DELETIONS, {"since": new_cursor})) == []


@pytest.mark.django_db
def test_the_export_command_says_how_many_labels_were_deleted_since_its_cursor(project, clients, tmp_path):
    """`export_prm800k --since C` is the shell's incremental pull: like the stream's X-Export-Deleted, it
    says whether labels were deleted since C (and where their keys are), so a shell pipeline knows it
    has records to drop; without --since, a full export, it says nothing of deletions."""
    import io

    from django.core.management import call_command

    def run(**options) -> str:
        err = io.StringIO()
        call_command("export_prm800k", project="exp", no_progress=True, stdout=io.StringIO(), stderr=err, **options)
        return err.getvalue()

    cursor = clients["ml"].get(EXPORT)["X-Export-Cursor"]
    assert "deleted" not in run(since=cursor, out=tmp_path / "a.jsonl")
    doomed = Annotation.objects.filter(project=project).order_by("id").first()
    assert _superuser().post(f"/admin/annotate/annotation/{doomed.pk}/delete/", {"post": "yes"}).status_code == 302

    to_file = run(since=cursor, out=tmp_path / "b.jsonl", format="trl")
    assert "1 label deleted since that cursor" in to_file, to_file
    assert f"/api/v1/projects/exp/export/deletions/?since={cursor}" in to_file
    assert "1 label deleted since that cursor" in run(since=cursor)  # to standard output: said on stderr
    assert "deleted" not in run(out=tmp_path / "c.jsonl")  # a full export holds no deleted label


@pytest.mark.django_db
def test_an_export_option_sent_to_deletions_is_named_as_the_exports_not_as_unknown(project, clients):
    """A pipeline that sends its export's params to deletions too (split, neutral) got "unknown export
    option" for options the export documents: the answer names the option and says deletions take none."""
    cursor = clients["ml"].get(EXPORT)["X-Export-Cursor"]
    for name, value in [("split", "train"), ("neutral", "negative"), ("labeler", "x"), ("trailer", "true")]:
        answer = clients["ml"].get(DELETIONS, {"since": cursor, name: value})
        assert answer.status_code == 400, (name, answer.content)
        message = " ".join(answer.json()[name])
        assert "unknown" not in message and "applies to the export, not to its deletions" in message, message
    misspelt = clients["ml"].get(DELETIONS, {"sinse": cursor})
    assert misspelt.status_code == 400 and "did you mean since?" in " ".join(misspelt.json()["sinse"])
