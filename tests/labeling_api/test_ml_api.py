"""The model-loop API: training runs (start, list, activate) and PRM scoring, with permissions.

Runs on PostgreSQL; models are trained for real (tiny config) in the test process.
"""

import math

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings
from rest_framework.test import APIClient

from annotate.models import Project, Role, Solution
from core.models import JobStatus
from ml import services
from ml.models import TrainingRun
from ml.services import runs
from tests.api_clients import member_client
from tests.ml.loop_helpers import TINY, add_label, planted_project

User = get_user_model()


_member = member_client


@pytest.fixture
def media(tmp_path):
    with override_settings(MEDIA_ROOT=tmp_path, ML_TRAINING_CONFIG=TINY):
        yield tmp_path


@pytest.fixture
def project(db, media) -> Project:
    return planted_project("api", labeled=60, open_=10)


@pytest.fixture
def clients(project):
    other = Project.objects.create(slug="other")
    return {
        "lead": _member(project, "lead", Role.LEAD),
        "ml": _member(project, "ml", Role.ML_ENGINEER),
        "annotator": _member(project, "annotator", Role.ANNOTATOR),
        "outsider": _member(other, "outsider", Role.LEAD),
        "none": APIClient(),
    }


def _train(project: Project) -> TrainingRun:
    run = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
    assert run.status == JobStatus.SUCCEEDED, run.error
    return run


SCORE_BODY = {
    "project": "api",
    "problem": "What is $2+3$?",
    "solutions": [
        ["We add the numbers.", "So we divide both sides by zero.", "# Answer\n\n5"],
        ["The sum is 5.", "# Answer\n\n5"],
    ],
}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("who", "list_", "start", "activate", "score"),
    [
        ("none", 401, 401, 401, 401),
        ("annotator", 403, 403, 403, 403),
        ("outsider", 404, 404, 404, 404),
        ("ml", 200, 202, 403, 200),
        ("lead", 200, 202, 200, 200),
    ],
)
def test_permissions(clients, project, who, list_, start, activate, score):
    run = _train(project)
    client = clients[who]
    assert client.get("/api/v1/projects/api/training-runs/").status_code == list_
    assert client.post("/api/v1/projects/api/training-runs/", {}, format="json").status_code == start
    assert client.post(f"/api/v1/projects/api/training-runs/{run.pk}/activate/").status_code == activate
    assert client.post("/api/v1/prm/score/", SCORE_BODY, format="json").status_code == score


@pytest.mark.django_db
def test_refusals_name_the_roles_and_the_action_in_words(clients, project):
    """Not "Only a project's lead may activate_model.": the internal action name read as a typo."""
    run = _train(project)
    refused = clients["ml"].post(f"/api/v1/projects/api/training-runs/{run.pk}/activate/")
    assert refused.status_code == 403
    assert refused.json() == {"detail": "Only the leads of this project can activate a model."}
    retrain = clients["annotator"].post("/api/v1/projects/api/training-runs/", {}, format="json")
    assert retrain.json() == {"detail": "Only the leads and ML engineers of this project can start training runs."}
    export = clients["annotator"].get("/api/v1/projects/api/export/")
    assert export.json() == {"detail": "Only the leads and ML engineers of this project can export its data."}


@pytest.mark.django_db
def test_a_request_while_a_run_trains_on_the_same_labels_joins_it(clients, project, django_capture_on_commit_callbacks):
    """A double click of Retrain now once a worker has claimed the first run: the second request
    answers with the running run (`merged`), not a second run on identical labels."""
    url = "/api/v1/projects/api/training-runs/"
    first = clients["lead"].post(url, {}, format="json").data
    assert runs._claim(first["id"]) is not None  # what the worker does first: status running, watermarks
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        second = clients["lead"].post(url, {}, format="json")
    assert second.status_code == 202
    assert second.data["id"] == first["id"] and second.data["merged"] is True and second.data["status"] == "running"
    assert set(second.data) == set(first), "the same answer shape as any request"
    assert not callbacks, "nothing enqueued"
    assert TrainingRun.objects.filter(project=project).count() == 1


