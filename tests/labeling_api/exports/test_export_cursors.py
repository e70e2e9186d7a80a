"""Export cursors: `since` returns only new labels and never skips one committed late."""

import threading
import time
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.core import signing
from django.db import connection, transaction

from annotate.models import Membership, Project, Role
from annotate.services.exports import decode_cursor
from tests.labeling_api.exports.helpers import add_solution, label_in_app, lines_of

User = get_user_model()


# --- cursors ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_since_cursor_returns_only_new_records(project, clients):
    first = clients["ml"].get("/api/v1/projects/exp/export/")
    assert len(lines_of(first)) == 7
    cursor = first["X-Export-Cursor"]
    again = clients["ml"].get("/api/v1/projects/exp/export/", {"since": cursor})
    assert lines_of(again) == [] and again["X-Export-Cursor"] == cursor
    add_solution(project, ["only step\n\n# Answer\n\n2"])
    label_in_app(project, clients["annotator"].user, [1], "solution")
    new = clients["ml"].get("/api/v1/projects/exp/export/", {"since": cursor})
    assert [r["question"]["pre_generated_steps"] for r in lines_of(new)] == [["only step\n\n# Answer\n\n2"]]
    other = Project.objects.get(slug="other")
    Membership.objects.create(project=other, user=clients["ml"].user, role=Role.ML_ENGINEER)
    wrong_project = clients["ml"].get("/api/v1/projects/other/export/", {"since": cursor})
    assert wrong_project.status_code == 400 and "another project" in str(wrong_project.data["since"])


@pytest.mark.django_db
def test_cursor_is_the_same_for_the_same_position_and_old_cursors_still_read(project, clients):
    """Cursors carry no timestamp (two pulls a second apart agree); a timestamped one still reads."""
    first = clients["ml"].get("/api/v1/projects/exp/export/")["X-Export-Cursor"]
    with mock.patch("time.time", return_value=time.time() + 5):
        later = clients["ml"].get("/api/v1/projects/exp/export/")["X-Export-Cursor"]
    assert later == first
    seq = decode_cursor(project=project, cursor=first)
    old_style = signing.dumps([project.pk, seq], salt="steplabel.export.cursor", compress=True)
    assert old_style != first
    again = clients["ml"].get("/api/v1/projects/exp/export/", {"since": old_style})
    assert again.status_code == 200 and lines_of(again) == [] and again["X-Export-Cursor"] == first
    tampered = clients["ml"].get("/api/v1/projects/exp/export/", {"since": first[:-2] + "xx"})
    assert tampered.status_code == 400 and "not a cursor" in str(tampered.data["since"])


@pytest.mark.django_db(transaction=True)
def test_cursor_never_skips_a_label_committed_late(project, clients):
    """A label whose transaction started first but commits after a newer one was exported."""
    add_solution(project, ["late\n\n# Answer\n\n2"], problem_text="late")
    add_solution(project, ["early\n\n# Answer\n\n2"], problem_text="early")
    cursor = clients["ml"].get("/api/v1/projects/exp/export/")["X-Export-Cursor"]
    in_transaction, release = threading.Event(), threading.Event()
    slow_user = User.objects.create_user("slow")
    fast_user = User.objects.create_user("fast")
    for user in (slow_user, fast_user):
        Membership.objects.create(project=project, user=user, role=Role.ANNOTATOR)

    def slow_labeler():
        try:
            with transaction.atomic():
                label_in_app(project, slow_user, [1], "solution")  # gets the lower annotation id
                in_transaction.set()
                release.wait(timeout=30)
        finally:
            connection.close()

    thread = threading.Thread(target=slow_labeler)
    thread.start()
    assert in_transaction.wait(timeout=30)
    label_in_app(project, fast_user, [1], "solution")
    seen: list[str] = []
    response = clients["ml"].get("/api/v1/projects/exp/export/", {"since": cursor})
    seen += [r["labeler"] for r in lines_of(response)]
    cursor = response["X-Export-Cursor"]
    release.set()
    thread.join(timeout=30)
    response = clients["ml"].get("/api/v1/projects/exp/export/", {"since": cursor})
    seen += [r["labeler"] for r in lines_of(response)]
    expected = {str(u.labeler.labeler_uuid) for u in (slow_user, fast_user)}
    assert sorted(seen) == sorted(expected)  # each exactly once, none skipped


