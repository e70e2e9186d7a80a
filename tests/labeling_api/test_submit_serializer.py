"""The submit payload's parser (labeling_api.serializers_submit): JSON types without coercion, errors
flattened to field paths in the fields' order, the key checked first, and a retry that no longer
validates answered with the first result."""

import pytest
from django.http import QueryDict
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import Annotation
from annotate.services.submission import SubmissionContext
from labeling_api.serializers_submit import SubmitInSerializer, flat_errors
from tests.factories import make_project, make_solutions, make_user, payload


def parse(data, *, mode="phase2", n_steps=3, rated=None, critique_required=False):
    context = SubmissionContext(
        mode=mode,
        critique_required=critique_required,
        step_texts=[f"step {i}" for i in range(n_steps)],
        rated=rated if rated is not None else [True] * n_steps,
    )
    serializer = SubmitInSerializer(data=data, context={"solution": context})
    if serializer.is_valid():
        return serializer.validated_data
    return flat_errors(serializer.errors)


def step(index, rating, **extra):
    return {"index": index, "rating": rating, **extra}


def test_values_are_not_coerced():
    errors = parse(
        {
            "idempotency_key": "k",
            "finish_reason": "solution",
            "total_time_ms": "5",
            "steps": [step(0, "1"), step(1, True, flagged=1), step("2", 1.0, flagged="true")],
        }
    )
    assert list(errors.items()) == [
        ("total_time_ms", ["Must be a non-negative integer (milliseconds)."]),
        ("steps[0].rating", ["Must be -1, 0, 1 or null."]),
        ("steps[1].rating", ["Must be -1, 0, 1 or null."]),
        ("steps[1].flagged", ["Must be true or false."]),
        ("steps[2].index", ["Must be 2: steps are the labeled prefix, in order from 0."]),
        ("steps[2].rating", ["Must be -1, 0, 1 or null."]),
        ("steps[2].flagged", ["Must be true or false."]),
    ]


def test_absent_and_null_read_as_defaults_and_text_is_kept_as_sent():
    sub = parse(
        {
            "idempotency_key": " k ",
            "finish_reason": "give_up",
            "total_time_ms": 0,
            "reason": "  stuck  ",
            "steps": [
                step(0, -1, alternatives=[{"text": " alt ", "rating": 1}], human_completion={"text": "mine"}),
                {"index": 1, "critique": "  "},
            ],
        },
        mode="phase1",
    )
    assert (sub.idempotency_key, sub.reason, sub.total_time_ms) == (" k ", "stuck", 0)
    first, second = sub.steps
    assert first.flagged is False and first.alternatives[0].text == " alt " and first.human_completion == "mine"
    assert (second.rating, second.flagged, second.alternatives, second.critique) == (None, False, [], None)


def test_step_count_and_item_errors_are_reported_together():
    errors = parse(
        {
            "idempotency_key": "k",
            "finish_reason": "solution",
            "total_time_ms": 1,
            "steps": [step(i, 1) for i in range(5)],
        }
    )
    assert list(errors.items()) == [
        ("steps", ["The solution has 3 steps; 5 were sent."]),
        ("steps[3].index", ["Out of range: the solution has 3 steps."]),
    ]


def test_nested_paths():
    errors = parse(
        {
            "idempotency_key": "k",
            "finish_reason": "found_error",
            "total_time_ms": 1,
            "steps": [
                "x",
                step(1, -1, alternatives=[None, {"text": "", "rating": 2}], human_completion={"text": " "}),
                step(2, None, alternatives="x", critique=["a"]),
            ],
        }
    )
    assert list(errors.items()) == [
        ("steps[0]", ["Must be an object."]),
        ("steps[1].alternatives[0]", ["Must be an object."]),
        ("steps[1].alternatives[1].text", ["Must be non-empty text."]),
        ("steps[1].alternatives[1].rating", ["Must be -1, 0, 1 or null."]),
        ("steps[1].human_completion.text", ["Must be non-empty text."]),
        ("steps[2].alternatives", ["Must be a list of at most 50."]),
        ("steps[2].critique", ["Must be text."]),
    ]


def test_a_bad_key_or_a_body_that_is_not_an_object_is_the_only_error():
    assert parse({"idempotency_key": 1, "finish_reason": "done", "steps": "x"}) == {
        "idempotency_key": ["Required: non-empty text of at most 100."]
    }
    for body in (["a"], None, "x"):
        assert parse(body) == {"non_field_errors": ["Expected a JSON object."]}
    # A form body reads each key's last value, as text.
    form = QueryDict("idempotency_key=k&finish_reason=solution&total_time_ms=5")
    assert list(parse(form)) == ["total_time_ms"]


def test_rules_that_need_the_solution_come_from_the_context():
    body = {"idempotency_key": "k", "finish_reason": "give_up", "total_time_ms": 1, "reason": "r"}
    unrated = parse({**body, "steps": [step(0, 1), step(1, 1)]}, rated=[True, False, True])
    assert unrated == {"steps[1].rating": ["This step is shown but not rated in this project: send null."]}
    needs_critique = parse({**body, "finish_reason": "found_error", "steps": [step(0, -1)]}, critique_required=True)
    assert needs_critique == {"steps[0].critique": ["This project needs a written critique on every step rated -1."]}
    phase1 = parse({**body, "finish_reason": "solution", "steps": [step(0, -1), step(1, 1)]}, mode="phase1", n_steps=2)
    assert phase1 == {"steps[0].rating": ["A Negative step needs a Positive alternative or a written step to go on."]}


@pytest.mark.django_db
def test_api_answers_the_flat_errors_and_replays_a_retry_that_no_longer_validates():
    project = make_project("strict")
    make_solutions(project, 2)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=make_user(project=project)).key}")
    task = client.get("/api/v1/projects/strict/tasks/next/").json()
    url = f"/api/v1/assignments/{task['id']}/submit/?next=false"

    bad = payload([1, "1", 1], key="r")
    response = client.post(url, bad, format="json")
    assert response.status_code == 400
    assert response.content == b'{"steps[1].rating":["Must be -1, 0, 1 or null."]}'

    first = client.post(url, payload([1, 1, 1], key="r"), format="json")
    assert first.status_code == 201
    retry = client.post(url, bad, format="json")  # the same key: the first result, not a 400
    assert retry.status_code == 200 and retry.json()["annotation_id"] == first.json()["annotation_id"]
    assert Annotation.objects.count() == 1