@pytest.mark.django_db
def test_retrain_now_with_no_label_since_the_active_run_answers_that_run(
    clients, project, django_capture_on_commit_callbacks
):
    """Found by the lead walkthrough: Retrain now with nothing new trained again, adding a copy of
    the last point to the learning curve, advancing the round and redrawing the control."""
    url = "/api/v1/projects/api/training-runs/"
    active = _train(project)
    project.refresh_from_db()
    generation = project.current_generation
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        same = clients["lead"].post(url, {}, format="json")
    assert same.status_code == 202
    assert (same.data["id"], same.data["merged"], same.data["status"]) == (active.pk, True, "succeeded")
    assert not callbacks and TrainingRun.objects.filter(project=project).count() == 1
    project.refresh_from_db()
    assert project.current_generation == generation
    # other settings on the same labels are a new run; so is a plain request once a label arrives
    tuned = clients["ml"].post(url, {"config": {"max_epochs": 3}}, format="json").data
    assert tuned["merged"] is False and tuned["status"] == "created"
    TrainingRun.objects.filter(pk=tuned["id"]).delete()
    add_label(project)
    fresh = clients["lead"].post(url, {}, format="json").data
    assert fresh["id"] != active.pk and fresh["merged"] is False and fresh["status"] == "created"
    # the command line still trains when told to (an explicit `retrain` is a person's decision)
    TrainingRun.objects.filter(pk=fresh["id"]).delete()
    assert not services.request_retrain(project=project, enqueue=False).merged


@pytest.mark.django_db
def test_a_request_while_a_run_trains_waits_when_labels_arrived_or_settings_differ(clients, project):
    url = "/api/v1/projects/api/training-runs/"
    first = clients["ml"].post(url, {"config": {"max_epochs": 3}}, format="json").data
    assert runs._claim(first["id"]) is not None
    same = clients["ml"].post(url, {"config": {"max_epochs": 3}}, format="json").data
    assert same["id"] == first["id"] and same["merged"] is True  # the same settings on the same labels
    other = clients["ml"].post(url, {"config": {"max_epochs": 4}}, format="json").data
    assert other["id"] != first["id"] and other["merged"] is False and other["status"] == "created"
    TrainingRun.objects.filter(pk=other["id"]).delete()

    add_label(project)  # a label newer than the running run's snapshot: a new run waits for it
    later = clients["lead"].post(url, {}, format="json")
    assert later.status_code == 202
    assert later.data["id"] != first["id"] and later.data["merged"] is False and later.data["status"] == "created"
    joined = clients["lead"].post(url, {}, format="json").data
    assert joined["id"] == later.data["id"] and joined["merged"] is True  # then it joins the waiting one
    assert TrainingRun.objects.filter(project=project).count() == 2


