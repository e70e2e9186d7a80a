"""Who may open the workspace page, and what the page carries (no inline script)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from annotate.models import Role
from tests.e2e.helpers import make_project, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def project():
    return make_project(guidelines="Rate **carefully**. </script><script>alert(1)</script>")


def test_anonymous_is_sent_to_login(client, project):
    url = reverse("workspace", args=[project.slug])
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


@pytest.mark.parametrize("role", [Role.ANNOTATOR, Role.LEAD])
def test_annotators_and_leads_get_the_page(client, project, role):
    client.force_login(make_user("member", project, role))
    response = client.get(f"/annotate/{project.slug}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'src="/static/steplabel/workspace.js"' in html
    assert 'href="/static/steplabel/workspace.css"' in html
    # Config travels as JSON data, escaped: the guidelines cannot close the script element.
    scripts = [chunk.split(">", 1)[0] for chunk in html.split("<script")[1:]]
    assert all('type="application/json"' in s or 'type="module"' in s for s in scripts), scripts
    assert "<script>alert(1)" not in html
    config_json = html.split('<script id="config" type="application/json">', 1)[1].split("</script>", 1)[0]
    config = json.loads(config_json)
    assert config["project"]["slug"] == project.slug
    assert config["project"]["guidelines"].endswith("<script>alert(1)</script>")
    assert config["api_base"] == "/api/v1/"
    assert config["project"]["mode"] == "phase2"


def test_members_who_do_not_label_get_403(client, project):
    client.force_login(make_user("ml", project, Role.ML_ENGINEER))
    assert client.get(f"/annotate/{project.slug}/").status_code == 403


def test_non_members_get_404_as_for_a_missing_project(client, project):
    """No existence leak: the same answer whether the project exists or not."""
    client.force_login(make_user("outsider"))
    assert client.get(f"/annotate/{project.slug}/").status_code == 404
    assert client.get("/annotate/nope/").status_code == 404


def test_unknown_project_is_404(client, project):
    client.force_login(make_user("member", project))
    assert client.get("/annotate/nope/").status_code == 404
