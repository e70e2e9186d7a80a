"""The export API: streamed PRM800K and TRL JSONL, filters, cursors, jobs, import, permissions.

Everything runs on PostgreSQL; app labels are made through the real queue and submit services.
"""

import gzip
import io
import json
import threading
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection, transaction
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from annotate.models import Annotation, Export, ImportJob, Membership, Problem, Project, Role, Solution, Step
from annotate.services import queue, submit
from prm800k.records import RecordParts, build_record
from prm800k.trl import trl_rows
from tests.api_clients import member_client
from tests.json_helpers import same_json

FIXTURES = Path(__file__).resolve().parents[1] / "annotate" / "fixtures"
User = get_user_model()


_member = member_client


@pytest.fixture
def project(db) -> Project:
    call_command(
        "import_prm800k", str(FIXTURES / "edge_cases.jsonl"), project="exp", no_progress=True, stdout=io.StringIO()
    )
    return Project.objects.get(slug="exp")


@pytest.fixture
def clients(project):
    other = Project.objects.create(slug="other")
    return {
        "lead": _member(project, "lead", Role.LEAD),
        "ml": _member(project, "ml", Role.ML_ENGINEER),
        "annotator": _member(project, "annotator", Role.ANNOTATOR),
        "outsider": _member(other, "outsider", Role.LEAD),
        "none": APIClient(),
    }


def _lines(response) -> list[dict]:
    body = b"".join(response.streaming_content).decode()
    return [json.loads(line) for line in body.splitlines()]


def _add_solution(project: Project, steps: list[str], problem_text: str = "What is $1+1$?") -> Solution:
    problem, _ = Problem.objects.get_or_create(
        project=project, content_hash=uuid.uuid4().hex, defaults={"text": problem_text, "ground_truth_answer": "2"}
    )
    solution = Solution.objects.create(
        project=project,
        problem=problem,
        content_hash=uuid.uuid4().hex,
        n_steps=len(steps),
        final_answer="2",
        priority=10.0,
    )
    Step.objects.bulk_create(Step(solution=solution, index=i, text=t) for i, t in enumerate(steps))
    return solution


def _label_in_app(project: Project, user, ratings: list[int], finish: str) -> Annotation:
    assignment = queue.claim_next(project=project, user=user)
    assert assignment is not None
    payload = {
        "idempotency_key": uuid.uuid4().hex,
        "finish_reason": finish,
        "total_time_ms": 4200,
        "steps": [{"index": i, "rating": r, "flagged": False, "alternatives": []} for i, r in enumerate(ratings)],
    }
    return submit.submit(assignment=assignment, user=user, payload=payload).annotation


# --- permissions ---------------------------------------------------------------------------------


ENDPOINTS = [
    ("get", "/api/v1/projects/exp/export/", None),
    ("post", "/api/v1/projects/exp/exports/", {"format": "prm800k"}),
    ("get", "/api/v1/projects/exp/exports/", None),
]
EXPECTED = {"none": 401, "annotator": 403, "outsider": 404, "lead": 200, "ml": 200}


@pytest.mark.django_db
@pytest.mark.parametrize("who", list(EXPECTED))
@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS)
def test_permission_matrix_on_project_endpoints(clients, who, method, path, body):
    response = getattr(clients[who], method)(path, body, format="json") if body else getattr(clients[who], method)(path)
    expected = EXPECTED[who]
    if expected == 200 and method == "post":
        expected = 202
    assert response.status_code == expected, (who, path, getattr(response, "data", None))


@pytest.mark.django_db
def test_permission_matrix_on_job_endpoints(clients, project):
    job = clients["ml"].post("/api/v1/projects/exp/exports/", {"format": "trl"}, format="json").data
    detail, download = f"/api/v1/exports/{job['id']}/", f"/api/v1/exports/{job['id']}/download/"
    assert clients["ml"].get(detail).status_code == 200
    assert clients["ml"].get(download).status_code == 409  # no worker ran it: not ready
    assert clients["none"].get(detail).status_code == 401
    # Only the requester sees a job: another lead of the same project, an annotator, an outsider do not.
    for who in ("lead", "annotator", "outsider"):
        assert clients[who].get(detail).status_code == 404
        assert clients[who].get(download).status_code == 404