@pytest.mark.django_db
def test_start_merges_into_the_waiting_run_and_lists_runs(clients, project, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        first = clients["ml"].post("/api/v1/projects/api/training-runs/", {"config": {"max_epochs": 3}}, format="json")
        second = clients["lead"].post("/api/v1/projects/api/training-runs/", {}, format="json")
    assert first.status_code == second.status_code == 202
    assert first.data["status"] == "created" and first.data["merged"] is False
    assert second.data["id"] == first.data["id"] and second.data["merged"] is True
    assert len(callbacks) == 1, "one task enqueued for one run"
    assert first.data["config"]["max_epochs"] == 3 and first.data["config"]["extra"] == {"trigger": "api"}
    bad = clients["ml"].post("/api/v1/projects/api/training-runs/", {"config": {"lr": 1, "nope": 2}}, format="json")
    assert bad.status_code == 400 and "nope" in str(bad.data["config"])
    typo = clients["ml"].post("/api/v1/projects/api/training-runs/", {"config": {"auto_label": "add"}}, format="json")
    assert typo.status_code == 400 and "did you mean auto_labels?" in typo.data["config"]["auto_label"][0]
    server_paths = ({"hf_model_path": "/etc"}, {"base_checkpoint": "/etc/x"})  # the deployment's, not the caller's
    for config in ({"max_epochs": "many"}, {"word_ngrams": 3}, *server_paths, {"extra": {}}):
        response = clients["ml"].post("/api/v1/projects/api/training-runs/", {"config": config}, format="json")
        assert response.status_code == 400, config
    for config in server_paths:
        response = clients["ml"].post("/api/v1/projects/api/training-runs/", {"config": config}, format="json")
        assert "not over HTTP" in str(response.data["config"][next(iter(config))]), response.data
    for config, field in (({"featurizer": "x"}, "featurizer"), ({"dropout": 5}, "dropout")):  # PRMConfig refuses
        response = clients["ml"].post("/api/v1/projects/api/training-runs/", {"config": config}, format="json")
        assert response.status_code == 400 and field in str(response.data["config"]), response.data

    run = services.run_training(run_id=first.data["id"])
    listed = clients["ml"].get("/api/v1/projects/api/training-runs/").data
    assert [r["id"] for r in listed] == [run.pk]
    row = listed[0]
    assert row["status"] == "succeeded" and row["is_active"] and row["label_count"] > 0
    assert row["duration_seconds"] > 0 and row["finished_at"] and row["created_at"]
    for key in ("auroc_negative", "accuracy", "ece", "first_error_f1"):
        assert 0 <= row["metrics"][key] <= 1
    assert row["config"]["max_epochs"] == 3


@pytest.mark.django_db
def test_activate_rolls_back_to_an_earlier_run(clients, project):
    first, second = _train(project), _train(project)
    response = clients["lead"].post(f"/api/v1/projects/api/training-runs/{first.pk}/activate/")
    assert response.status_code == 200 and response.data["is_active"] and response.data["id"] == first.pk
    services.rescore_after_activation(run_id=first.pk, previous_id=second.pk)  # the job the activation enqueued
    second.refresh_from_db()
    project.refresh_from_db()
    assert not second.is_active and project.current_generation == 3
    # activating the active model again (a retry, a second click) is no new round
    again = clients["lead"].post(f"/api/v1/projects/api/training-runs/{first.pk}/activate/")
    assert again.status_code == 200 and again.data["is_active"]
    project.refresh_from_db()
    assert project.current_generation == 3
    assert set(Solution.objects.filter(project=project, is_open=True).values_list("model_run_id", flat=True)) == {
        first.pk
    }
    failed = TrainingRun.objects.create(project=project, status=JobStatus.FAILED)
    assert clients["lead"].post(f"/api/v1/projects/api/training-runs/{failed.pk}/activate/").status_code == 409
    other = TrainingRun.objects.create(project=Project.objects.get(slug="other"), status=JobStatus.SUCCEEDED)
    assert clients["lead"].post(f"/api/v1/projects/api/training-runs/{other.pk}/activate/").status_code == 404


@pytest.mark.django_db
def test_one_run_is_read_by_id_to_follow_it(clients, project):
    """The run POST answered with is followed at its own address (not found in the list by id)."""
    started = clients["ml"].post("/api/v1/projects/api/training-runs/", {}, format="json")
    assert started.status_code == 202
    url = f"/api/v1/projects/api/training-runs/{started.data['id']}/"
    waiting = clients["ml"].get(url)
    assert waiting.status_code == 200 and waiting.data["status"] == "created" and waiting.data["note"] == ""
    services.run_training(run_id=started.data["id"])
    done = clients["lead"].get(url).json()
    assert done["status"] == "succeeded" and done["is_active"] and done["label_count"] > 0
    assert 0 <= done["metrics"]["accuracy"] <= 1
    other = TrainingRun.objects.create(project=Project.objects.get(slug="other"), status=JobStatus.SUCCEEDED)
    assert clients["lead"].get(f"/api/v1/projects/api/training-runs/{other.pk}/").status_code == 404
    assert clients["annotator"].get(url).status_code == 403
    assert clients["outsider"].get(url).status_code == 404


@pytest.mark.django_db
def test_score_returns_probabilities_and_both_solution_scores(clients, project):
    no_model = clients["ml"].post("/api/v1/prm/score/", SCORE_BODY, format="json")
    assert no_model.status_code == 409
    assert no_model.json()["detail"] == (  # says what to do next, with the endpoint
        "Project api has no active model yet: start a training run "
        "(POST /api/v1/projects/api/training-runs/) and score once it has succeeded."
    )
    run = _train(project)

    response = clients["ml"].post("/api/v1/prm/score/", SCORE_BODY, format="json")

    assert response.status_code == 200, response.data
    body = response.data
    threshold = body["model"].pop("first_error_threshold")
    assert body["model"] == {"training_run": run.pk, "generation": 1}
    # candidates have no graded answer: the run's threshold for ungraded solutions, else its one threshold
    ungraded = (run.metrics["thresholds_by_grade"] or {}).get("ungraded")
    assert threshold == pytest.approx(ungraded if ungraded is not None else run.metrics["threshold"])
    assert [len(s["steps"]) for s in body["solutions"]] == [3, 2]
    for solution in body["solutions"]:
        over = [i for i, step in enumerate(solution["steps"]) if step["p_negative"] > threshold]
        assert solution["first_error"] == (over[0] if over else None)
        p_ok = []
        for step in solution["steps"]:
            probs = (step["p_positive"], step["p_neutral"], step["p_negative"])
            assert all(0 <= p <= 1 for p in probs) and math.isclose(sum(probs), 1, abs_tol=1e-5)
            assert 0 <= step["uncertainty"] <= math.log(3) + 1e-6
            p_ok.append(1 - step["p_negative"])
        assert solution["score_product"] == pytest.approx(math.prod(p_ok), rel=1e-5)
        assert solution["score_min"] == pytest.approx(min(p_ok), rel=1e-5)
        assert solution["score_product"] <= solution["score_min"] + 1e-9


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body",
    [
        {"problem": "x", "solutions": [["a"]]},
        {"project": "api", "problem": "x", "solutions": []},
        {"project": "api", "problem": "x", "solutions": [[]]},
        {"project": "api", "problem": "x", "solutions": "a"},
        {"project": "api", "problem": "x", "solutions": [["a"]] * 65},
        {"project": "api", "problem": "x", "solutions": [[1, 2]]},  # numbers are no step texts
        {"project": "api", "problem": 7, "solutions": [["a"]]},
        {"project": "api", "problem": "x", "solutions": [["a"]], "rank": "min"},  # misspelt rank_by
    ],
)
def test_score_validation(clients, body):
    assert clients["ml"].post("/api/v1/prm/score/", body, format="json").status_code == 400


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("solutions", "errors"),
    [
        ([], {"solutions": ["give at least one candidate solution (a list of step texts)"]}),
        ([["a"]] * 65, {"solutions": ["at most 64 solutions per request, got 65: send them in batches"]}),
        ([["a"], []], {"solutions[1]": ["a solution needs at least one step"]}),
        ([["a"], ["b"] * 201], {"solutions[1]": ["at most 200 steps per solution, got 201"]}),
        ([["a"], ["b", 3]], {"solutions[1][1]": ["Must be a string."]}),
        ([["a", None]], {"solutions[0][1]": ["This field may not be null."]}),
        (["a"], {"solutions[0]": ['Expected a list of items but got type "str".']}),
        # was scored as a step: an empty or blank step text
        ([["a"], ["b", ""]], {"solutions[1][1]": ["a step may not be empty or only whitespace"]}),
        ([["a"], ["b", "c", " \n\t"]], {"solutions[1][2]": ["a step may not be empty or only whitespace"]}),
        ([[""]], {"solutions[0][0]": ["a step may not be empty or only whitespace"]}),
    ],
)
def test_score_errors_name_the_solution_and_step_by_path(clients, solutions, errors):
    """As the submit's errors (`steps[2].rating`): was {"solutions": {"1": {"1": [...]}}} and DRF's
    "Ensure this field has at least 1 elements." for an empty solution."""
    body = {"project": "api", "problem": "x", "solutions": solutions}
    response = clients["ml"].post("/api/v1/prm/score/", body, format="json")
    assert response.status_code == 400 and response.json() == errors


