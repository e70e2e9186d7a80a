"""The shape of `GET /api/v1/projects/{slug}/stats/`, for OpenAPI (annotate.selectors.stats builds it)."""

from rest_framework import serializers

F = serializers.FloatField
I = serializers.IntegerField  # noqa: E741
S = serializers.CharField


def _nullable(field_class, **kwargs):
    return field_class(allow_null=True, **kwargs)


class StatsProjectSerializer(serializers.Serializer):
    slug = S()
    name = S()
    overlap = I()
    labeling_mode = S()
    selection_strategy = S()
    screening_threshold = F()
    current_generation = I()
    retrain_every = I()


class GenerationProgressSerializer(serializers.Serializer):
    generation = _nullable(I, help_text="Active-learning round; null for solutions with none (e.g. imported).")
    solutions = I()
    labeled = I(help_text="Solutions with at least one label.")
    open = I(help_text="Solutions still needing labels.")
    labels = I()
    imported_labels = I(
        help_text="Labels that came in an import file (no annotator), under the generation the file gave them."
    )
    steps_labeled = I()


class PaceSerializer(serializers.Serializer):
    window_hours = I(help_text="The window the pace is measured over: the last 7 days (168).")
    active_hours = F(
        help_text="Hours of active labeling in the window: each label's total_time_ms up to its submit, merged "
        "across annotators (time in which several labeled at once counts once; breaks not at all)."
    )
    labels = I(help_text="Queue labels submitted in the window with a recorded time.")
    labels_per_hour = F(help_text="labels / active_hours: the team's pace while it labels.")
    min_labels = I(help_text="Labels the window needs for an ETA; with fewer, eta_hours is null.")


class PairProgressSerializer(serializers.Serializer):
    pairs_total = I(help_text="Ordinary pairs (not gold).")
    pairs_answered = I(help_text="Pairs with at least one preference.")
    pairs_open = I(help_text="Pairs still needing preferences.")
    pairs_complete = I()
    preferences = I(help_text="Every preference, answers on gold pairs included.")
    preferences_remaining = I(help_text="Preferences still needed by open pairs (overlap minus answers so far).")
    pace = PaceSerializer(help_text="The pace in queue preferences (its `labels` are preferences, gold pairs not).")
    eta_hours = _nullable(
        F, help_text="preferences_remaining / preferences per hour of labeling; null with too few lately."
    )
    eta_at = _nullable(serializers.DateTimeField, help_text="Now + eta_hours.")


class ProgressSerializer(serializers.Serializer):
    solutions_total = I(help_text="Ordinary solutions (not gold, not screening).")
    solutions_labeled = I()
    solutions_open = I()
    solutions_complete = I()
    labels_remaining = I(help_text="Labels still needed by open solutions (overlap minus labels so far).")
    steps_total = I(help_text="Steps of all ordinary solutions, open or not.")
    steps_open = I(help_text="Steps of the open solutions: what is still queued.")
    steps_labeled = I()
    labels = I()
    labels_imported = I(help_text="Labels that came in an import file rather than from the queue (no annotator).")
    by_generation = GenerationProgressSerializer(many=True)
    pace = PaceSerializer()
    eta_hours = _nullable(
        F, help_text="labels_remaining / labels_per_hour: hours of labeling left; null with too few labels lately."
    )
    eta_at = _nullable(serializers.DateTimeField, help_text="Now + eta_hours, if the team labeled without a break.")
    pairs = PairProgressSerializer(
        required=False,
        help_text="Compare projects only: their queue serves pairs, so progress and ETA count pairs and preferences.",
    )


class AnnotatorSeriesSerializer(serializers.Serializer):
    annotator = S(help_text="Username (leads may see names; exports never carry them).")
    labels = serializers.ListField(child=I())


class SeriesSerializer(serializers.Serializer):
    buckets = serializers.ListField(child=serializers.DateTimeField(), help_text="Bucket starts (UTC).")
    labels = serializers.ListField(child=I())
    steps = serializers.ListField(child=I())
    by_annotator = AnnotatorSeriesSerializer(many=True)