@pytest.mark.django_db
def test_import_endpoint_permissions(clients):
    upload = lambda: {"file": io.BytesIO((FIXTURES / "plain.jsonl").read_bytes())}  # noqa: E731
    assert clients["none"].post("/api/v1/projects/exp/imports/", upload(), format="multipart").status_code == 401
    assert clients["annotator"].post("/api/v1/projects/exp/imports/", upload(), format="multipart").status_code == 403
    assert clients["ml"].post("/api/v1/projects/exp/imports/", upload(), format="multipart").status_code == 403
    assert clients["outsider"].post("/api/v1/projects/exp/imports/", upload(), format="multipart").status_code == 404
    assert clients["lead"].post("/api/v1/projects/exp/imports/", upload(), format="multipart").status_code == 202


# --- PRM800K stream --------------------------------------------------------------------------------


@pytest.mark.django_db
def test_prm800k_stream_equals_command_and_source(clients, tmp_path):
    response = clients["ml"].get("/api/v1/projects/exp/export/?format=prm800k")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-ndjson"
    assert response["X-Export-Cursor"]
    body = b"".join(response.streaming_content)
    assert body == (FIXTURES / "edge_cases.jsonl").read_bytes()
    out = tmp_path / "cmd.jsonl"
    call_command("export_prm800k", project="exp", out=out, no_progress=True, stderr=io.StringIO())
    assert out.read_bytes() == body


@pytest.mark.django_db
def test_app_labels_export_in_phase2_shape_with_pseudonym(project, clients):
    solution = _add_solution(project, ["$1+1=2$.", "# Answer\n\n2"])
    annotator = clients["annotator"].user
    annotation = _label_in_app(project, annotator, [1, 0], "solution")
    lines = _lines(clients["lead"].get("/api/v1/projects/exp/export/?format=prm800k"))
    record = lines[-1]
    assert list(record) == [
        "labeler",
        "timestamp",
        "generation",
        "is_quality_control_question",
        "is_initial_screening_question",
        "question",
        "label",
    ]
    assert record["labeler"] == str(annotator.labeler.labeler_uuid) and "annotator" not in json.dumps(record)
    assert uuid.UUID(record["labeler"])
    assert "+" not in record["timestamp"] and not record["timestamp"].endswith("Z")
    assert record["timestamp"] == annotation.submitted_at.replace(tzinfo=None).isoformat()
    assert list(record["question"]) == [
        "problem",
        "ground_truth_solution",
        "ground_truth_answer",
        "pre_generated_steps",
        "pre_generated_answer",
        "pre_generated_verifier_score",
    ]
    assert record["question"]["pre_generated_steps"] == ["$1+1=2$.", "# Answer\n\n2"]
    assert record["question"]["pre_generated_verifier_score"] is None
    assert record["label"]["finish_reason"] == "solution" and record["label"]["total_time"] == 4200
    assert [s["completions"][0]["rating"] for s in record["label"]["steps"]] == [1, 0]
    assert solution.pk == annotation.solution_id


# --- TRL -------------------------------------------------------------------------------------------


def _record(label_steps):
    parts = RecordParts(
        labeler="x",
        timestamp="2022-01-01T00:00:00",
        generation=1,
        is_quality_control=False,
        is_screening=False,
        problem_text="P",
        ground_truth_answer="4",
        ground_truth_solution=None,
        steps=[],
        final_answer=None,
        verifier_score=None,
        label_steps=label_steps,
        total_time_ms=1,
        finish_reason="found_error",
        phase2_shape=True,
    )
    return build_record(parts)


