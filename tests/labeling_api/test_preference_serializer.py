"""A compare task's submit parser (labeling_api.serializers_preference): every error at once by
field path, no coercion, the tie's default strength, unknown keys refused, and a retry that no
longer validates answered with the first result."""

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from annotate.models import Preference, Project, Role
from labeling_api.serializers_preference import PreferenceInSerializer
from labeling_api.serializers_submit import flat_errors
from tests.api_clients import member_client
from tests.compare_lines import LINES


def parse(data, n_steps=None):
    serializer = PreferenceInSerializer(data=data, context={"n_steps": n_steps or {"A": 3, "B": 2}})
    return serializer.validated_data if serializer.is_valid() else flat_errors(serializer.errors)


def test_every_error_at_once_in_field_order_then_unknown_keys_sorted():
    errors = parse(
        {
            "idempotency_key": "",
            "preference": "a",
            "strength": "1",
            "total_time_ms": True,
            "note": 5,
            "first_wrong": {"B": 2, "C": 0, "A": None},
            "zz": 1,
            "steps": [],
        }
    )
    assert list(errors.items()) == [
        ("idempotency_key", ["Required: non-empty text of at most 100."]),
        ("preference", ["Required: one of A, B, tie."]),
        ("strength", ["Required: 1 (slightly), 2 (clearly) or 3 (much better)."]),
        ("total_time_ms", ["Required: an integer from 0 to 1000000000000."]),
        ("note", ["Must be text of at most 5000 characters."]),
        ("first_wrong.B", ["Must be a step index from 0 to 1, or null."]),
        ("first_wrong.C", ["Unknown side: use A or B."]),
        ("steps", ["Unknown field in a compare submit."]),
        ("zz", ["Unknown field in a compare submit."]),
    ]
    assert parse(["A"]) == {"non_field_errors": ["Expected a JSON object."]}


def test_a_tie_defaults_to_strength_one_and_falsy_extras_are_none():
    clean = parse({"idempotency_key": "k", "preference": "tie", "total_time_ms": 0, "note": 0, "first_wrong": []})
    assert (clean.strength, clean.note, clean.first_wrong) == (1, "", {"A": None, "B": None})
    assert parse({"idempotency_key": "k", "preference": "A", "total_time_ms": 0}) == {
        "strength": ["Required: 1 (slightly), 2 (clearly) or 3 (much better)."]
    }
    # a tie has no strength: null, or one the page still held from an earlier A/B choice, is stored as 1
    for held in (None, 1, 3):
        tie = parse({"idempotency_key": "k", "preference": "tie", "strength": held, "total_time_ms": 0})
        assert tie.strength == 1, held
    # but a value that is no strength at all is still refused, not coerced
    for bad in ("3", True, 7):
        assert "strength" in parse({"idempotency_key": "k", "preference": "tie", "strength": bad, "total_time_ms": 0})


@pytest.mark.django_db
def test_a_retry_that_no_longer_validates_gets_the_first_result(tmp_path: Path):
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    call_command("import_prm800k", str(path), "--project", "duel", "--task", "compare", "--pairs-per-problem", "2")
    client = member_client(Project.objects.get(slug="duel"), "ann", Role.ANNOTATOR)
    task = client.get("/api/v1/projects/duel/tasks/next/").json()
    url = f"/api/v1/assignments/{task['assignment_id']}/submit/?next=false"
    body = {"idempotency_key": "r", "preference": "B", "strength": 2, "total_time_ms": 5}

    refused = client.post(url, {**body, "strength": "2"}, format="json")
    assert refused.status_code == 400
    assert refused.content == b'{"strength":["Required: 1 (slightly), 2 (clearly) or 3 (much better)."]}'
    first = client.post(url, body, format="json")
    assert first.status_code == 201, first.content
    retry = client.post(url, {**body, "strength": "2"}, format="json")
    assert retry.status_code == 200 and retry.json()["preference_id"] == first.json()["preference_id"]
    assert Preference.objects.count() == 1
