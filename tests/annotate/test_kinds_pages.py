"""Guidelines templates for math, code and traces on /projects/new/, and the critique and
observation settings on the settings page (issue 18)."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from annotate.guidelines_templates import TEMPLATES
from annotate.models import Membership, Project, Role
from annotate.services.projects import PROJECT_CREATORS

pytestmark = pytest.mark.django_db

NEW = {
    "name": "Agents",
    "slug": "agents",
    "task_kind": "steps",
    "overlap": "1",
    "qc_rate": "0",
    "selection_strategy": "uncertainty",
    "retrain_every": "300",
}


@pytest.fixture
def creator(client):
    user = get_user_model().objects.create_user("creator", password="pw-steplabel-test")
    user.groups.add(Group.objects.get(name=PROJECT_CREATORS))
    client.force_login(user)
    return user


def test_new_project_offers_the_template_of_each_kind(client, creator):
    page = client.get("/projects/new/").content.decode()
    assert 'href="?kind=code"' in page and 'href="?kind=trace"' in page and "e.g. $2 + 2 = 5$" in page
    code = client.get("/projects/new/?kind=code").content.decode()
    assert "line numbers count across the whole solution" in code and 'href="?kind=math"' in code
    assert "Critique required on -1 steps" in code and "Rate observations" in code


def test_math_template_sends_an_unanswerable_problem_to_bad_problem_not_give_up():
    """The workspace has a Bad problem key (b); the template once sent unclear problems to give up (g)."""
    from annotate.guidelines_templates import ALL_TEMPLATES

    math = " ".join(TEMPLATES["math"].split())
    assert "bad problem (**b**) when the problem itself is unanswerable" in math
    assert "give up (**g**) when you cannot tell" in math
    assert not any("unclear to you" in text for text in ALL_TEMPLATES.values())


def test_empty_guidelines_start_from_the_chosen_kind_and_settings_are_kept(client, creator):
    response = client.post(
        "/projects/new/", {**NEW, "content_kind": "trace", "guidelines": "", "critique_required": "on"}
    )
    assert response.status_code == 302
    project = Project.objects.get(slug="agents")
    assert project.guidelines == TEMPLATES["trace"] and project.critique_required and not project.rate_observations

    written = client.post("/projects/new/", {**NEW, "slug": "own", "content_kind": "code", "guidelines": "Mine."})
    assert written.status_code == 302 and Project.objects.get(slug="own").guidelines == "Mine."


def test_settings_page_turns_observation_rating_on(client, creator):
    project = Project.objects.create(slug="traces", name="Traces")
    Membership.objects.create(project=project, user=creator, role=Role.LEAD)
    data = {**NEW, "name": "Traces", "guidelines": "x", "rate_observations": "on"}
    data.pop("slug")
    assert client.post("/projects/traces/settings/", data).status_code == 302
    project.refresh_from_db()
    assert project.rate_observations and not project.critique_required