FOUND_ERROR = [
    {"completions": [{"text": "a", "rating": 1, "flagged": None}], "human_completion": None, "chosen_completion": 0},
    {"completions": [{"text": "b", "rating": 0, "flagged": None}], "human_completion": None, "chosen_completion": 0},
    {
        "completions": [
            {"text": "c-wrong", "rating": -1, "flagged": None},
            {"text": "c-alt-good", "rating": 1, "flagged": None},
            {"text": "c-alt-meh", "rating": 0, "flagged": None},
            {"text": "c-alt-unrated", "rating": None, "flagged": None},
        ],
        "human_completion": None,
        "chosen_completion": None,
    },
]


def test_trl_rows_neutral_positive_with_branches():
    rows = trl_rows(_record(FOUND_ERROR), neutral="positive", alternatives="branch")
    assert rows == [
        {"prompt": "P", "completions": ["a", "b", "c-wrong"], "labels": [True, True, False]},
        {"prompt": "P", "completions": ["a", "b", "c-alt-good"], "labels": [True, True, True]},
        {"prompt": "P", "completions": ["a", "b", "c-alt-meh"], "labels": [True, True, True]},
    ]


def test_trl_rows_neutral_negative_and_drop():
    negative = trl_rows(_record(FOUND_ERROR), neutral="negative", alternatives="drop")
    # A neutral mapped to False does not end the row: only a -1 rating does.
    assert negative == [{"prompt": "P", "completions": ["a", "b", "c-wrong"], "labels": [True, False, False]}]
    dropped = trl_rows(_record(FOUND_ERROR), neutral="drop", alternatives="branch")
    # The neutral main-line step ends the row; nothing branches past it.
    assert dropped == [{"prompt": "P", "completions": ["a"], "labels": [True]}]


def test_trl_rows_human_completion_counts_as_correct():
    steps = [
        {
            "completions": [{"text": "x", "rating": -1, "flagged": False}],
            "human_completion": {"text": "human", "rating": None, "source": "human", "flagged": False},
            "chosen_completion": None,
        },
        {
            "completions": [{"text": "y", "rating": 1, "flagged": False}],
            "human_completion": None,
            "chosen_completion": 0,
        },
    ]
    rows = trl_rows(_record(steps), neutral="positive", alternatives="branch")
    assert rows == [
        {"prompt": "P", "completions": ["human", "y"], "labels": [True, True]},
        {"prompt": "P", "completions": ["x"], "labels": [False]},
    ]


@pytest.mark.django_db
def test_trl_stream_through_api(clients):
    response = clients["ml"].get("/api/v1/projects/exp/export/?format=trl&neutral=negative&alternatives=drop")
    rows = _lines(response)
    assert all(set(row) == {"prompt", "completions", "labels"} for row in rows)
    assert all(len(row["completions"]) == len(row["labels"]) for row in rows)
    first = rows[0]
    assert first["prompt"] == "Compute $\\sqrt{16}$." and first["labels"] == [True, True]
    # The screening record's first step is neutral (False with neutral=negative); the row goes on.
    assert {"prompt": "Compute $\\sqrt{16}$.", "completions": first["completions"], "labels": [False, True]} in rows


# --- filters ---------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "labelers"),
    [
        ("generation=3", ["1111"]),
        ("generation=-1,9", ["3333", "6666"]),
        ("qc=only", ["2222"]),
        ("qc=exclude&screening=exclude", ["1111", "4444", "5555", "6666", "7777"]),
        ("screening=only", ["3333"]),
        ("finish_reason=give_up,bad_problem", ["4444", "5555"]),
        ("labeler=55555555-5555-4555-8555-555555555555", ["5555"]),
    ],
)
def test_filters(clients, query, labelers):
    lines = _lines(clients["ml"].get(f"/api/v1/projects/exp/export/?{query}"))
    assert [line["labeler"][:4] for line in lines] == labelers