@pytest.mark.django_db(transaction=True)
def test_cursor_loop_while_labels_keep_arriving(project, clients):
    """A pipeline polling with `since` while another thread submits: every label exactly once."""
    for i in range(30):
        add_solution(project, [f"step {i}\n\n# Answer\n\n2"], problem_text=f"p{i}")
    writer = User.objects.create_user("writer")
    Membership.objects.create(project=project, user=writer, role=Role.ANNOTATOR)
    done = threading.Event()

    def keep_labeling():
        try:
            for _ in range(30):
                label_in_app(project, writer, [1], "solution")
        finally:
            done.set()
            connection.close()

    thread = threading.Thread(target=keep_labeling)
    thread.start()
    cursor, seen = None, []
    while True:
        finished = done.is_set()
        response = clients["ml"].get("/api/v1/projects/exp/export/", {"since": cursor} if cursor else {})
        seen += [(r["labeler"], r["question"]["problem"], r["timestamp"]) for r in lines_of(response)]
        cursor = response["X-Export-Cursor"]
        if finished:
            break
    thread.join()
    assert len(seen) == len(set(seen)) == 7 + 30


@pytest.mark.django_db
def test_one_value_options_given_twice_and_rounds_below_screening_are_refused(clients):
    ml = clients["ml"]
    for query, name in (
        ("split=train&split=test", "split"),
        ("format=trl&format=prm800k", "format"),
        ("generation=-5", "generation"),
    ):
        response = ml.get(f"/api/v1/projects/exp/export/?{query}")
        assert response.status_code == 400 and list(response.json()) == [name], (query, response.content)
    job = ml.post("/api/v1/projects/exp/exports/", {"format": ["trl", "prm800k"]}, format="json")
    assert job.status_code == 400 and "format" in job.json()
    # the same value twice, and several rounds, are fine
    assert ml.get("/api/v1/projects/exp/export/?split=train&split=train").status_code == 200
    assert ml.get("/api/v1/projects/exp/export/?generation=-1&generation=0,1").status_code == 200


# --- corrections -----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_pull_says_how_many_of_its_records_correct_a_version_delivered_up_to_its_cursor(project, clients):
    """A correction (a lead's edit, a gold mark) moves a label to a new position, so the next pull
    brings it again while the earlier pull still holds its old version: TRL rows have no key, so the
    pull must say so (X-Export-Corrected) or a pipeline appends the new rows beside the stale ones.
    A label corrected before any pull delivered it, and a new label, are not corrections."""
    from annotate.models import Annotation
    from annotate.services import audit

    export = "/api/v1/projects/exp/export/"
    cursor = clients["ml"].get(export)["X-Export-Cursor"]
    quiet = clients["ml"].get(export, {"since": cursor, "format": "trl"})
    assert quiet["X-Export-Corrected"] == "0" and not clients["ml"].get(export).has_header("X-Export-Corrected")

    pulled = Annotation.objects.filter(project=project, is_gold=False).order_by("id").first()
    audit.mark_gold(annotations=Annotation.objects.filter(pk=pulled.pk), user=None, reason="gold in the admin")
    add_solution(project, ["fresh\n\n# Answer\n\n2"])
    fresh = label_in_app(project, clients["annotator"].user, [1], "solution")  # new, never delivered
    audit.revise_annotation(annotation=fresh, user=None, reason="fixed before any pull", finish_note="typo")

    pull = clients["ml"].get(export, {"since": cursor, "format": "trl"})
    assert pull["X-Export-Corrected"] == "1", pull.headers  # the gold mark; not the fresh label
    assert pull["X-Export-Deleted"] == "0"
    records = lines_of(clients["ml"].get(export, {"since": cursor}))
    assert len(records) == 2  # both arrive: the corrected one again, the fresh one for the first time
    # From the new cursor on, the fresh label's correction was delivered in its corrected form: nothing.
    assert clients["ml"].get(export, {"since": pull["X-Export-Cursor"]})["X-Export-Corrected"] == "0"
    # A filter that leaves the corrected label out counts it out too.
    assert fresh.labeler_uuid != pulled.labeler_uuid
    only_fresh = clients["ml"].get(export, {"since": cursor, "labeler": fresh.labeler_uuid})
    assert len(lines_of(only_fresh)) == 1 and only_fresh["X-Export-Corrected"] == "0"


@pytest.mark.django_db
def test_the_export_command_says_how_many_of_its_labels_are_corrections(project, clients, tmp_path):
    """`export_prm800k --since C` says what the stream's X-Export-Corrected counts."""
    import io

    from django.core.management import call_command

    from annotate.models import Annotation
    from annotate.services import audit

    def run(**options) -> str:
        err = io.StringIO()
        call_command("export_prm800k", project="exp", no_progress=True, stdout=io.StringIO(), stderr=err, **options)
        return err.getvalue()

    cursor = clients["ml"].get("/api/v1/projects/exp/export/")["X-Export-Cursor"]
    assert "corrected" not in run(since=cursor, out=tmp_path / "a.jsonl")
    pulled = Annotation.objects.filter(project=project, is_gold=False).order_by("id").first()
    audit.mark_gold(annotations=Annotation.objects.filter(pk=pulled.pk), user=None, reason="gold in the admin")
    said = run(since=cursor, out=tmp_path / "b.jsonl", format="trl")
    assert "1 corrected label in this export" in said, said
    assert "corrected" not in run(out=tmp_path / "c.jsonl")  # a full export replaces nothing