class ThroughputSerializer(serializers.Serializer):
    hourly = SeriesSerializer(help_text="The last 48 hours.")
    daily = SeriesSerializer(help_text="The last 30 days.")
    labels_last_24h = I()
    median_seconds_per_solution = _nullable(F)
    median_seconds_per_step = _nullable(F)


class RatingsSerializer(serializers.Serializer):
    positive = I()
    neutral = I()
    negative = I()
    unrated = I()


class FinishReasonsSerializer(serializers.Serializer):
    solution = I()
    found_error = I()
    give_up = I()
    bad_problem = I()


class WrongAnswerSerializer(serializers.Serializer):
    labeled_solutions = I()
    wrong = I()
    correct = I()
    ungraded = I()
    share = _nullable(F, help_text="Wrong final answers among labeled solutions.")


class LabelsSerializer(serializers.Serializer):
    ratings = RatingsSerializer(help_text="Main-line step ratings.")
    steps = I()
    flagged = I()
    flag_rate = _nullable(F)
    alternatives = I()
    finish_reasons = FinishReasonsSerializer()
    wrong_answer = WrongAnswerSerializer()


class AnnotatorRowSerializer(serializers.Serializer):
    annotator = S()
    preferences = _nullable(I, help_text="Compare projects: the preferences submitted; null in a step project.")
    labels = I()
    steps = I()
    positive_rate = _nullable(F)
    neutral_rate = _nullable(F)
    negative_rate = _nullable(F)
    flag_rate = _nullable(F)
    median_seconds_per_solution = _nullable(F)
    median_seconds_per_step = _nullable(F)
    last_label_at = _nullable(serializers.DateTimeField)
    gold_accuracy = _nullable(F, help_text="Step agreement with gold on gold and screening questions.")
    gold_first_error_rate = _nullable(F)
    gold_solutions = I()
    screening_status = _nullable(
        S,
        help_text="pending, passed or failed; not_required when the project asks for no screening and the annotator "
        "has no decided outcome; null when the annotator has no status yet.",
    )
    screening_agreement = _nullable(F)
    below_threshold = serializers.BooleanField()


class AgreementSerializer(serializers.Serializer):
    overlap = I()
    solutions_compared = I()
    sample_limit = I(help_text="Most recent overlapping solutions read.")
    sampled = serializers.BooleanField()
    alpha = _nullable(F, help_text="Krippendorff's alpha, ordinal metric, over main-line step ratings.")
    pairs = I()
    first_error_agreement = _nullable(F)


class QualitySerializer(serializers.Serializer):
    threshold = F()
    flag_min_gold = I(help_text="Gold answers an annotator gives before gold accuracy alone flags the row.")
    screening_required = I(help_text="Screening answers an annotator gives before regular work (0: none).")
    screening_questions = I(
        help_text="The project's screening solutions (counted only when screening is required); fewer than "
        "screening_required leaves annotators who have not passed with nothing to label."
    )
    annotators = AnnotatorRowSerializer(many=True)
    agreement = AgreementSerializer()


def _interval(**kwargs):
    return serializers.ListField(child=F(), min_length=2, max_length=2, required=False, **kwargs)


class HeldoutSerializer(serializers.Serializer):
    auroc_negative = F(required=False)
    accuracy = F(required=False)
    first_error_f1 = F(required=False)
    ece = F(required=False)
    n_steps = I(required=False, help_text="Held-out steps the metrics were measured on.")
    n_solutions = I(required=False, help_text="Held-out solutions (first-error F1 is over these).")
    accuracy_ci = _interval(help_text="95% Wilson interval of the step accuracy.")
    first_error_f1_ci = _interval(help_text="95% bootstrap interval of first-error F1 (solutions resampled).")
    too_small = serializers.BooleanField(
        required=False, help_text="Under 50 held-out steps or 10 solutions: the scores say little."
    )
    grade_only_f1 = F(
        required=False,
        help_text="First-error F1 of a reader with no PRM on the same held-out solutions: one constant first "
        "error per graded answer (wrong, right, ungraded), fitted on the training solutions. The PRM's "
        "first_error_f1 above it is what the model reads beyond the grade. Absent where no training solution "
        "is graded.",
    )
    pairwise_accuracy = F(
        required=False, help_text="Compare projects: share of held-out pairs the reward model ranks as annotators did."
    )
    pairwise_accuracy_ci = _interval(help_text="95% Wilson interval of the pairwise accuracy.")
    n_pairs = I(required=False, help_text="Compare projects: decided held-out pairs (ties left out).")