@pytest.mark.django_db
def test_split_by_problem_puts_math500_in_test(clients, project, tmp_path):
    math500 = json.loads(
        (Path(__file__).resolve().parents[1] / "annotate" / "fixtures" / "math500_one.json").read_text()
    )
    record = json.loads((FIXTURES / "edge_cases.jsonl").read_text().splitlines()[0])
    record["question"]["problem"] = math500["problem"]
    record["labeler"] = "99999999-9999-4999-8999-999999999999"
    tmp = tmp_path / "math500.jsonl"
    tmp.write_text(json.dumps(record) + "\n")
    call_command("import_prm800k", str(tmp), project="exp", no_progress=True, stdout=io.StringIO())
    test = _lines(clients["ml"].get("/api/v1/projects/exp/export/?split=test"))
    train = _lines(clients["ml"].get("/api/v1/projects/exp/export/?split=train"))
    assert [r["labeler"][:4] for r in test] == ["9999"]
    assert len(train) == 7 and "9999" not in {r["labeler"][:4] for r in train}


@pytest.mark.django_db
def test_min_agreement_keeps_agreeing_solutions(project, clients):
    project.overlap = 2
    project.save()
    agree = _add_solution(project, ["s1", "s2"], problem_text="agree")
    disagree = _add_solution(project, ["t1", "t2"], problem_text="disagree")
    annotators = [User.objects.create_user(f"a{i}") for i in range(2)]
    for user in annotators:
        Membership.objects.create(project=project, user=user, role=Role.ANNOTATOR)
    plan = {agree.pk: ([1, 1], [1, 1]), disagree.pk: ([1, 1], [1, 0])}
    for i, user in enumerate(annotators):
        for _ in range(2):
            assignment = queue.claim_next(project=project, user=user)
            ratings = plan[assignment.solution_id][i]
            payload = {
                "idempotency_key": uuid.uuid4().hex,
                "finish_reason": "solution",
                "total_time_ms": 1,
                "steps": [
                    {"index": k, "rating": r, "flagged": False, "alternatives": []} for k, r in enumerate(ratings)
                ],
            }
            submit.submit(assignment=assignment, user=user, payload=payload)
    lines = _lines(clients["ml"].get("/api/v1/projects/exp/export/?min_agreement=0.9"))
    problems = [line["question"]["problem"] for line in lines]
    assert problems.count("agree") == 2 and "disagree" not in problems
    # The fixture's records 1, 3 and 6 label one solution with ratings [1, 1], [0, 1], [1]: they
    # agree on 2 of 4 shared (pair, step) cells, 0.5 < 0.9, so they go too; the other four
    # imported solutions have a single label and nothing to disagree with.
    assert len(lines) == 4 + 2
    assert sorted(line["labeler"][:4] for line in lines[:4]) == ["2222", "4444", "5555", "7777"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("format=csv", "format"),
        ("qc=maybe", "qc"),
        ("generation=two", "generation"),
        ("finish_reason=done", "finish_reason"),
        ("split=dev", "split"),
        ("since=garbage", "since"),
        ("min_agreement=2", "min_agreement"),
        ("neutral=sideways", "neutral"),
    ],
)
def test_bad_options_are_400_naming_the_field(clients, query, field):
    response = clients["ml"].get(f"/api/v1/projects/exp/export/?{query}")
    assert response.status_code == 400 and field in response.data


@pytest.mark.django_db
def test_stream_and_job_accept_and_refuse_the_same_options(clients, project):
    """One validator: a query string and a job's JSON body agree (they used to disagree on both)."""
    url = "/api/v1/projects/exp/exports/"
    jobs_before = Export.objects.count()
    listed = clients["ml"].post(url, {"generation": [1, 2], "include_history": True}, format="json")
    assert listed.status_code == 202, listed.data
    assert Export.objects.get(pk=listed.data["id"]).filters["generation"] == [1, 2]
    assert clients["ml"].get("/api/v1/projects/exp/export/?generation=1&generation=2").status_code == 200
    for bad in ({"include_history": "yes"}, {"generation": [1, "two"]}, {"gzip": "maybe"}):
        refused = clients["ml"].post(url, bad, format="json")
        assert refused.status_code == 400 and next(iter(bad)) in refused.data, refused.data
    assert Export.objects.count() == jobs_before + 1  # the refused ones wrote nothing
    for query in ("include_history=yes", "generation=1,two", "trailer=maybe"):
        refused = clients["ml"].get(f"/api/v1/projects/exp/export/?{query}")
        assert refused.status_code == 400 and query.split("=")[0] in refused.data


