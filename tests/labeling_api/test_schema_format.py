"""`GET /api/v1/schema/` answers in the encoding asked for: `?format=json` is JSON, `?format=yaml`
and no parameter are YAML (the default), and the Accept header still works without the parameter."""

from __future__ import annotations

import json

import pytest
import yaml

pytestmark = pytest.mark.django_db
URL = "/api/v1/schema/"


def test_format_json_is_json(client):
    response = client.get(URL, {"format": "json"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.oai.openapi+json")
    schema = json.loads(response.content)
    assert schema["openapi"].startswith("3.") and "/api/v1/projects/{slug}/tasks/next/" in schema["paths"]
    assert response["Content-Disposition"].endswith('.json"')


@pytest.mark.parametrize("query", [{"format": "yaml"}, {}])
def test_format_yaml_and_the_default_are_yaml(client, query):
    response = client.get(URL, query)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.oai.openapi")
    assert "json" not in response["Content-Type"]
    assert response.content.startswith(b"openapi: ")
    assert yaml.safe_load(response.content)["paths"] == json.loads(client.get(URL, {"format": "json"}).content)["paths"]


def test_accept_header_still_chooses_without_the_parameter(client):
    response = client.get(URL, HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert json.loads(response.content)["openapi"].startswith("3.")


def test_unknown_format_is_not_found(client):
    assert client.get(URL, {"format": "xml"}).status_code == 404