class RunSerializer(serializers.Serializer):
    id = I()
    status = S()
    label_count = I()
    heldout = HeldoutSerializer()
    is_active = serializers.BooleanField()
    activated_at = _nullable(serializers.DateTimeField)
    created_at = _nullable(serializers.DateTimeField)
    started_at = _nullable(serializers.DateTimeField)
    finished_at = _nullable(serializers.DateTimeField)
    error = S(allow_blank=True)
    note = S(allow_blank=True, help_text="Why a succeeded run is not active: it finished after a lead's rollback.")


class CurvePointSerializer(HeldoutSerializer):
    run = I()
    label_count = I()


class CurveEmptySerializer(serializers.Serializer):
    reason = serializers.ChoiceField(
        choices=["no_runs", "training", "failed", "heldout_off", "too_few_problems"],
        help_text="Why no run has held-out metrics: no run yet, the first is training, none succeeded, the "
        "latest succeeded run's heldout_fraction is 0, or its labels covered too few problems to hold any out.",
    )
    message = S(help_text="The reason and what to do, in a sentence for the lead.")


class ModelSerializer(serializers.Serializer):
    active_run = RunSerializer(allow_null=True)
    latest_run = RunSerializer(allow_null=True)
    in_progress = serializers.BooleanField()
    runs = RunSerializer(many=True)
    curve_metrics = serializers.ListField(child=S())
    learning_curve = CurvePointSerializer(many=True, help_text="Held-out metrics of succeeded runs by label count.")
    curve_empty = CurveEmptySerializer(
        allow_null=True, help_text="Why the learning curve is empty; null when it is not."
    )


class StrategyCountSerializer(serializers.Serializer):
    strategy = S()
    open = I()


class SavingsSerializer(serializers.Serializer):
    status = S(
        help_text="`ok`, or `not_enough_data` below min_control / min_strategy labelings or with no first "
        "error in the control yet."
    )
    measure = S()
    strategy = S(help_text="The project's current strategy: only labels it served count as the strategy's.")
    control_share = F()
    max_control_share = F(help_text="The highest control share a project takes: at it, only more solutions help.")
    n_control = I()
    n_strategy = I()
    n_other = I(
        help_text="Labelings served by an earlier strategy or a model-driven strategy's cold start: not counted."
    )
    control_capacity = I(
        help_text="Control labelings the project can give at all: those done plus the control share of the "
        "labelings still to come; below min_control the estimate cannot come without a larger control share or "
        "more solutions."
    )
    labels_control = I()
    labels_strategy = I()
    errors_control = I()
    errors_strategy = I()
    min_control = I()
    min_strategy = I()
    labels_saved = F(
        allow_null=True,
        help_text="Step labels random selection would have needed on top, to find as "
        "many first errors (annotate.services.savings).",
    )
    labels_saved_ci = serializers.ListField(child=F(), allow_null=True, help_text="95% bootstrap interval.")
    yield_ratio = F(allow_null=True, help_text="First errors per step label, strategy over control.")
    yield_ratio_ci = serializers.ListField(child=F(), allow_null=True)


class QueueSerializer(serializers.Serializer):
    selection_strategy = S()
    open_by_strategy = StrategyCountSerializer(many=True)
    savings = SavingsSerializer(help_text="Live estimate of the step labels saved against a random control share.")


class AutoLabelCountsSerializer(serializers.Serializer):
    tp = I(help_text="Automatic `-` on a human's first-error step.")
    fp = I(help_text="Automatic `-` on a step the human rated +1.")
    fn = I(help_text="Automatic `+` on a human's first-error step.")


class AutoLabelBudgetSerializer(serializers.Serializer):
    completions_budget = I()
    completions_used = I()
    disagreement_first = serializers.BooleanField(help_text="The queue serves contradicted automatic labels first.")


class AutoLabelJobSummarySerializer(serializers.Serializer):
    id = I()
    status = S()
    model = S()
    solutions_done = I()
    solutions_total = I()
    completions_used = I()
    error = S()