# --- cursors ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_since_cursor_returns_only_new_records(project, clients):
    first = clients["ml"].get("/api/v1/projects/exp/export/")
    assert len(_lines(first)) == 7
    cursor = first["X-Export-Cursor"]
    again = clients["ml"].get("/api/v1/projects/exp/export/", {"since": cursor})
    assert _lines(again) == [] and again["X-Export-Cursor"] == cursor
    _add_solution(project, ["only step\n\n# Answer\n\n2"])
    _label_in_app(project, clients["annotator"].user, [1], "solution")
    new = clients["ml"].get("/api/v1/projects/exp/export/", {"since": cursor})
    assert [r["question"]["pre_generated_steps"] for r in _lines(new)] == [["only step\n\n# Answer\n\n2"]]
    other = Project.objects.get(slug="other")
    Membership.objects.create(project=other, user=clients["ml"].user, role=Role.ML_ENGINEER)
    wrong_project = clients["ml"].get("/api/v1/projects/other/export/", {"since": cursor})
    assert wrong_project.status_code == 400 and "another project" in str(wrong_project.data["since"])


@pytest.mark.django_db(transaction=True)
def test_cursor_never_skips_a_label_committed_late(project, clients):
    """A label whose transaction started first but commits after a newer one was exported."""
    _add_solution(project, ["late\n\n# Answer\n\n2"], problem_text="late")
    _add_solution(project, ["early\n\n# Answer\n\n2"], problem_text="early")
    cursor = clients["ml"].get("/api/v1/projects/exp/export/")["X-Export-Cursor"]
    in_transaction, release = threading.Event(), threading.Event()
    slow_user = User.objects.create_user("slow")
    fast_user = User.objects.create_user("fast")
    for user in (slow_user, fast_user):
        Membership.objects.create(project=project, user=user, role=Role.ANNOTATOR)

    def slow_labeler():
        try:
            with transaction.atomic():
                _label_in_app(project, slow_user, [1], "solution")  # gets the lower annotation id
                in_transaction.set()
                release.wait(timeout=30)
        finally:
            connection.close()

    thread = threading.Thread(target=slow_labeler)
    thread.start()
    assert in_transaction.wait(timeout=30)
    _label_in_app(project, fast_user, [1], "solution")
    seen: list[str] = []
    response = clients["ml"].get("/api/v1/projects/exp/export/", {"since": cursor})
    seen += [r["labeler"] for r in _lines(response)]
    cursor = response["X-Export-Cursor"]
    release.set()
    thread.join(timeout=30)
    response = clients["ml"].get("/api/v1/projects/exp/export/", {"since": cursor})
    seen += [r["labeler"] for r in _lines(response)]
    expected = {str(u.labeler.labeler_uuid) for u in (slow_user, fast_user)}
    assert sorted(seen) == sorted(expected)  # each exactly once, none skipped


@pytest.mark.django_db(transaction=True)
def test_cursor_loop_while_labels_keep_arriving(project, clients):
    """A pipeline polling with `since` while another thread submits: every label exactly once."""
    for i in range(30):
        _add_solution(project, [f"step {i}\n\n# Answer\n\n2"], problem_text=f"p{i}")
    writer = User.objects.create_user("writer")
    Membership.objects.create(project=project, user=writer, role=Role.ANNOTATOR)
    done = threading.Event()

    def keep_labeling():
        try:
            for _ in range(30):
                _label_in_app(project, writer, [1], "solution")
        finally:
            done.set()
            connection.close()

    thread = threading.Thread(target=keep_labeling)
    thread.start()
    cursor, seen = None, []
    while True:
        finished = done.is_set()
        response = clients["ml"].get("/api/v1/projects/exp/export/", {"since": cursor} if cursor else {})
        seen += [(r["labeler"], r["question"]["problem"], r["timestamp"]) for r in _lines(response)]
        cursor = response["X-Export-Cursor"]
        if finished:
            break
    thread.join()
    assert len(seen) == len(set(seen)) == 7 + 30


