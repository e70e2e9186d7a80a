"""Deeply nested JSON is refused with 400 before the parser recurses (was RecursionError, 500).

`[` x 50,000 then `]` x 50,000 (a 100 KB body) on every JSON write endpoint; the request changes
nothing. Bodies nested up to the limit, and brackets inside strings, still go through.
"""

from __future__ import annotations

import json

import pytest

from annotate.models import Assignment, Export
from labeling_api.parsers import MAX_DEPTH
from ml.models import TrainingRun
from tests.security.world import build_world

pytestmark = pytest.mark.django_db

DEEP = b"[" * 50_000 + b"]" * 50_000
DEEP_OBJECT = b'{"a":' * 50_000 + b"1" + b"}" * 50_000


def _endpoints(world) -> list[tuple[str, str, str]]:
    slug, assignment = world.project.slug, world.rows["annotate.assignment"].pk
    return [
        ("annotator", "put", f"/api/v1/assignments/{assignment}/draft/"),
        ("annotator", "post", f"/api/v1/assignments/{assignment}/submit/"),
        ("lead", "post", "/api/v1/prm/score/"),
        ("lead", "post", f"/api/v1/projects/{slug}/exports/"),
        ("lead", "post", f"/api/v1/projects/{slug}/training-runs/"),
    ]


@pytest.mark.parametrize("body", [DEEP, DEEP_OBJECT], ids=["arrays", "objects"])
def test_deep_nesting_is_a_400_on_every_json_write_endpoint(body):
    world = build_world()
    assignment = world.rows["annotate.assignment"]
    before = (Export.objects.count(), TrainingRun.objects.count())
    for kind, method, url in _endpoints(world):
        response = getattr(world.api_client(kind), method)(url, body, content_type="application/json")
        assert response.status_code == 400, (url, response.status_code)
        assert f"deeper than {MAX_DEPTH}" in json.dumps(response.json()), url
    assignment.refresh_from_db()
    assert assignment.draft is None and assignment.status == "active"
    assert (Export.objects.count(), TrainingRun.objects.count()) == before


def test_nesting_up_to_the_limit_and_brackets_in_strings_are_fine():
    world = build_world()
    url = f"/api/v1/assignments/{world.rows['annotate.assignment'].pk}/draft/"
    annotator = world.api_client("annotator")
    at_limit = {"a": json.loads("[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1))}
    text = {"note": '[[[{{{"\\" ' * 5_000}
    for draft in (at_limit, text):
        response = annotator.put(url, draft, format="json")
        assert response.status_code == 200
        assert Assignment.objects.get(pk=world.rows["annotate.assignment"].pk).draft == draft
    one_deeper = b'{"a":' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}"
    assert annotator.put(url, one_deeper, content_type="application/json").status_code == 400
