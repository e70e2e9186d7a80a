"""The planted projects the model-loop tests share: solutions with a known first error, phase-2
labels made through the real services, and a training config small enough to run in a second."""

from __future__ import annotations

import hashlib
import uuid

from annotate.models import Annotation, Problem, Project, Solution, Step, Strategy
from ml.models import TrainingRun
from ml.prm.synthetic import planted_solutions
from prm800k.labels import label_counters
from prm800k.records import dumps_label_steps

# Small and fast: a retrain on a few hundred labels takes well under a second.
TINY = {
    "step_hash_dim": 2048,
    "context_hash_dim": 512,
    "ensemble_size": 2,
    "hidden_size": 8,
    "max_epochs": 6,
    "patience": 2,
    "min_batches_per_epoch": 4,
    "num_threads": 1,  # the test machine is small and shared
}


def content_hash(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def phase2_label(steps: list[str], first_error: int) -> list[dict]:
    """PRM800K phase-2 label steps: +1 up to the first error, which is -1 and ends the pass."""
    last = len(steps) - 1 if first_error < 0 else first_error
    out = []
    for i in range(last + 1):
        bad = i == first_error
        out.append(
            {
                "completions": [{"text": steps[i], "rating": -1 if bad else 1, "flagged": False}],
                "human_completion": None,
                "chosen_completion": None if bad else 0,
            }
        )
    return out


def planted_project(
    slug: str, *, labeled: int = 80, open_: int = 30, strategy: str = Strategy.CONVINCING_WRONG, seed: int = 0, **kw
) -> Project:
    """A project with `labeled` annotated solutions (PRM800K phase-2 labels from the planted
    pattern: error bigrams make a step -1) and `open_` open ones, answers graded from the data."""
    # no control share unless asked: these tests check each strategy's own order
    kw.setdefault("control_share", 0.0)
    project = Project.objects.create(slug=slug, selection_strategy=strategy, **kw)
    problems: dict[str, Problem] = {}
    for n, (pid, text, steps, first_error, correct) in enumerate(planted_solutions(labeled + open_, seed=seed)):
        if pid not in problems:
            problems[pid] = Problem.objects.create(
                project=project, text=text, ground_truth_answer="42", content_hash=content_hash(slug, pid)
            )
        is_labeled = n < labeled
        solution = Solution.objects.create(
            project=project,
            problem=problems[pid],
            content_hash=content_hash(slug, n),
            n_steps=len(steps),
            final_answer="42" if correct else "41",
            answer_correct=correct,
            is_open=not is_labeled,
            annotation_count=1 if is_labeled else 0,
        )
        Step.objects.bulk_create(Step(solution=solution, index=i, text=t) for i, t in enumerate(steps))
        if is_labeled:
            label = phase2_label(steps, first_error)
            Annotation.objects.create(
                project=project,
                solution=solution,
                labeler_uuid=str(uuid.uuid4()),
                source="import",
                submitted_at="2026-01-01T00:00:00Z",
                finish_reason="found_error" if first_error >= 0 else "solution",
                label_steps=dumps_label_steps(label),
                **label_counters(label),
            )
    return project


def open_queue(project: Project) -> list[Solution]:
    return list(Solution.objects.filter(project=project, is_open=True).order_by("-priority", "id"))


def assert_convincing_wrong_order(project: Project, run: TrainingRun) -> None:
    """Graded-wrong solutions first, by PRM score (highest first); then the graded-correct ones."""
    order = open_queue(project)
    assert order and all(s.model_run_id == run.pk and s.strategy == "convincing_wrong" for s in order)
    assert all(s.generation == project.current_generation and s.verifier_score is not None for s in order)
    wrong = [s for s in order if s.answer_correct is False]
    right = [s for s in order if s.answer_correct is True]
    assert wrong and right
    assert order[: len(wrong)] == wrong, "every wrong-answer solution comes before every correct one"
    scores = [s.verifier_score for s in wrong]
    assert scores == sorted(scores, reverse=True), "most convincing wrong answers first"
    assert min(s.priority for s in wrong) > max(s.priority for s in right)


def add_label(project: Project) -> Annotation:
    """One more annotation (an imported phase-2 label) on an open solution: a label newer than any
    run's watermark."""
    solution = Solution.objects.filter(project=project, is_open=True).order_by("id").first()
    steps = list(Step.objects.filter(solution=solution).order_by("index").values_list("text", flat=True))
    label = phase2_label(steps, -1)
    return Annotation.objects.create(
        project=project,
        solution=solution,
        labeler_uuid=str(uuid.uuid4()),
        source="import",
        submitted_at="2026-01-02T00:00:00Z",
        finish_reason="solution",
        label_steps=dumps_label_steps(label),
        **label_counters(label),
    )