# --- jobs (real Celery worker) ----------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_export_job_runs_in_a_worker_and_downloads(project, clients, tmp_path):
    from tests.celery_worker import celery_worker, purge_broker, wait_for

    purge_broker()
    with override_settings(MEDIA_ROOT=tmp_path), celery_worker(queues="default"):
        plain = clients["ml"].post("/api/v1/projects/exp/exports/", {"format": "prm800k"}, format="json").data
        zipped = (
            clients["ml"]
            .post("/api/v1/projects/exp/exports/", {"format": "trl", "gzip": True, "qc": "exclude"}, format="json")
            .data
        )
        for job in (plain, zipped):
            wait_for(lambda j=job: Export.objects.get(pk=j["id"]).status in ("succeeded", "failed"), message="export")
    detail = clients["ml"].get(f"/api/v1/exports/{plain['id']}/").data
    assert detail["status"] == "succeeded", detail
    assert detail["record_count"] == 7 and detail["byte_size"] > 0 and detail["cursor"]
    body = b"".join(clients["ml"].get(detail["download_url"]).streaming_content)
    assert body == (FIXTURES / "edge_cases.jsonl").read_bytes()
    zipped = clients["ml"].get(f"/api/v1/exports/{zipped['id']}/").data
    rows = [
        json.loads(x)
        for x in gzip.decompress(b"".join(clients["ml"].get(zipped["download_url"]).streaming_content)).splitlines()
    ]
    assert rows and all(set(r) == {"prompt", "completions", "labels"} for r in rows)
    assert zipped["filters"]["qc"] == "exclude" and zipped["format"] == "trl"
    assert not list(Path(tmp_path).rglob("*.partial"))


# --- import over HTTP -------------------------------------------------------------------------------


def _imported(client, name: str, content: bytes | None = None) -> dict:
    """Upload a file, run the import job as the worker would (here, inline), return the job as polled."""
    from annotate.services.imports import jobs as import_jobs

    content = (FIXTURES / name).read_bytes() if content is None else content
    started = client.post("/api/v1/projects/exp/imports/", {"file": io.BytesIO(content)}, format="multipart")
    assert started.status_code == 202 and started.data["status"] == "created", started.data
    path = Path(ImportJob.objects.get(pk=started.data["id"]).file_path)
    assert path.exists()
    import_jobs.run_import_job(import_id=started.data["id"])
    polled = client.get(started.data["url"])
    assert polled.status_code == 200
    assert not path.exists()  # the stored upload is deleted when the job ends
    return polled.data


@pytest.mark.django_db
def test_import_api_refuses_bad_file_and_changes_nothing(clients, project):
    before = Annotation.objects.count(), Solution.objects.count()
    job = _imported(clients["lead"], "malformed.jsonl")
    assert job["status"] == "failed" and job["counters"] == {"bad_lines": 5}
    assert [e["line"] for e in job["errors"]] == [2, 3, 5, 6, 7]
    assert job["errors"][1]["field"] == "question.problem"
    assert (Annotation.objects.count(), Solution.objects.count()) == before
    ok = _imported(clients["lead"], "plain.jsonl")
    assert ok["status"] == "succeeded" and ok["counters"]["solutions_created"] == 3 and ok["progress"] == 1.0
    again = _imported(clients["lead"], "plain.jsonl", gzip.compress((FIXTURES / "plain.jsonl").read_bytes()))
    assert again["status"] == "succeeded" and again["counters"]["solutions_created"] == 0  # gzip, same records
    assert again["counters"]["duplicates"] == 3


@pytest.mark.django_db
def test_import_job_is_seen_only_by_those_who_may_import(clients, project):
    upload = {"file": io.BytesIO((FIXTURES / "plain.jsonl").read_bytes())}
    job = clients["lead"].post("/api/v1/projects/exp/imports/", upload, format="multipart").data
    assert clients["lead"].get(job["url"]).status_code == 200
    assert clients["annotator"].get(job["url"]).status_code == 403
    assert clients["ml"].get(job["url"]).status_code == 403
    assert clients["outsider"].get(job["url"]).status_code == 404
    assert clients["none"].get(job["url"]).status_code == 401