@pytest.mark.django_db
@pytest.mark.parametrize("problem", ["", " \n\t"])
def test_a_blank_problem_is_refused_as_the_import_refuses_it(clients, problem):
    """Was: an empty problem was refused but one of whitespace alone was scored."""
    body = {"project": "api", "problem": problem, "solutions": [["a"]]}
    response = clients["ml"].post("/api/v1/prm/score/", body, format="json")
    assert response.status_code == 400
    assert response.json() == {"problem": ["the problem may not be empty or only whitespace"]}


@pytest.mark.django_db
def test_unknown_project_in_score_is_404(clients):
    assert clients["ml"].post("/api/v1/prm/score/", {**SCORE_BODY, "project": "nope"}, format="json").status_code == 404


@pytest.mark.django_db
def test_training_settings_are_bounded():
    """Was: {"step_hash_dim": 1e12, "ensemble_size": 1e6, "max_epochs": 1e9, "num_threads": 100000}
    answered 202 and was stored; later retrain requests joined that run."""
    project = Project.objects.create(slug="bounded")
    ml = _member(project, "ml-bounds", Role.ML_ENGINEER)
    url = "/api/v1/projects/bounded/training-runs/"
    too_big = {
        "step_hash_dim": 10**12,
        "ensemble_size": 10**6,
        "max_epochs": 10**9,
        "num_threads": 100_000,
        "context_hash_dim": 2**30,
        "hidden_size": 10**6,
        "batch_size": 10**9,
        "lr": 1e9,
        "dropout": 1.5,
        "heldout_fraction": 0.99,
        "word_ngrams": [1, 2, 3, 4, 5, 6, 7, 8, 9],
        "char_ngrams": [50],
        "first_error_threshold": 2.0,
        "featurizer": "pickle",
    }
    for key, value in too_big.items():
        response = ml.post(url, {"config": {key: value}}, format="json")
        assert response.status_code == 400, key
        assert list(response.json()["config"]) == [key], response.json()  # the field is named
    # The body as a whole, with floats as JSON writes them.
    response = ml.post(
        url,
        {"config": {"step_hash_dim": 1e12, "ensemble_size": 1e6, "max_epochs": 1e9, "num_threads": 100000}},
        format="json",
    )
    assert response.status_code == 400 and "config" in response.json()
    # Settings within bounds but too big together: the weight budget names a field too.
    response = ml.post(
        url, {"config": {"step_hash_dim": 2**18, "hidden_size": 1024, "ensemble_size": 16}}, format="json"
    )
    assert response.status_code == 400 and "weights" in str(response.json()["config"])
    assert not TrainingRun.objects.filter(project=project).exists()
    ok = ml.post(url, {"config": {"max_epochs": 5, "ensemble_size": 2, "num_threads": 2}}, format="json")
    assert ok.status_code == 202


