"""Export formats offered on pages: the API token page gives a ready curl command per export format
of each project the user may export (PRM800K and TRL stepwise for step projects, TRL preference
for compare projects), and each command's URL answers through the API with the token; the
dashboard links the same formats."""

from __future__ import annotations

import html
import io
import json
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import Membership, Project, Role
from tests.factories import make_user

pytestmark = pytest.mark.django_db
FIXTURE = Path(__file__).parent / "fixtures" / "edge_cases.jsonl"  # labeled PRM800K records
CURL = re.compile(r'<pre data-curl="([^"]+)"(?: data-format="([^"]*)")?>([^<]*)</pre>')


def _commands(page: str) -> dict[tuple[str, str | None], str]:
    return {(slug, fmt or None): html.unescape(command) for slug, fmt, command in CURL.findall(page)}


def _url(command: str) -> str:
    match = re.search(r'"(http://testserver[^"]+)"', command)
    assert match, command
    return match.group(1).removeprefix("http://testserver")


def test_one_command_per_export_format_and_each_one_works(client):
    call_command("import_prm800k", str(FIXTURE), project="algebra", no_progress=True, stdout=io.StringIO())
    call_command("import_prm800k", str(FIXTURE), project="duel", task="compare", no_progress=True, stdout=io.StringIO())
    mia = make_user("mia")
    for slug in ("algebra", "duel"):
        Membership.objects.create(project=Project.objects.get(slug=slug), user=mia, role=Role.ML_ENGINEER)
    Membership.objects.create(project=Project.objects.create(slug="third"), user=mia, role=Role.ANNOTATOR)
    client.force_login(mia)
    page = client.post("/account/token/", follow=True).content.decode()
    key = Token.objects.get(user=mia).key

    commands = _commands(page)
    assert set(commands) == {
        ("algebra", "prm800k"),
        ("algebra", "trl"),
        ("duel", "preference"),
        ("duel", "prm800k"),  # its first-wrong-step marks' step labels
        ("third", None),  # an annotator there: their progress, not an export
    }
    base = "http://testserver/api/v1/projects"
    assert commands[("algebra", "prm800k")] == (
        f'curl -sS --fail-with-body -D algebra-prm800k.headers -H "Authorization: Token {key}" '
        f'"{base}/algebra/export/?format=prm800k" -o algebra-prm800k.jsonl'
    )  # --fail-with-body: an error answer (429, 403) is an exit status, not saved as the data
    # -D keeps the headers, the cursor for the next pull among them, and the page says which line
    assert "<code>X-Export-Cursor</code> line is the cursor" in page
    assert f'"{base}/algebra/export/?format=trl&neutral=positive" -o algebra-trl.jsonl' in commands[("algebra", "trl")]
    assert f'"{base}/duel/export/?format=preference" -o duel-preference.jsonl' in commands[("duel", "preference")]
    assert commands[("third", None)] == f'curl -sS --fail-with-body -H "Authorization: Token {key}" "{base}/third/me/"'

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    rows = {}
    for (_slug, fmt), command in commands.items():
        response = api.get(_url(command))
        assert response.status_code == 200, (command, response.status_code)
        if fmt:
            assert response["X-Export-Cursor"]  # what the saved .headers file holds
            body = b"".join(response.streaming_content).decode()
            rows[fmt] = [json.loads(line) for line in body.splitlines() if line.strip()]
    assert rows["prm800k"] and all("label" in r and "question" in r for r in rows["prm800k"])
    assert rows["trl"] and all(set(r) >= {"prompt", "completions", "labels"} for r in rows["trl"])
    assert rows["preference"] == []  # no comparison made yet: the format is accepted, nothing to give


def test_without_a_token_the_commands_show_the_placeholder(client):
    mia = make_user("mia")
    Membership.objects.create(project=Project.objects.create(slug="algebra"), user=mia, role=Role.LEAD)
    client.force_login(mia)
    commands = _commands(client.get("/account/token/").content.decode())
    assert set(commands) == {("algebra", "prm800k"), ("algebra", "trl")}
    assert all('"Authorization: Token YOUR_TOKEN"' in c for c in commands.values())


def test_dashboard_links_the_export_formats_of_the_projects_kind(client):
    call_command("import_prm800k", str(FIXTURE), project="algebra", no_progress=True, stdout=io.StringIO())
    call_command("import_prm800k", str(FIXTURE), project="duel", task="compare", no_progress=True, stdout=io.StringIO())
    lead = make_user("lena")
    for slug in ("algebra", "duel"):
        Membership.objects.create(project=Project.objects.get(slug=slug), user=lead, role=Role.LEAD)
    client.force_login(lead)
    links = {}
    for slug in ("algebra", "duel"):
        page = client.get(f"/dashboard/{slug}/").content.decode()
        # `download`: the browser saves the stream as a file instead of showing a wall of JSON
        links[slug] = dict(re.findall(r'<a href="([^"]+)" data-export="([^"]+)" download>', page))
    assert links == {
        "algebra": {
            "/api/v1/projects/algebra/export/?format=prm800k": "prm800k",
            "/api/v1/projects/algebra/export/?format=trl&amp;neutral=positive": "trl",
        },
        "duel": {  # was PRM800K and TRL of the (then unlabeled) steps; now the preferences, and the marks' labels
            "/api/v1/projects/duel/export/?format=preference": "preference",
            "/api/v1/projects/duel/export/?format=prm800k": "prm800k",
        },
    }
    for path in [p for paths in links.values() for p in paths]:
        assert client.get(html.unescape(path)).status_code == 200, path
