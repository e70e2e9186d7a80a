"""The export API: streamed PRM800K, filters, permissions and export jobs.

Everything runs on PostgreSQL; app labels are made through the real queue and submit services.
Cursors, TRL rows and imports over HTTP are in the modules beside this one.
"""

import gzip
import io
import json
import uuid
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import override_settings

from annotate.models import Annotation, Export, Membership, Role
from annotate.services import audit, queue
from labeling_api.serializers_submit import submit_payload
from tests.json_helpers import same_json
from tests.labeling_api.exports.helpers import FIXTURES, add_solution, label_in_app, lines_of

User = get_user_model()


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
def test_the_command_takes_the_apis_filters(clients, tmp_path):
    """Management commands mirror the API: the same filters give the same lines, and a bad value is
    refused with the API's words."""
    filters = {"generation": "3,-1", "qc": "exclude", "finish_reason": "found_error,solution", "split": "train"}
    query = "&".join(f"{name}={value}" for name, value in filters.items())
    response = clients["ml"].get(f"/api/v1/projects/exp/export/?format=prm800k&{query}")
    body = b"".join(response.streaming_content)
    full = (FIXTURES / "edge_cases.jsonl").read_bytes()
    assert 0 < len(body.splitlines()) < len(full.splitlines())  # the filters took some records out
    out = tmp_path / "filtered.jsonl"
    call_command("export_prm800k", project="exp", out=out, no_progress=True, stderr=io.StringIO(), **filters)
    assert out.read_bytes() == body
    with pytest.raises(CommandError, match="generation: must be integers, got 'x'"):
        call_command("export_prm800k", project="exp", generation="x", stdout=io.StringIO())


@pytest.mark.django_db
def test_app_labels_export_in_phase2_shape_with_pseudonym(project, clients):
    solution = add_solution(project, ["$1+1=2$.", "# Answer\n\n2"])
    annotator = clients["annotator"].user
    annotation = label_in_app(project, annotator, [1, 0], "solution")
    lines = lines_of(clients["lead"].get("/api/v1/projects/exp/export/?format=prm800k"))
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
        ("labeler=55555555555545558555555555555555", ["5555"]),  # read as the UUID it is
        ("labeler=urn:uuid:55555555-5555-4555-8555-555555555555", ["5555"]),
    ],
)
def test_filters(clients, query, labelers):
    lines = lines_of(clients["ml"].get(f"/api/v1/projects/exp/export/?{query}"))
    assert [line["labeler"][:4] for line in lines] == labelers


@pytest.mark.django_db
def test_a_label_marked_as_gold_is_exported_as_a_quality_control_question(clients, project):
    """Was: "Mark as gold" made a label its solution's gold reference, yet the export kept
    is_quality_control_question false and qc=exclude kept it among the dataset's labels."""
    marked = Annotation.objects.filter(project=project, labeler_uuid__startswith="1111")
    audit.mark_gold(annotations=marked, user=None, reason="reference answer")
    lines = lines_of(clients["ml"].get("/api/v1/projects/exp/export/"))
    flags = {line["labeler"][:4]: line["is_quality_control_question"] for line in lines}
    assert flags["1111"] is True and flags["4444"] is False
    kept = lines_of(clients["ml"].get("/api/v1/projects/exp/export/?qc=exclude&screening=exclude"))
    assert [line["labeler"][:4] for line in kept] == ["4444", "5555", "6666", "7777"]
    # marking gold is a correction: the marked label moves after the others (an incremental pull brings it)
    assert [line["labeler"][:4] for line in lines_of(clients["ml"].get("/api/v1/projects/exp/export/?qc=only"))] == [
        "2222",
        "1111",
    ]


