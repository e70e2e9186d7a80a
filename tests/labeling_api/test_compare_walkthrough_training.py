"""A compare project's training request names what its "prm" features need (ML engineer
walkthrough): `{"features": ["shape", "prm"]}` without `prm_project` was accepted (202) and the run
then failed in the worker ('features "prm" need prm_project'), and `prm_project` without the "prm"
features was accepted and ignored (the run trained without any PRM, the project still listed in
its settings). Both are 400s naming `prm_project`, before any run is made; so is the command."""

import pytest
from django.core.management import CommandError, call_command

from annotate.models import Project, Role
from ml.models import TrainingRun
from tests.api_clients import member_client

pytestmark = pytest.mark.django_db


def test_prm_features_and_prm_project_are_asked_for_together():
    compare = Project.objects.create(slug="duel-cfg", task_kind="compare")
    engineer = member_client(compare, "duel-ml", Role.ML_ENGINEER)
    url = "/api/v1/projects/duel-cfg/training-runs/"

    missing = engineer.post(url, {"config": {"features": ["shape", "prm"]}}, format="json")
    assert missing.status_code == 400, missing.content
    need = 'features "prm" need prm_project: a steps project whose active PRM scores the steps'
    assert missing.json() == {"config": {"prm_project": [need]}}
    unused = engineer.post(url, {"config": {"prm_project": "algebra"}}, format="json")
    assert unused.status_code == 400, unused.content
    assert unused.json() == {
        "config": {
            "prm_project": [
                'only the "prm" features read a PRM: add "prm" to features, or leave prm_project out '
                "(features here: ngrams, shape)"
            ]
        }
    }
    with pytest.raises(CommandError, match='features "prm" need prm_project'):
        call_command("retrain", project="duel-cfg", config='{"features": ["prm"]}')
    assert not TrainingRun.objects.filter(project=compare).exists()

    ok = engineer.post(url, {"config": {"features": ["shape"], "prm_project": ""}}, format="json")
    assert ok.status_code == 202, ok.content
