"""The dashboard page (`/dashboard/{slug}/`): who may open it, its configuration and sections, and
the home page's link (the campaign of tests/annotate/stats_campaign.py).
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

pytestmark = pytest.mark.django_db


def test_page_for_leads_carries_config_and_no_inline_script(client, campaign):
    client.force_login(campaign["lead"])
    response = client.get("/dashboard/algebra/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'src="/static/steplabel/dashboard.js"' in html
    assert 'href="/static/steplabel/dashboard.css"' in html
    scripts = [chunk.split(">", 1)[0] for chunk in html.split("<script")[1:]]
    assert scripts and all('type="application/json"' in s or 'type="module"' in s for s in scripts), scripts
    assert '<script id="dashboard-config" type="application/json">' in html
    assert "/api/v1/projects/algebra/stats/" in html and "/api/v1/projects/algebra/stats/annotators.csv" in html
    for section in ("progress", "throughput", "labels", "quality", "model", "queue", "actions"):
        assert f'<section id="{section}"' in html


@pytest.mark.parametrize("who", ["ann", "mel"])
def test_page_refuses_annotators_and_ml_engineers(client, campaign, who):
    client.force_login(campaign[who])
    assert client.get("/dashboard/algebra/").status_code == 403


def test_page_needs_login_and_admits_superusers(client, campaign):
    response = client.get("/dashboard/algebra/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    client.force_login(get_user_model().objects.create_superuser("root", password="pw-steplabel-test"))
    assert client.get("/dashboard/algebra/").status_code == 200
    assert client.get("/dashboard/nope/").status_code == 404


def test_home_links_leads_to_the_dashboard(client, campaign):
    client.force_login(campaign["lead"])
    assert 'href="/dashboard/algebra/"' in client.get("/").content.decode()
    client.force_login(campaign["ann"])
    assert 'href="/dashboard/algebra/"' not in client.get("/").content.decode()