@pytest.mark.django_db
def test_split_by_problem_puts_math500_in_test(clients, project, tmp_path):
    math500 = json.loads((FIXTURES / "math500_one.json").read_text())
    record = json.loads((FIXTURES / "edge_cases.jsonl").read_text().splitlines()[0])
    record["question"]["problem"] = math500["problem"]
    record["labeler"] = "99999999-9999-4999-8999-999999999999"
    tmp = tmp_path / "math500.jsonl"
    tmp.write_text(json.dumps(record) + "\n")
    call_command("import_prm800k", str(tmp), project="exp", no_progress=True, stdout=io.StringIO())
    test = lines_of(clients["ml"].get("/api/v1/projects/exp/export/?split=test"))
    train = lines_of(clients["ml"].get("/api/v1/projects/exp/export/?split=train"))
    assert [r["labeler"][:4] for r in test] == ["9999"]
    assert len(train) == 7 and "9999" not in {r["labeler"][:4] for r in train}


@pytest.mark.django_db
def test_min_agreement_keeps_agreeing_solutions(project, clients):
    project.overlap = 2
    project.save()
    agree = add_solution(project, ["s1", "s2"], problem_text="agree")
    disagree = add_solution(project, ["t1", "t2"], problem_text="disagree")
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
            submit_payload(assignment=assignment, user=user, payload=payload)
    lines = lines_of(clients["ml"].get("/api/v1/projects/exp/export/?min_agreement=0.9"))
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
        ("generation=%20", "generation"),  # blank: it filtered nothing and the whole project came back
        ("generation=1,,2", "generation"),
        ("finish_reason=found_error,", "finish_reason"),
        # empty (`labeler=$L` with L unset): it filtered nothing and the whole project came back
        ("labeler=", "labeler"),
        ("split=", "split"),
        ("generation=", "generation"),
        ("finish_reason=", "finish_reason"),
        ("format=", "format"),
        ("since=", "since"),
        ("trailer=true&trailer=false", "trailer"),  # a one-value option given two ways
        ("finish_reason=done", "finish_reason"),
        ("split=dev", "split"),
        ("since=garbage", "since"),
        ("min_agreement=2", "min_agreement"),
        ("neutral=sideways", "neutral"),
        ("labeler=not-a-uuid", "labeler"),
        ("labeler=55555555-5555-4555-8555", "labeler"),
        ("format=prm800k&neutral=negative", "neutral"),
        ("neutral=drop", "neutral"),  # prm800k is the default format
        ("format=prm800k&alternatives=drop", "alternatives"),
        ("format=critique&neutral=negative", "neutral"),
        ("format=math_shepherd&alternatives=drop", "alternatives"),
    ],
)
def test_bad_options_are_400_naming_the_field(clients, query, field):
    response = clients["ml"].get(f"/api/v1/projects/exp/export/?{query}")
    assert response.status_code == 400 and field in response.data


@pytest.mark.django_db
def test_a_labeler_typo_is_400_naming_the_value_not_an_empty_export(clients):
    response = clients["ml"].get("/api/v1/projects/exp/export/?labeler=not-a-uuid")
    assert response.status_code == 400
    assert response.json() == {"labeler": ["must be a labeler UUID, got 'not-a-uuid'"]}
    long = clients["ml"].get(f"/api/v1/projects/exp/export/?labeler={'x' * 500}")
    assert long.status_code == 400 and len(long.json()["labeler"][0]) < 120  # the value shown, cut short


@pytest.mark.django_db
def test_an_empty_filter_is_400_saying_to_leave_it_out_in_the_stream_jobs_and_the_command(clients):
    message = ["is empty: give a value, or leave the option out for no filter"]
    assert clients["ml"].get("/api/v1/projects/exp/export/?labeler=").json() == {"labeler": message}
    jobs_before = Export.objects.count()
    job = clients["ml"].post("/api/v1/projects/exp/exports/", {"split": ""}, format="json")
    assert job.status_code == 400 and job.json() == {"split": message}
    assert Export.objects.count() == jobs_before  # nothing started
    with pytest.raises(CommandError, match="labeler: is empty"):
        call_command("export_prm800k", "--project", "exp", "--labeler", "")


