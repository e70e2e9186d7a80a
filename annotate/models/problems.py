"""What gets labeled: problems, their model-written solutions (with their queue state) and steps."""

from django.db import models

from annotate.models.choices import ContentKind
from annotate.models.projects import Project
from prm800k.splits import math500_flag, text_sha256


class Problem(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="problems")
    text = models.TextField(help_text="Markdown + LaTeX.")
    ground_truth_answer = models.TextField(null=True, blank=True)
    ground_truth_solution = models.TextField(null=True, blank=True)
    subject = models.CharField(max_length=100, blank=True)
    level = models.CharField(max_length=20, blank=True)
    source_id = models.CharField(max_length=200, blank=True)
    # sha256 of (text, answer, solution): identity for dedupe on import.
    content_hash = models.CharField(max_length=64)
    # sha256 of the text alone: groups a problem across phases for splits by problem.
    text_hash = models.CharField(max_length=64, db_index=True)
    # A MATH-500 problem: always in the test split, as in PRM800K.
    is_math500 = models.BooleanField(default=False)
    # Beyond math (prm800k.kinds): code solutions in `language` checked against `tests`, or agent traces.
    kind = models.CharField(max_length=8, choices=ContentKind.choices, default=ContentKind.MATH)
    language = models.CharField(max_length=32, blank=True, help_text="Code: the solutions' language.")
    tests = models.TextField(null=True, blank=True, help_text="Code: the specification's examples, shown as is.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "content_hash"], name="uniq_problem_content")]

    def __str__(self) -> str:
        return self.text[:80]

    def save(self, *args, **kwargs) -> None:
        if not self.text_hash:
            self.text_hash = text_sha256(self.text)
        self.is_math500 = math500_flag(self.text_hash)
        super().save(*args, **kwargs)


class Solution(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="solutions")
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="solutions")
    final_answer = models.TextField(null=True, blank=True)
    # Graded against the problem's ground truth on import: True, False, or None when ungradable.
    answer_correct = models.BooleanField(null=True)
    # False for phase-1 records, whose steps are the labeler's own trajectory, not pre-generated.
    is_pregenerated = models.BooleanField(default=True)
    is_quality_control = models.BooleanField(default=False)
    is_screening = models.BooleanField(default=False)
    is_gold = models.BooleanField(default=False, help_text="Has trusted labels; served at the QC rate.")
    content_hash = models.CharField(max_length=64)
    n_steps = models.PositiveIntegerField(default=0)
    # Queue state: the claim query serves the highest priority first among open solutions.
    priority = models.FloatField(default=0.0)
    is_open = models.BooleanField(default=True, help_text="Still needs labels.")
    annotation_count = models.PositiveIntegerField(default=0)
    # Labels wanted beyond the project's overlap: a lead reopened it for relabeling at capacity.
    extra_labels = models.PositiveIntegerField(default=0)
    # Provenance: the round, strategy, model and score that put it in the queue.
    generation = models.IntegerField(null=True, blank=True)
    strategy = models.CharField(max_length=32, blank=True)
    # The training run (ml.TrainingRun id) whose scores set the priority; a plain id, so the labeling
    # domain does not depend on the model registry, and a deleted run leaves its number behind.
    model_run_id = models.BigIntegerField(null=True, blank=True)
    verifier_score = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "content_hash"], name="uniq_solution_content")]
        indexes = [
            models.Index(
                fields=["project", "-priority", "id"],
                name="solution_queue_idx",
                condition=models.Q(is_open=True),
            ),
            # Gold and screening pools are small; these keep their claim paths off the big table.
            models.Index(
                fields=["project", "-priority", "id"], name="solution_gold_idx", condition=models.Q(is_gold=True)
            ),
            models.Index(
                fields=["project", "-priority", "id"],
                name="solution_screening_idx",
                condition=models.Q(is_screening=True),
            ),
            # Dashboard (annotate.selectors.stats): progress by generation/strategy as an index-only scan,
            # and the most recent overlapping solutions for agreement.
            models.Index(
                fields=["project"],
                name="solution_stats_idx",
                include=["generation", "strategy", "is_gold", "is_screening", "is_open", "annotation_count"]
                + ["answer_correct", "n_steps"],
            ),
            models.Index(
                fields=["project", "-id"], name="solution_overlap_idx", condition=models.Q(annotation_count__gte=2)
            ),
        ]

    def __str__(self) -> str:
        return f"solution {self.pk} of problem {self.problem_id}"


class Step(models.Model):
    """One model-written step. Immutable once created, so features can be cached per step."""

    # No separate index: uniq_step_index (solution, index) serves lookups by solution.
    solution = models.ForeignKey(Solution, on_delete=models.CASCADE, related_name="steps", db_index=False)
    index = models.PositiveIntegerField()
    text = models.TextField()
    # A trace step's type (thought, tool_call, observation, answer); empty for math and code.
    step_type = models.CharField(max_length=16, blank=True, default="")

    class Meta:
        ordering = ["solution_id", "index"]
        constraints = [models.UniqueConstraint(fields=["solution", "index"], name="uniq_step_index")]

    def __str__(self) -> str:
        return f"step {self.index} of solution {self.solution_id}"
