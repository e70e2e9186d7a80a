"""Automatic labels as a PRM warm start: training examples, a run with no human label, held-out purity."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import override_settings

from annotate.models import Annotation, AnnotationSource, Project, Solution
from ml import selectors, services
from ml.models import TrainingRun
from ml.prm.examples import StepExample
from ml.prm.train import split_by_problem
from prm800k.labels import label_counters
from prm800k.records import dumps_label_steps
from tests.factories import gold_label_steps

pytestmark = pytest.mark.django_db

TAG = "ки"


def _ms_line(i: int, marks: str) -> str:
    steps = [f"Step {k + 1}: part {k} of problem {i} {TAG}" for k in range(len(marks))]
    text = f"Problem {i}: how many? " + "\n".join(steps)
    label = text
    for mark in marks:
        label = label.replace(TAG, mark, 1)
    return json.dumps({"input": text, "label": label, "task": "GSM8K"})


def _project(tmp_path: Path) -> Project:
    marks = ["+++-", "+-+-", "++++", "-+++", "++-+", "+++", "+-", "--"]
    source = tmp_path / "ms.jsonl"
    source.write_text("".join(_ms_line(i, m) + "\n" for i, m in enumerate(marks)))
    call_command("import_prm800k", str(source), project="warm", no_progress=True, stdout=io.StringIO())
    return Project.objects.get(slug="warm")


def test_auto_label_examples_stop_at_the_first_minus_and_skip_human_labeled_solutions(tmp_path: Path) -> None:
    project = _project(tmp_path)
    assert services.build_examples(project=project) == []  # off by default: automatic labels are not human
    examples = services.build_examples(project=project, auto_labels="add")
    first = [e for e in examples if e.problem.startswith("Problem 0:")]
    assert [(e.step_index, e.target) for e in first] == [(0, 1), (1, 1), (2, 1), (3, -1)]
    assert first[2].previous == ("part 0 of problem 0", "part 1 of problem 0")
    assert all(e.train_only for e in examples)
    assert [(e.step_index, e.target) for e in examples if e.problem.startswith("Problem 1:")] == [(0, 1), (1, -1)]

    # Once a person labels a solution, its human labels replace its automatic ones.
    solution = Solution.objects.get(problem__text__startswith="Problem 0:")
    steps = gold_label_steps([1, -1])
    Annotation.objects.create(
        project=project,
        solution=solution,
        labeler_uuid="h",
        source=AnnotationSource.IMPORT,
        submitted_at="2026-01-01T00:00:00Z",
        finish_reason="found_error",
        label_steps=dumps_label_steps(steps),
        **label_counters(steps),
    )
    mixed = services.build_examples(project=project, auto_labels="add")
    zero = [e for e in mixed if e.problem.startswith("Problem 0:")]
    assert [(e.target, e.train_only) for e in zero] == [(1, False), (-1, False)]
    with pytest.raises(ValueError, match="auto_labels: must be one of off, add"):
        services.validate_config({"auto_labels": "all"})


def test_a_run_warm_starts_on_automatic_labels_before_any_human_label(tmp_path: Path) -> None:
    project = _project(tmp_path)
    out = io.StringIO()
    call_command("retrain", project="warm", wait=True, config='{"auto_labels": "add", "max_epochs": 2}', stdout=out)
    run = TrainingRun.objects.get(project=project)
    assert run.status == "succeeded" and run.is_active, run.error
    assert run.label_count == 0  # no human label yet
    assert run.config["auto_labels"] == "add"
    assert run.metrics["scored_solutions"] == 8
    # the dashboard says why the run has no held-out metrics: not "N problems: too few" (of 4)
    problems = run.metrics["n_problems"]
    assert problems >= 4 and run.metrics["n_problems_holdable"] == 0
    why = selectors.model_summary(project=project)["curve_empty"]
    assert why["reason"] == "too_few_problems"
    assert f"trained on {problems} problems, {problems} of them with automatic labels only" in why["message"]
    assert "(this run had them on 0)" in why["message"]


def test_held_out_problems_come_from_human_examples_only() -> None:
    def ex(problem: str, train_only: bool) -> StepExample:
        return StepExample(problem=problem, previous=(), step="s", target=1, problem_id=problem, train_only=train_only)

    human = [ex(f"h{i}", False) for i in range(20)]
    auto = [ex(f"h{i}", True) for i in range(20)] + [ex(f"a{i}", True) for i in range(20)]
    tr_h, he_h = split_by_problem(human, 0.25, seed=3)
    tr, he = split_by_problem(human + auto, 0.25, seed=3)
    assert he == he_h  # the same held-out examples with or without automatic ones
    held = {human[i].problem_id for i in he}
    train = [(human + auto)[i] for i in tr]
    assert not any(e.problem_id in held for e in train)  # automatic labels of held-out problems are left out
    assert sum(e.train_only for e in train) == 20 + 20 - len(held)


def test_disagreement_first_serves_where_the_prm_contradicts_automatic_labels(tmp_path: Path) -> None:
    import numpy as np

    from autolabel.models import AutolabelSettings
    from autolabel.selectors import auto_labels_by_solution, preferred
    from ml.models import StepScore
    from ml.prm.selection import auto_disagreement

    project = _project(tmp_path)
    project.control_share = 0.0  # no random control share: the whole queue follows the order under test
    project.save(update_fields=["control_share"])
    AutolabelSettings.objects.create(project=project, disagreement_first=True)
    with override_settings(ML_STORE_STEP_SCORES=True):  # the per-step record shows what the PRM said
        call_command(
            "retrain", project="warm", wait=True, config='{"auto_labels": "add", "max_epochs": 1}', stdout=io.StringIO()
        )
    run = TrainingRun.objects.get(project=project, is_active=True)
    solutions = list(Solution.objects.filter(project=project).order_by("-priority", "id"))
    labels = auto_labels_by_solution([s.pk for s in solutions])
    disagreement = {}
    for solution in solutions:
        p_negative = list(
            StepScore.objects.filter(training_run=run, step__solution=solution)
            .order_by("step__index")
            .values_list("p_negative", flat=True)
        )
        disagreement[solution.pk] = auto_disagreement(np.array(p_negative), preferred(labels[solution.pk]))
    boosted = [s.pk for s in solutions if disagreement[s.pk] >= 0.5]
    assert boosted and len(boosted) < len(solutions)  # the tiny model contradicts some labels, not all
    # The queue serves the contradicted ones first, most contradicted first.
    assert [s.pk for s in solutions[: len(boosted)]] == sorted(boosted, key=lambda pk: -disagreement[pk])
    assert all(s.strategy == run.project.selection_strategy for s in solutions)


def test_disagreement_is_measured_up_to_the_first_automatic_minus() -> None:
    import math

    import numpy as np

    from ml.prm.selection import auto_disagreement, disagreement_first

    assert auto_disagreement([0.1, 0.2, 0.9, 0.0], [1, 1, -1, -1]) == pytest.approx(0.2)
    assert auto_disagreement([0.1, 0.8, 0.1], [1, 1, 1]) == pytest.approx(0.8)
    assert auto_disagreement([0.1, 0.3, 0.1], [1, -1, -1]) == pytest.approx(0.7)  # after the first `-`: ignored
    assert math.isnan(auto_disagreement([0.5], None))
    order = disagreement_first(np.array([3.0, 2.0, 1.0, 0.5]), np.array([np.nan, 0.9, 0.2, 0.6]))
    assert list(np.argsort(-order)) == [1, 3, 0, 2]


def test_a_run_without_human_labels_names_the_automatic_ones_it_could_train_on(tmp_path: Path) -> None:
    project = _project(tmp_path)
    with override_settings(MEDIA_ROOT=tmp_path):
        run = services.run_training(run_id=services.request_retrain(project=project, enqueue=False).pk)
    assert run.status == "failed"
    assert run.error.startswith("Nothing to train on yet")
    assert 'It has automatic labels: a run with the setting auto_labels "add" trains on them' in run.error


def test_the_data_pages_search_choices_are_the_jobs() -> None:
    """annotate does not import autolabel, so the form spells SearchMode's values itself."""
    from annotate.forms import AutolabelForm
    from autolabel.models import SearchMode

    assert [value for value, _ in AutolabelForm().fields["search"].choices] == list(SearchMode.values)


def test_the_data_pages_number_bounds_are_the_jobs() -> None:
    """The form's bounds are the browser's (min/max on each box): they must be what the job accepts
    (autolabel.services.validate_options), or the page lets a value through the API refuses.
    Was: Temperature had no maximum (the job's is 2)."""
    from annotate.forms import AutolabelForm
    from autolabel.services import LIMITS

    fields = AutolabelForm().fields
    for name, (low, high) in {**LIMITS, "temperature": (0, 2)}.items():
        attrs = fields[name].widget.attrs
        assert (float(attrs["min"]), float(attrs["max"])) == (low, high), name
