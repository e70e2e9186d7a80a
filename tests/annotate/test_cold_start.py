"""Before any model: model-based strategies serve graded-wrong answers first (random within a tier,
never file order), the default `answer_stratified` uses its own interleaved order from the first
claim, `random` stays random, and a control share is routed at random ranks."""

from __future__ import annotations

import json
import random

import pytest

from annotate.models import Project, QueueOrigin, Role, Solution, Strategy
from annotate.queue_order import cold_start_queue, route_controls
from annotate.services import imports, queue
from tests.factories import make_user


def _write(tmp_path, n: int = 60):
    """n plain solutions of one problem in file order right, wrong, ungradable (no answer), repeated."""
    lines = []
    for i in range(n):
        kind = i % 3
        steps = [f"Step one of {i}.", f"# Answer\n\n{12 if kind == 0 else 7}"]
        row = {"problem": f"What is $3 \\times 4$? ({i})", "ground_truth_answer": "12", "steps": steps}
        if kind == 2:
            row = {"problem": row["problem"], "ground_truth_answer": "12", "steps": [f"Thinking {i}."]}
        lines.append(json.dumps(row))
    path = tmp_path / "cold.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _queue(project):
    return list(Solution.objects.filter(project=project, is_open=True).order_by("-priority", "id"))


@pytest.mark.django_db
def test_before_any_model_graded_wrong_answers_come_first_in_random_order(tmp_path):
    project = Project.objects.create(slug="cold", selection_strategy=Strategy.VALUE, control_share=0.0)
    imports.import_file(project=project, path=_write(tmp_path))
    order = _queue(project)
    assert {s.strategy for s in order} == {QueueOrigin.COLD_START}
    tiers = [0 if s.answer_correct is False else 1 if s.answer_correct is None else 2 for s in order]
    assert tiers == sorted(tiers), "wrong, then ungraded, then right"
    assert tiers.count(0) == 20 and tiers.count(2) == 20
    wrong_ids = [s.pk for s in order if s.answer_correct is False]
    assert wrong_ids != sorted(wrong_ids), "within a tier the order is random, not file order"
    # the first claim is a graded-wrong solution
    annotator = make_user(project=project, role=Role.ANNOTATOR)
    first = queue.claim_next(project=project, user=annotator)
    assert first.solution.answer_correct is False and first.strategy == QueueOrigin.COLD_START


@pytest.mark.django_db
def test_the_default_answer_stratified_order_holds_from_the_first_claim(tmp_path):
    """Wrong answers take half the expected step labels of every head of the queue (a wrong pass
    stops half-way: (steps + 1) / 2), in random order within each stratum, before any model."""
    project = Project.objects.create(slug="colds", control_share=0.0)
    assert project.selection_strategy == Strategy.ANSWER_STRATIFIED  # the default
    imports.import_file(project=project, path=_write(tmp_path, 90))
    order = _queue(project)
    # its own order from the import on, and the queue says whose (not "cold start")
    assert {s.strategy for s in order} == {Strategy.ANSWER_STRATIFIED}
    cost = [(s.n_steps + 1) / 2 if s.answer_correct is False else s.n_steps for s in order]
    for head in (4, 10, 30):
        wrong = sum(c for c, s in zip(cost[:head], order, strict=False) if s.answer_correct is False)
        assert abs(wrong - 0.5 * sum(cost[:head])) <= max(cost), (head, wrong, sum(cost[:head]))
    assert order[0].answer_correct is False or order[1].answer_correct is False
    kinds = {s.answer_correct for s in order[:6]}
    assert False in kinds and len(kinds) > 1, "interleaved, not wrong-first"
    wrong_ids = [s.pk for s in order if s.answer_correct is False]
    assert wrong_ids != sorted(wrong_ids), "within a stratum the order is random, not file order"


@pytest.mark.django_db
def test_random_strategy_ignores_the_grades_and_routes_no_control(tmp_path):
    project = Project.objects.create(slug="coldr", selection_strategy=Strategy.RANDOM, control_share=0.3)
    imports.import_file(project=project, path=_write(tmp_path, 90))
    order = _queue(project)
    assert {s.strategy for s in order} == {Strategy.RANDOM}
    head = order[:30]
    assert 0 < sum(s.answer_correct is False for s in head) < 30


@pytest.mark.django_db
def test_a_control_share_is_routed_at_random_ranks(tmp_path):
    project = Project.objects.create(slug="coldc", control_share=0.3)
    imports.import_file(project=project, path=_write(tmp_path, 120))
    order = _queue(project)
    controls = [i for i, s in enumerate(order) if s.strategy == QueueOrigin.CONTROL]
    assert 18 <= len(controls) <= 54, len(controls)  # Binomial(120, 0.3)
    # controls hold ranks across the whole queue, not only the tiers of wrong answers
    assert min(controls) < 40 and max(controls) > 80


def test_route_controls_keeps_the_share_and_draws_ranks_from_the_queue():
    rng = random.Random(1)
    pri = [float(i) for i in range(10_000)]
    out, ctrl = route_controls(pri, 0.1, rng)
    assert 900 < sum(ctrl) < 1100
    # a control's priority is one of the queue's own values, at a uniform rank
    vals = [p for p, c in zip(out, ctrl, strict=True) if c]
    assert set(vals) <= set(pri)
    assert 0.4 < sum(v < 5000 for v in vals) / len(vals) < 0.6
    assert route_controls(pri, 0.0, rng) == (pri, [False] * len(pri))


def test_cold_start_queue_tiers():
    q = cold_start_queue([True, False, None], strategy=Strategy.VALUE, control_share=0.0, rng=random.Random(0))
    (p_right, _), (p_wrong, _), (p_none, _) = q
    assert p_wrong > p_none > p_right
