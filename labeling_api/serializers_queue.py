"""Serializers of the work-queue endpoints: the task an annotator is served and the answers.

A step task's submit body is parsed by labeling_api.serializers_submit.
"""

from rest_framework import serializers

from annotate import queue_sql
from annotate.models import Assignment, ContentKind, LabelingMode, ScreeningStatus
from prm800k.kinds import is_rated


class TaskProblemSerializer(serializers.Serializer):
    text = serializers.CharField(help_text="Markdown + LaTeX; untrusted, render safely.")
    ground_truth_answer = serializers.CharField(
        allow_null=True, required=False, help_text="Present only when the project shows the ground truth."
    )


class TaskStepSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    text = serializers.CharField()
    type = serializers.CharField(required=False, help_text="Traces only: thought, tool_call, observation or answer.")
    rated = serializers.BooleanField(
        help_text="Whether the annotator rates this step (trace observations are shown unrated unless the "
        "project rates them); an unrated step is sent with rating null."
    )


class TaskCandidateSerializer(serializers.Serializer):
    solution_id = serializers.IntegerField()
    final_answer = serializers.CharField(allow_null=True)
    steps = TaskStepSerializer(many=True)


class TaskSerializer(serializers.Serializer):
    """One claimed solution, as the workspace shows it (gold questions look like any other); in a
    compare project one pair: `kind` compare and `candidates` A then B, instead of mode and steps."""

    id = serializers.IntegerField(help_text="The assignment id.")
    assignment_id = serializers.IntegerField(help_text="Same as id.")
    project = serializers.CharField(help_text="Project slug.")
    mode = serializers.CharField(
        required=False, help_text=f"Labeling mode: {', '.join(LabelingMode.values)} (step tasks only)."
    )
    lease_expires_at = serializers.DateTimeField()
    lease_seconds = serializers.IntegerField(help_text="Lease length; heartbeat well before it runs out.")
    generation = serializers.IntegerField(allow_null=True)
    problem = TaskProblemSerializer()
    kind = serializers.ChoiceField(
        choices=[*ContentKind.values, "compare"], help_text="math, code or trace; compare for a pair of solutions."
    )
    language = serializers.CharField(required=False, help_text="Code only: the language, e.g. python.")
    tests = serializers.CharField(
        required=False, allow_null=True, help_text="Code only: the specification's examples (plain text)."
    )
    critique_required = serializers.BooleanField(
        required=False, help_text="Every step rated -1 needs a written critique (step tasks only)."
    )
    steps = TaskStepSerializer(many=True, required=False, help_text="Step tasks only.")
    candidates = TaskCandidateSerializer(
        many=True,
        required=False,
        help_text="Compare tasks only: the two solutions, A then B, in the order drawn for this assignment.",
    )
    draft = serializers.JSONField(allow_null=True, help_text="Work in progress saved with PUT .../draft/.")


def _steps_of(solution, project) -> list[dict]:
    steps = []
    for index, text, step_type in queue_sql.steps(solution_id=solution.pk):
        step = {"index": index, "text": text, "rated": is_rated(step_type, rate_observations=project.rate_observations)}
        if step_type:
            step["type"] = step_type
        steps.append(step)
    return steps


def compare_task_data(assignment: Assignment) -> dict:
    """A pair: the candidates in the order drawn for this assignment (A first)."""
    comparison = assignment.comparison
    project = assignment.project
    problem = comparison.problem
    problem_data = {"text": problem.text}
    if project.show_ground_truth:
        problem_data["ground_truth_answer"] = problem.ground_truth_answer
    sides = [comparison.solution_a, comparison.solution_b]
    if assignment.swapped:
        sides.reverse()
    return {
        "id": assignment.pk,
        "assignment_id": assignment.pk,
        "project": project.slug,
        "kind": "compare",
        "lease_expires_at": assignment.lease_expires_at,
        "lease_seconds": project.lease_minutes * 60,
        "generation": assignment.generation,
        "problem": problem_data,
        # code pairs: the language and the specification's examples, as a code task carries them
        **({"language": problem.language, "tests": problem.tests} if problem.kind == ContentKind.CODE else {}),
        "candidates": [
            {"solution_id": side.pk, "final_answer": side.final_answer, "steps": _steps_of(side, project)}
            for side in sides
        ],
        "draft": assignment.draft,
    }


