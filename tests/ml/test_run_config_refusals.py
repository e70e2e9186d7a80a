"""Training settings a project's runs cannot use are refused when asked for, with what to do, not
failed later in the worker with a library's message (found walking the active-learning loop)."""

import pytest
from django.test import override_settings

from annotate.models import Project, Role
from core.models import JobStatus
from ml import services
from ml.models import TrainingRun
from ml.prm.config import ConfigError
from tests.api_clients import member_client
from tests.ml.loop_helpers import TINY, planted_project


@pytest.fixture
def project(db, tmp_path) -> Project:
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY):
        yield planted_project("cfg", labeled=12, open_=4)


def test_local_hf_without_a_model_directory_is_refused_over_http(project):
    """Was: 202, then the run failed with "OSError: Repo id must use alphanumeric chars ... ''"
    (hf_model_path, a server path, cannot be sent over HTTP, so it was always empty)."""
    ml = member_client(project, "ml-cfg", Role.ML_ENGINEER)
    response = ml.post("/api/v1/projects/cfg/training-runs/", {"config": {"featurizer": "local_hf"}}, format="json")
    assert response.status_code == 400, response.content
    message = response.json()["config"]["featurizer"][0]
    assert "hf_model_path" in message and "ML_TRAINING_CONFIG" in message
    assert not TrainingRun.objects.filter(project=project).exists()


def test_local_hf_is_taken_where_the_deployment_names_the_directory(project, tmp_path):
    with override_settings(ML_TRAINING_CONFIG={**TINY, "hf_model_path": str(tmp_path)}):
        config = services.training_config(overrides={"featurizer": "local_hf"})
    assert config.featurizer == "local_hf" and config.hf_model_path == str(tmp_path)


def test_a_deployment_set_to_local_hf_without_a_directory_fails_the_run_with_the_reason(project):
    """The worker's path: the run's error is the setting and what to do, not a traceback's last line."""
    with override_settings(ML_TRAINING_CONFIG={**TINY, "featurizer": "local_hf"}):
        run = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
    assert run.status == JobStatus.FAILED
    assert run.error.startswith("Training config: featurizer: local_hf reads a local Hugging Face model directory")
    assert "OSError" not in run.error


def test_a_reward_model_setting_on_a_steps_project_says_what_it_is(project):
    """Was: "unknown training config key", as if `features` were misspelt."""
    ml = member_client(project, "ml-cfg2", Role.ML_ENGINEER)
    for key, value in (("features", ["prm"]), ("prm_project", "cfg"), ("dense_lr", 0.01)):
        response = ml.post("/api/v1/projects/cfg/training-runs/", {"config": {key: value}}, format="json")
        assert response.status_code == 400, key
        assert response.json()["config"][key] == [
            "a compare project's reward model setting; this project's PRM does not take it"
        ]
    with pytest.raises(ConfigError, match="features: a compare project's reward model setting"):
        services.request_retrain(project=project, config={"features": ["prm"]}, enqueue=False)
    assert not TrainingRun.objects.filter(project=project).exists()


def test_the_reward_only_keys_are_the_reward_models_own():
    """The web process names them without importing the reward model (torch): kept in step here."""
    from dataclasses import fields

    from ml.prm.reward import RewardConfig
    from ml.services.config import CONFIG_KEYS, REWARD_ONLY_KEYS

    assert {f.name for f in fields(RewardConfig)} - CONFIG_KEYS - {"extra"} == REWARD_ONLY_KEYS


def test_a_failed_run_lists_the_step_labels_it_had_to_train_on(project):
    """Was: label_count stayed 0 unless the run succeeded, so a run that failed on 12 labeled
    solutions read "0 step labels" in the API and the dashboard's runs table."""
    from ml.services_auto import label_total

    with override_settings(ML_TRAINING_CONFIG={**TINY, "featurizer": "local_hf"}):
        run = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
    assert run.status == JobStatus.FAILED
    assert run.label_count == label_total(project=project) > 0
    ml = member_client(project, "ml-cfg3", Role.ML_ENGINEER)
    listed = ml.get("/api/v1/projects/cfg/training-runs/").json()
    assert listed[0]["id"] == run.pk and listed[0]["label_count"] == run.label_count


@pytest.mark.parametrize("where", ["missing", "empty", "no_weights"])
def test_a_model_directory_that_is_not_one_fails_the_run_naming_the_path(project, tmp_path, where):
    """Was: "OSError: Repo id must be in the form 'repo_name' or 'namespace/repo_name': '/models/x'"
    (transformers read a missing directory as a hub repo id), in the run's error on the dashboard."""
    path = {"missing": tmp_path / "no-such-model", "empty": tmp_path / "empty", "no_weights": tmp_path / "bare"}[where]
    if where != "missing":
        path.mkdir()
    if where == "no_weights":
        (path / "config.json").write_text('{"model_type": "bert"}')
    overrides = {**TINY, "featurizer": "local_hf", "hf_model_path": str(path)}
    with override_settings(ML_TRAINING_CONFIG=overrides):
        run = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
    assert run.status == JobStatus.FAILED
    expected = {
        "missing": f"Training config: hf_model_path: no directory at {path}: it must be a local Hugging Face model",
        "empty": f"Training config: hf_model_path: {path} holds no config.json: it must be a local Hugging Face",
        "no_weights": f"Training config: hf_model_path: {path} could not be loaded as a model: ",
    }[where]
    assert run.error.startswith(expected), run.error
    assert "Repo id" not in run.error and "details in the worker's log" not in run.error
