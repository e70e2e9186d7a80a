"""The choices of the labeling domain's fields (roles, modes, strategies, kinds, statuses)."""

from django.db import models


class Role(models.TextChoices):
    ANNOTATOR = "annotator", "Annotator"
    LEAD = "lead", "Lead"
    ML_ENGINEER = "ml_engineer", "ML engineer"


class LabelingMode(models.TextChoices):
    PHASE2 = "phase2", "Phase 2: stop at the first negative step"
    PHASE1 = "phase1", "Phase 1: alternatives at any step, human step when none is positive"


class Strategy(models.TextChoices):
    VALUE = "value", "Value per label"
    UNCERTAINTY = "uncertainty", "Uncertainty"
    CONVINCING_WRONG = "convincing_wrong", "Convincing wrong answer"
    RANDOM = "random", "Random"
    MIX = "mix", "Mix (PRM800K's)"
    # The default: half the expected step labels on graded-wrong answers, random within each stratum
    # (ml/prm/selection.py); why it is the default: README, "Which strategy, and how sure we are".
    # Labels short enough for the settings page's select; what each does is in its help text.
    ANSWER_STRATIFIED = "answer_stratified", "Answer-stratified (default)"


class TaskKind(models.TextChoices):
    STEPS = "steps", "Step labels"
    # Two solutions of one problem side by side: which is better (annotate/models/compare.py).
    COMPARE = "compare", "Compare two solutions"


class ContentKind(models.TextChoices):
    # What a solution is (prm800k.kinds): how its steps render and which are rated.
    MATH = "math", "Math (Markdown + LaTeX)"
    CODE = "code", "Code"
    TRACE = "trace", "Agent trace"


class QueueOrigin(models.TextChoices):
    """What put a solution in the queue when no selection strategy did (Solution.strategy holds a
    Strategy value after a model has scored it)."""

    COLD_START = "cold_start", "Cold start (before any model: ordered by the graded answers)"
    CONTROL = "control", "Control (random, to measure the strategy against)"


class FinishReason(models.TextChoices):
    SOLUTION = "solution", "Solution"
    FOUND_ERROR = "found_error", "Found error"
    GIVE_UP = "give_up", "Give up"
    BAD_PROBLEM = "bad_problem", "Bad problem"


class AssignmentStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    SUBMITTED = "submitted", "Submitted"
    SKIPPED = "skipped", "Skipped"
    EXPIRED = "expired", "Expired"


class AnnotationSource(models.TextChoices):
    IMPORT = "import", "Imported"
    APP = "app", "Labeled in the app"


class ScreeningStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    PASSED = "passed", "Passed"
    FAILED = "failed", "Failed"