@pytest.mark.django_db
def test_ml_engineers_do_not_see_who_requested_a_run():
    """Was: config.extra.requested_by carried the requesting lead's username to ML engineers."""
    project = Project.objects.create(slug="identities")
    lead = _member(project, "lead-with-a-name", Role.LEAD)
    ml = _member(project, "ml-reader", Role.ML_ENGINEER)
    started = lead.post("/api/v1/projects/identities/training-runs/", {"config": {"max_epochs": 2}}, format="json")
    assert started.status_code == 202
    listed = ml.get("/api/v1/projects/identities/training-runs/")
    assert listed.status_code == 200
    assert "lead-with-a-name" not in listed.content.decode()
    assert "requested_by" not in listed.content.decode()
    assert listed.json()[0]["config"]["extra"] == {"trigger": "api"}
    # The lead still finds who asked, in the admin's row.
    assert TrainingRun.objects.get(pk=started.json()["id"]).requested_by == lead.user


def test_score_ranks_candidates_by_product_or_min_and_refuses_reward_here(clients, project):
    _train(project)
    for rank_by, key in (("product", "score_product"), ("min", "score_min")):
        response = clients["ml"].post("/api/v1/prm/score/", {**SCORE_BODY, "rank_by": rank_by}, format="json")
        assert response.status_code == 200, response.data
        values = [s[key] for s in response.data["solutions"]]
        assert response.data["rank_by"] == rank_by
        assert sorted(response.data["ranking"]) == [0, 1]
        assert values[response.data["ranking"][0]] >= values[response.data["ranking"][1]]
    refused = clients["ml"].post("/api/v1/prm/score/", {**SCORE_BODY, "rank_by": "reward"}, format="json")
    assert refused.status_code == 400 and "rank_by" in refused.data


def test_score_ranks_by_a_compare_projects_reward_model(db, media):
    from tests.ml.reward_helpers import planted_compare_project

    compare = planted_compare_project("rm", 60, labeled=50)
    client = member_client(compare, "rm-ml", Role.ML_ENGINEER)
    body = {"project": "rm", "problem": "Problem q0: x", "solutions": [["a b"], ["c d"], ["e"]], "rank_by": "reward"}
    assert client.post("/api/v1/prm/score/", body, format="json").status_code == 409  # no model yet
    run = services.run_training(run_id=services.request_retrain(project=compare, enqueue=False).pk)
    assert run.status == "succeeded", run.error
    response = client.post("/api/v1/prm/score/", body, format="json")
    assert response.status_code == 200, response.data
    rewards = [s["reward"] for s in response.data["solutions"]]
    assert response.data["model"]["training_run"] == run.pk
    assert [rewards[i] for i in response.data["ranking"]] == sorted(rewards, reverse=True)
    wrong_kind = client.post("/api/v1/prm/score/", {**body, "rank_by": "min"}, format="json")
    assert wrong_kind.status_code == 400 and "rank_by" in wrong_kind.data
