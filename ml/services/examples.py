"""Training examples from a project's labels: every rated completion of its annotations, and
optionally its automatic (Monte Carlo) labels for a warm start."""

from __future__ import annotations

import json

from annotate.models import Annotation, Problem, Project, Solution, Step
from ml.prm.examples import StepExample, examples_from_record
from prm800k.kinds import UNRATED_STEP_TYPES


def build_examples(
    *, project: Project, up_to_annotation_id: int | None = None, auto_labels: str = "off"
) -> list[StepExample]:
    """Every rated completion of every annotation is an example (as PRM800K trains its PRM).

    The stored `label_steps` carry the completions' texts, so a record needs only the problem
    text; problem ids group examples for the train / held-out split. auto_labels="add" adds the
    automatic labels of solutions no annotation covers (`auto_label_examples`, train only).
    """
    qs = Annotation.objects.filter(project=project)
    if up_to_annotation_id is not None:
        qs = qs.filter(id__lte=up_to_annotation_id)
    rows = qs.order_by("id").values_list(
        "id", "solution__problem_id", "solution__problem__text", "label_steps", "solution__answer_correct"
    )
    out: list[StepExample] = []
    texts: dict[int, str] = {}  # one string per problem, shared by its examples
    for annotation_id, problem_id, problem_text, label_steps, answer_correct in rows.iterator(chunk_size=2000):
        problem_text = texts.setdefault(problem_id, problem_text)
        record = {"question": {"problem": problem_text}, "label": {"steps": json.loads(label_steps)}}
        out += examples_from_record(
            record, solution_id=f"a{annotation_id}", problem_id=f"p{problem_id}", answer_correct=answer_correct
        )
    if auto_labels == "add":
        labeled = set(qs.values_list("solution_id", flat=True))
        out += auto_label_examples(project=project, skip_solution_ids=labeled)
    return out


def auto_label_examples(*, project: Project, skip_solution_ids: set[int] = frozenset()) -> list[StepExample]:
    """Automatic labels (autolabel app) as training-only examples: each automatically labeled
    solution's steps up to and including its first `-` (the span a PRM800K labeler rates), from
    rollouts where the solution has them, else from imported Math-Shepherd tags. This is what a
    warm start trains on before people have labeled anything (PRMConfig.auto_labels="add")."""
    from autolabel.selectors import auto_labels_by_solution, preferred

    ids = list(
        Solution.objects.filter(project=project, auto_labels__isnull=False)
        .exclude(pk__in=skip_solution_ids)
        .values_list("id", flat=True)
        .distinct()
    )
    labels = auto_labels_by_solution(ids)
    problems: dict[int, int] = {}
    graded: dict[int, bool | None] = {}
    for solution_id, problem_id, answer_correct in Solution.objects.filter(pk__in=list(labels)).values_list(
        "id", "problem_id", "answer_correct"
    ):
        problems[solution_id], graded[solution_id] = problem_id, answer_correct
    texts = dict(Problem.objects.filter(pk__in=set(problems.values())).values_list("id", "text"))
    steps: dict[int, list[str]] = {i: [] for i in labels}
    unrated: set[tuple[int, int]] = set()  # (solution, index) of trace observations people do not rate
    for solution_id, index, text, step_type in (
        Step.objects.filter(solution_id__in=list(labels))
        .order_by("solution_id", "index")
        .values_list("solution_id", "index", "text", "step_type")
    ):
        steps[solution_id].append(text)
        if step_type in UNRATED_STEP_TYPES and not project.rate_observations:
            unrated.add((solution_id, index))
    out: list[StepExample] = []
    for solution_id, sources in labels.items():
        previous: list[str] = []
        for index, (text, label) in enumerate(zip(steps[solution_id], preferred(sources), strict=True)):
            if (solution_id, index) in unrated:
                # context, not an example, as in people's labels (a rollout labels it all the same);
                # a first `-` here falls on the step after it, which is `-` too
                previous.append(text)
                continue
            out.append(
                StepExample(
                    problem=texts[problems[solution_id]],
                    previous=tuple(previous),
                    step=text,
                    target=label,
                    solution_id=f"auto{solution_id}",
                    problem_id=f"p{problems[solution_id]}",
                    step_index=index,
                    train_only=True,
                    answer_correct=graded[solution_id],
                )
            )
            if label < 0:
                break
            previous.append(text)
    return out