NULL = "is null: give a value, or leave the option out for its default"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"qc": None}, "qc", NULL),
        ({"format": "trl", "labeler": None}, "labeler", NULL),
        ({"format": None}, "format", NULL),
        ({"since": None}, "since", NULL),
        ({"gzip": None}, "gzip", NULL),
        ({"include_history": None}, "include_history", NULL),
        (
            {"generation": [0, None]},
            "generation",
            "holds a null: give values only, or leave the option out for its default",
        ),
        # an empty list filtered nothing either: the whole project, as a null did
        ({"generation": []}, "generation", "is empty: give a value, or leave the option out for no filter"),
        ({"finish_reason": []}, "finish_reason", "is empty: give a value, or leave the option out for no filter"),
        ({"qc": []}, "qc", "is empty: give a value, or leave the option out for no filter"),
    ],
)
def test_a_null_option_of_an_export_job_is_400_naming_it_not_the_default(clients, body, field, message):
    """Was: `{"qc": null}` (and every other option's null) started a job with the default, as if the
    option had been left out; the stream refuses an empty value the same way."""
    jobs_before = Export.objects.count()
    job = clients["ml"].post("/api/v1/projects/exp/exports/", body, format="json")
    assert job.status_code == 400 and job.json() == {field: [message]}
    assert Export.objects.count() == jobs_before  # nothing started
    # a misspelt name is still named as unknown first, null or not
    misspelt = clients["ml"].post("/api/v1/projects/exp/exports/", {"qcc": None}, format="json")
    assert misspelt.status_code == 400 and "did you mean qc?" in misspelt.json()["qcc"][0]


@pytest.mark.django_db
def test_a_misspelt_option_is_400_with_the_nearest_name_not_the_whole_export(clients):
    response = clients["ml"].get("/api/v1/projects/exp/export/?format=prm800k&finish_reasons=found_error")
    assert response.status_code == 400
    message = response.json()["finish_reasons"][0]
    assert message.startswith("unknown export option (did you mean finish_reason?); the options are ")
    assert "trailer" in message  # the stream's own option is listed too
    assert "generations" in clients["ml"].get("/api/v1/projects/exp/export/?generations=1").json()
    # a name in the wrong case is named by its right one (difflib's ratio missed FORMAT for format)
    upper = clients["ml"].get("/api/v1/projects/exp/export/?FORMAT=trl").json()
    assert upper["FORMAT"][0].startswith("unknown export option (did you mean format?)")
    gzip = clients["ml"].get("/api/v1/projects/exp/export/?gzip=1").json()
    assert gzip == {
        "gzip": ["the stream is plain JSONL; gzip applies to export jobs (POST /api/v1/projects/{slug}/exports/)"]
    }
    jobs_before = Export.objects.count()
    job = clients["ml"].post("/api/v1/projects/exp/exports/", {"fromat": "trl"}, format="json")
    assert job.status_code == 400 and "did you mean format?" in job.json()["fromat"][0]
    trailer = clients["ml"].post("/api/v1/projects/exp/exports/", {"trailer": True}, format="json")
    assert trailer.status_code == 400 and trailer.json() == {  # the stream's option, said so (was: "unknown")
        "trailer": [
            "a job's file is whole or not written at all (the job fails); trailer applies to the stream "
            "(GET /api/v1/projects/{slug}/export/)"
        ]
    }
    assert Export.objects.count() == jobs_before  # nothing started


@pytest.mark.django_db
def test_trl_options_with_the_prm800k_format_are_400_not_ignored(clients):
    response = clients["ml"].get("/api/v1/projects/exp/export/?format=prm800k&neutral=negative")
    assert response.status_code == 400
    assert response.json() == {
        "neutral": ["neutral=negative applies to format=trl or format=math_shepherd only, not format=prm800k"]
    }
    response = clients["ml"].get("/api/v1/projects/exp/export/?format=prm800k&alternatives=drop")
    assert response.json() == {"alternatives": ["alternatives=drop applies to format=trl only, not format=prm800k"]}
    # Their defaults change nothing, so they pass with any format (export_prm800k always sends them),
    # and the formats they shape take every value.
    for query in (
        "format=prm800k&neutral=positive&alternatives=branch",
        "format=trl&neutral=negative&alternatives=drop",
        "format=math_shepherd&neutral=drop",
    ):
        response = clients["ml"].get(f"/api/v1/projects/exp/export/?{query}")
        assert response.status_code == 200, (query, response.data)