class AutoLabelStatsSerializer(serializers.Serializer):
    solutions_with_auto_labels = I()
    solutions_complete = I(
        help_text="Solutions with an automatic label on every step: the ones `format=math_shepherd&labels=auto` "
        "exports (a stopped job leaves others partly labeled)."
    )
    by_source = serializers.DictField(child=I(), help_text="Solutions per source: math_shepherd (imported), rollout.")
    negative_share = _nullable(F, help_text="Share of automatic step labels that are `-`.")
    pairs_compared = I(help_text="Human annotations of automatically labeled solutions compared (latest 5,000).")
    precision_negative = _nullable(F, help_text="tp / (tp + fp), against human first errors.")
    recall_negative = _nullable(F, help_text="tp / (tp + fn), against human first errors.")
    first_error_agreement = _nullable(F, help_text="Share of pairs with the same first `-` step (or none in both).")
    counts = AutoLabelCountsSerializer()
    budget = AutoLabelBudgetSerializer(allow_null=True)
    completions_used = I(help_text="Completions spent by this project's autolabel jobs.")
    latest_job = AutoLabelJobSummarySerializer(allow_null=True)


class ProjectStatsSerializer(serializers.Serializer):
    project = StatsProjectSerializer()
    generated_at = serializers.DateTimeField()
    snapshot_at = serializers.DateTimeField(
        help_text="Label counts are live; median times are as of this time (a cached snapshot, rebuilt every 5 "
        "minutes)."
    )
    solutions_at = serializers.DateTimeField(
        help_text="Solution counts (progress, queue) are as of this time: now up to 20,000 solutions, else the "
        "snapshot's."
    )
    progress = ProgressSerializer()
    throughput = ThroughputSerializer()
    labels = LabelsSerializer()
    quality = QualitySerializer()
    model = ModelSerializer()
    queue = QueueSerializer()
    auto_labels = AutoLabelStatsSerializer(
        help_text="Automatic step labels (autolabel.selectors.agreement): coverage by source, the latest job, the "
        "completion budget, and agreement with human labels."
    )


class ShareSerializer(serializers.Serializer):
    share = _nullable(F, help_text="k / n; null when n is 0.")
    n = I()
    ci95 = serializers.ListField(
        child=F(), min_length=2, max_length=2, allow_null=True, help_text="95% Wilson interval."
    )


class CompareStatsSerializer(serializers.Serializer):
    """`GET /api/v1/projects/{slug}/compare-stats/` (annotate.selectors.compare builds it)."""

    preferences = I()
    ties = I()
    pairs_answered = I()
    position_bias_left = ShareSerializer(help_text="Of decided answers, the share that chose the left candidate.")
    agreement = ShareSerializer(help_text="Of annotator pairs on the same pair, the share giving the same answer.")
    agreement_with_grading = ShareSerializer(
        help_text="Where one candidate is graded right and one wrong: the share of decided answers for the right one."
    )
    gold_accuracy = ShareSerializer(help_text="Of answers on gold pairs, the share equal to the lead's answer.")


class DisagreeingLabelSerializer(serializers.Serializer):
    annotator = S(help_text="Username (leads only see this endpoint); `imported` for a label without one.")
    first_error_step = _nullable(I, help_text="1-based step the label marks as the first error; null: none.")
    finish_reason = S()
    submitted_at = _nullable(serializers.DateTimeField)


class DisagreementSerializer(serializers.Serializer):
    solution = I(help_text="Solution id (the admin's solution and annotation pages take it).")
    problem = S(help_text="The problem's text, cut to 140 characters.")
    n_steps = I()
    answer_correct = serializers.BooleanField(allow_null=True, help_text="The graded final answer; null: not graded.")
    labels = DisagreeingLabelSerializer(many=True, help_text="Oldest first.")


class DisagreementsSerializer(serializers.Serializer):
    """`GET /api/v1/projects/{slug}/disagreements/` (annotate.selectors.stats.disagreements)."""

    solutions_compared = I(help_text="Sampled solutions with two labels or more (the agreement figure's).")
    disagreeing = I(help_text="Of those, the ones whose labels put the first error at different steps.")
    sample_limit = I()
    shown = DisagreementSerializer(many=True, help_text="The disagreeing solutions most recently labeled, up to 50.")
