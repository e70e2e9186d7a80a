"""A lead's bad job options, walked through the API and the command on PostgreSQL: every bad option
is named at once, so a form with three wrong fields is not corrected one refusal at a time."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from annotate.models import Project, Role
from autolabel.models import AutolabelJob, AutolabelSettings
from tests.api_clients import member_client

pytestmark = pytest.mark.django_db

BAD = {"base_url": "ftp://gpu-box/v1", "model": "m", "rollouts": 0, "temperature": 3, "concurrency": 1000}


def test_the_api_names_every_bad_option_at_once() -> None:
    project = Project.objects.create(slug="opts")
    lead = member_client(project, "lead", Role.LEAD)
    answer = lead.post("/api/v1/projects/opts/autolabel-jobs/", BAD, format="json")
    assert answer.status_code == 400
    assert sorted(answer.json()) == ["base_url", "concurrency", "rollouts", "temperature"]
    assert answer.json()["rollouts"] == ["must be an integer in [1, 64], got 0"]
    assert not AutolabelJob.objects.exists()


def test_a_number_sent_as_a_string_or_a_boolean_is_refused_not_read() -> None:
    """Was: "rollouts": "8" ran a job with 8 (DRF reads a string as a number), against the API's rule
    that its parsers are strict about JSON types; "temperature": true was read as 1.0."""
    project = Project.objects.create(slug="types")
    lead = member_client(project, "lead", Role.LEAD)
    body = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "rollouts": "8", "max_tokens": 8.0, "temperature": True}
    answer = lead.post("/api/v1/projects/types/autolabel-jobs/", body, format="json")
    assert answer.status_code == 400
    assert answer.json() == {
        "rollouts": ["Must be an integer: a JSON number, not a string or true/false."],
        "max_tokens": ["Must be an integer: a JSON number, not a string or true/false."],
        "temperature": ["Must be a JSON number, not a string or true/false."],
    }
    assert not AutolabelJob.objects.exists()


def test_the_command_names_every_bad_option_at_once() -> None:
    Project.objects.create(slug="opts")
    with pytest.raises(CommandError) as refused:
        call_command(
            "autolabel",
            project="opts",
            base_url=BAD["base_url"],
            model="m",
            rollouts=0,
            concurrency=1000,
            stdout=io.StringIO(),
        )
    message = str(refused.value)
    assert message.startswith("--base-url: must start with http:// or https://")
    assert "--rollouts: must be an integer in [1, 64], got 0" in message
    assert "--concurrency: must be an integer in [1, 256], got 1000" in message


def test_a_refused_command_leaves_the_budget_as_it_was() -> None:
    project = Project.objects.create(slug="opts")
    AutolabelSettings.objects.create(project=project, completions_budget=1000)
    with pytest.raises(CommandError, match="--rollouts"):
        call_command("autolabel", project="opts", base_url="http://127.0.0.1:9/v1", model="m", rollouts=0, budget=5)
    assert AutolabelSettings.objects.get(project=project).completions_budget == 1000  # it was set to 5


def test_autolabel_wait_says_once_every_30_s_that_no_worker_took_the_job() -> None:
    from autolabel.management.commands.autolabel import POLL_S, worker_note_due

    polls = [n * POLL_S for n in range(int(95 / POLL_S))]
    assert [waited for waited in polls if worker_note_due(waited)] == [30.0, 60.0, 90.0]  # 30.5 and 60.5 too before