@pytest.mark.django_db
def test_stream_and_job_accept_and_refuse_the_same_options(clients, project):
    """One validator: a query string and a job's JSON body agree (they used to disagree on both)."""
    url = "/api/v1/projects/exp/exports/"
    jobs_before = Export.objects.count()
    listed = clients["ml"].post(url, {"generation": [1, 2], "include_history": True}, format="json")
    assert listed.status_code == 202, listed.data
    assert Export.objects.get(pk=listed.data["id"]).filters["generation"] == [1, 2]
    assert clients["ml"].get("/api/v1/projects/exp/export/?generation=1&generation=2").status_code == 200
    for bad in (
        {"include_history": "yes"},
        {"generation": [1, "two"]},
        {"gzip": "maybe"},
        {"labeler": "not-a-uuid"},
        {"neutral": "negative", "format": "prm800k"},
        {"alternatives": "drop"},
    ):
        refused = clients["ml"].post(url, bad, format="json")
        assert refused.status_code == 400 and next(iter(bad)) in refused.data, refused.data
    assert Export.objects.count() == jobs_before + 1  # the refused ones wrote nothing
    for query in ("include_history=yes", "generation=1,two", "trailer=maybe", "labeler=nope", "neutral=drop"):
        refused = clients["ml"].get(f"/api/v1/projects/exp/export/?{query}")
        assert refused.status_code == 400 and query.split("=")[0] in refused.data
    labeler = "55555555555545558555555555555555"
    job = clients["ml"].post(url, {"labeler": labeler}, format="json")
    assert job.status_code == 202, job.data
    assert Export.objects.get(pk=job.data["id"]).filters["labeler"] == str(uuid.UUID(labeler))


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


@pytest.mark.django_db
def test_an_export_jobs_filters_show_the_cursor_it_was_asked_with_not_the_servers_position(project, clients, tmp_path):
    from annotate.services.exports import jobs as export_jobs

    cursor = clients["ml"].get("/api/v1/projects/exp/export/")["X-Export-Cursor"]
    with override_settings(MEDIA_ROOT=tmp_path):
        newer = clients["ml"].post("/api/v1/projects/exp/exports/", {"since": cursor}, format="json").data
        everything = clients["ml"].post("/api/v1/projects/exp/exports/", {}, format="json").data
        for job in (newer, everything):
            export_jobs.run_export_job(export_id=job["id"])
    newer = clients["ml"].get(f"/api/v1/exports/{newer['id']}/").data
    everything = clients["ml"].get(f"/api/v1/exports/{everything['id']}/").data
    assert newer["status"] == everything["status"] == "succeeded"
    assert newer["filters"]["since"] == cursor and newer["record_count"] == 0
    assert everything["filters"]["since"] is None and everything["record_count"] == 7
    assert newer["cursor"] == everything["cursor"] == cursor  # given once, as `cursor`, not in the filters too
    assert "cursor" not in newer["filters"] and "cursor" not in everything["filters"]


def _gzip_header_name(data: bytes) -> str:
    """The file name a gzip header stores (what `gunzip -N` restores): RFC 1952, FNAME after FEXTRA."""
    assert data[:2] == b"\x1f\x8b" and data[3] & 0x08, "no name in the header"
    start = 10 + (2 + int.from_bytes(data[10:12], "little") if data[3] & 0x04 else 0)
    return data[start : data.index(b"\0", start)].decode("latin-1")