@pytest.mark.django_db
def test_lost_or_orphaned_import_job_runs_again_after_the_sweep(clients, project):
    from annotate.services.imports import jobs as import_jobs

    before = Solution.objects.filter(project=project).count()
    upload = {"file": io.BytesIO((FIXTURES / "plain.jsonl").read_bytes())}
    job = clients["lead"].post("/api/v1/projects/exp/imports/", upload, format="multipart").data
    ImportJob.objects.filter(pk=job["id"]).update(created_at=timezone.now() - timedelta(minutes=5))
    assert import_jobs.sweep_stale_imports() == 1  # still `created`: its message is sent again
    stale = timezone.now() - timedelta(hours=7)
    ImportJob.objects.filter(pk=job["id"]).update(status="running", started_at=stale)
    import_jobs.sweep_stale_imports()
    assert ImportJob.objects.get(pk=job["id"]).status == "created"  # the dead worker's import runs again
    import_jobs.run_import_job(import_id=job["id"])
    import_jobs.run_import_job(import_id=job["id"])  # a duplicate message finds nothing to claim
    assert ImportJob.objects.get(pk=job["id"]).status == "succeeded"
    assert Solution.objects.filter(project=project).count() == before + 3


@pytest.mark.django_db
def test_import_api_too_large_is_413(clients):
    with override_settings(IMPORT_MAX_BYTES=100):
        response = clients["lead"].post(
            "/api/v1/projects/exp/imports/",
            {"file": io.BytesIO((FIXTURES / "plain.jsonl").read_bytes())},
            format="multipart",
        )
    assert response.status_code == 413 and "limit" in response.json()["detail"]


def test_same_json_helper_checks_order_and_types():
    assert same_json({"a": 1, "b": [1.5]}, {"a": 1, "b": [1.5]})
    assert not same_json({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert not same_json({"a": 1}, {"a": 1.0})


def _rated(text: str, rating: int) -> dict:
    return {"text": text, "rating": rating, "flagged": False}


NEUTRAL_THEN_ERROR = {
    "labeler": "44444444-4444-4444-8444-444444444444",
    "timestamp": "2023-01-02T03:04:05",
    "generation": 1,
    "is_quality_control_question": False,
    "is_initial_screening_question": False,
    "question": {
        "problem": "What is $2+2$?",
        "ground_truth_solution": "$2+2=\\boxed{4}$",
        "ground_truth_answer": "4",
        "pre_generated_steps": ["a", "b", "c", "# Answer\n\n5"],
        "pre_generated_answer": "5",
        "pre_generated_verifier_score": 0.4,
    },
    "label": {
        "steps": [
            {"completions": [_rated("a", 1)], "human_completion": None, "chosen_completion": 0},
            {"completions": [_rated("b", 0)], "human_completion": None, "chosen_completion": 0},
            {"completions": [_rated("c", -1), _rated("c2", 1)], "human_completion": None, "chosen_completion": None},
        ],
        "total_time": 1000,
        "finish_reason": "found_error",
    },
}


@pytest.mark.django_db
def test_trl_neutral_negative_rows_end_at_the_first_minus_one_rating(tmp_path):
    """Issue 11: a(+1) b(0) c(-1) with alternative c2(+1), exported with neutral=negative."""
    source = tmp_path / "neutral.jsonl"
    source.write_text(json.dumps(NEUTRAL_THEN_ERROR) + "\n")
    call_command("import_prm800k", str(source), project="neutral", no_progress=True, stdout=io.StringIO())
    ml = _member(Project.objects.get(slug="neutral"), "ml-neutral", Role.ML_ENGINEER)
    response = ml.get("/api/v1/projects/neutral/export/?format=trl&neutral=negative&alternatives=branch")
    assert response.status_code == 200
    rows = [(row["completions"], row["labels"]) for row in _lines(response)]
    assert rows == [(["a", "b", "c"], [True, False, False]), (["a", "b", "c2"], [True, False, True])]