def task_data(assignment: Assignment) -> dict:
    if assignment.comparison_id is not None:
        return compare_task_data(assignment)
    solution = assignment.solution
    problem = solution.problem
    project = assignment.project
    problem_data = {"text": problem.text}
    if project.show_ground_truth:
        problem_data["ground_truth_answer"] = problem.ground_truth_answer
    steps = _steps_of(solution, project)
    kind = {"kind": problem.kind}
    if problem.kind == ContentKind.CODE:
        kind.update(language=problem.language, tests=problem.tests)
    return {
        "id": assignment.pk,
        "assignment_id": assignment.pk,
        "project": project.slug,
        "mode": project.labeling_mode,
        "lease_expires_at": assignment.lease_expires_at,
        "lease_seconds": project.lease_minutes * 60,
        "generation": assignment.generation,
        "problem": problem_data,
        **kind,
        "critique_required": project.critique_required,
        "steps": steps,
        "draft": assignment.draft,
    }


class SubmitOutSerializer(serializers.Serializer):
    annotation_id = serializers.IntegerField(required=False, help_text="Step tasks.")
    preference_id = serializers.IntegerField(required=False, help_text="Compare tasks.")
    assignment_id = serializers.IntegerField()
    created = serializers.BooleanField(help_text="False when this repeats an earlier submit with the same key.")
    next = TaskSerializer(allow_null=True, help_text="The next task, already claimed (null when none).")
    detail = serializers.CharField(required=False, help_text="Why there is no next task (e.g. failed screening).")


class LeaseSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    lease_expires_at = serializers.DateTimeField()


class SkipOutSerializer(LeaseSerializer):
    next = TaskSerializer(allow_null=True, help_text="The next task, already claimed (null when none).")


class DraftOutSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    saved_at = serializers.DateTimeField()


class ScreeningStatusSerializer(serializers.Serializer):
    required = serializers.IntegerField(help_text="Screening answers to submit before regular work (0: none).")
    submitted = serializers.IntegerField()
    status = serializers.ChoiceField(choices=["not_required", *ScreeningStatus.values])
    threshold = serializers.FloatField()
    agreement = serializers.FloatField(allow_null=True)


class RefusedSubmitSerializer(serializers.Serializer):
    assignment_id = serializers.IntegerField()
    solution_id = serializers.IntegerField()
    refused_at = serializers.DateTimeField()
    problem = serializers.CharField(help_text="The start of the problem text, to recognise the task.")
    submit = serializers.JSONField(help_text="The submit body as it was sent (ratings, reason, time).")
    message = serializers.CharField()


class MyProgressSerializer(serializers.Serializer):
    project = serializers.CharField()
    roles = serializers.ListField(child=serializers.CharField())
    date = serializers.DateField(help_text="Today (server time zone).")
    solutions_today = serializers.IntegerField()
    steps_today = serializers.IntegerField(
        help_text="Steps rated today (a trace's observations shown, not rated, left out)."
    )
    time_today_ms = serializers.IntegerField(help_text="Active time today (a compare project's: on its pairs).")
    solutions_total = serializers.IntegerField()
    pairs_today = serializers.IntegerField(help_text="Compare projects: pairs answered today (0 elsewhere).")
    pairs_total = serializers.IntegerField(help_text="Compare projects: pairs answered in all (0 elsewhere).")
    active_assignment_id = serializers.IntegerField(allow_null=True)
    screening = ScreeningStatusSerializer()
    refused_submits = RefusedSubmitSerializer(
        many=True,
        help_text=(
            "Submits of the last days that arrived after the lease expired and another annotator had taken the "
            "solution: not recorded as labels, kept here so the work is not lost. `PUT /assignments/{id}/draft/` "
            "with null dismisses one."
        ),
    )


class DetailSerializer(serializers.Serializer):
    detail = serializers.CharField()
    code = serializers.CharField(
        required=False,
        help_text="A machine-readable reason where a client acts on it: `assignment_finished` (409) when the "
        "assignment was submitted or skipped already, so the client moves on to its next task.",
    )