@pytest.mark.django_db
def test_a_gzip_export_names_its_final_file_in_the_header_not_the_partial_one(project, tmp_path):
    from annotate.services.exports import jobs as export_jobs
    from annotate.services.exports.options import parse_options

    options = parse_options(project=project, params={"format": "prm800k"})
    with override_settings(MEDIA_ROOT=tmp_path):
        for gzip_output in (True, False):
            export = export_jobs.create_export_job(project=project, user=None, options=options, gzip_output=gzip_output)
            export_jobs.run_export_job(export_id=export.pk)  # what the worker runs
            export.refresh_from_db()
            assert export.status == "succeeded", export.error
            data = Path(export.file_path).read_bytes()
            if gzip_output:
                name = Path(export.file_path).name
                assert name.endswith(".jsonl.gz") and _gzip_header_name(data) == name.removesuffix(".gz")
                data = gzip.decompress(data)
            assert data == (FIXTURES / "edge_cases.jsonl").read_bytes()


def test_same_json_helper_checks_order_and_types():
    assert same_json({"a": 1, "b": [1.5]}, {"a": 1, "b": [1.5]})
    assert not same_json({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert not same_json({"a": 1}, {"a": 1.0})


# --- content negotiation: a client that asks for the type the docs name gets it ----------------------


@pytest.mark.django_db
@pytest.mark.parametrize("accept", ["application/x-ndjson", "application/x-ndjson, application/json;q=0.9"])
def test_the_stream_answers_a_client_that_accepts_only_ndjson(clients, accept):
    """The docs (and Swagger's "Try it out") send `Accept: application/x-ndjson`, the stream's own type: it was 406."""
    response = clients["ml"].get("/api/v1/projects/exp/export/", HTTP_ACCEPT=accept)
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/x-ndjson"
    assert b"".join(response.streaming_content) == (FIXTURES / "edge_cases.jsonl").read_bytes()
    bad = clients["ml"].get("/api/v1/projects/exp/export/?split=dev", HTTP_ACCEPT=accept)
    assert bad.status_code == 400  # the error is JSON naming the field, not a 406 that hides it
    assert bad["Content-Type"] == "application/json" and bad.json() == {"split": ["must be train or test, got 'dev'"]}
    denied = clients["annotator"].get("/api/v1/projects/exp/export/", HTTP_ACCEPT=accept)
    assert denied.status_code == 403 and "export" in denied.json()["detail"]


@pytest.mark.django_db
@pytest.mark.parametrize(("gz", "accept"), [(False, "application/x-ndjson"), (True, "application/gzip")])
def test_a_download_answers_a_client_that_accepts_only_the_files_type(project, clients, tmp_path, gz, accept):
    from annotate.services.exports import jobs as export_jobs

    with override_settings(MEDIA_ROOT=tmp_path):
        job = clients["ml"].post("/api/v1/projects/exp/exports/", {"gzip": gz}, format="json").data
        url = f"/api/v1/exports/{job['id']}/download/"
        early = clients["ml"].get(url, HTTP_ACCEPT=accept)
        assert early.status_code == 409 and early.json() == {"detail": "The export is created, not ready."}
        export_jobs.run_export_job(export_id=job["id"])
        response = clients["ml"].get(url, HTTP_ACCEPT=accept)
        assert response.status_code == 200, response.content
        assert response["Content-Type"] == accept
        body = b"".join(response.streaming_content)
    assert (gzip.decompress(body) if gz else body) == (FIXTURES / "edge_cases.jsonl").read_bytes()
    assert clients["ml"].get("/api/v1/exports/999999/download/", HTTP_ACCEPT=accept).json() == {
        "detail": "No such export of yours."
    }


def test_the_schema_documents_the_streams_cursor_and_deleted_headers(client):
    """An incremental pipeline lives on X-Export-Cursor (and X-Export-Deleted): the schema's 200 answer
    of the stream declares both as response headers, not only in its prose, so a generated client
    sees them."""
    schema = json.loads(client.get("/api/v1/schema/", {"format": "json"}).content)
    stream = schema["paths"]["/api/v1/projects/{slug}/export/"]["get"]
    headers = stream["responses"]["200"].get("headers", {})
    assert set(headers) >= {"X-Export-Cursor", "X-Export-Deleted", "X-Export-Corrected"}, headers
    assert headers["X-Export-Deleted"]["schema"]["type"] == "integer"
    assert not any(p["in"] == "header" for p in stream["parameters"])  # response headers, not request ones
