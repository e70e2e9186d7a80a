"""Serializers of the model-loop endpoints: training runs and PRM scoring."""

from rest_framework import serializers

from core.errors import unknown_name
from labeling_api.serializers_submit import flat_errors
from ml.models import TrainingRun
from ml.prm.config import ConfigError
from ml.selectors import run_note
from ml.services import CONFIG_KEYS, validate_config
from ml.services.config import REWARD_ONLY_KEYS

# Not over HTTP: which model directory or base checkpoint the server reads is the deployment's
# choice (settings / command).
API_CONFIG_KEYS = CONFIG_KEYS - {"hf_model_path", "base_checkpoint"}
# REWARD_ONLY_KEYS (a compare project's reward model settings) are checked by the service, which knows
# the project's task kind.
MAX_SOLUTIONS = 64
MAX_STEPS = 200
MAX_TEXT = 20_000


class TrainingRunSerializer(serializers.ModelSerializer):
    project = serializers.CharField(source="project.slug", read_only=True)
    duration_seconds = serializers.SerializerMethodField(help_text="Wall time of the run (training and scoring).")
    note = serializers.SerializerMethodField(
        help_text="Why a succeeded run is not the active model: it finished after a lead activated another "
        "run by hand (a rollback), which stays active. Empty otherwise."
    )

    class Meta:
        model = TrainingRun
        fields = [
            "id",
            "project",
            "status",
            "is_active",
            "label_count",
            "metrics",
            "config",
            "duration_seconds",
            "error",
            "note",
            "created_at",
            "started_at",
            "finished_at",
            "activated_at",
        ]
        read_only_fields = fields

    def get_note(self, run: TrainingRun) -> str:
        return run_note(run.metrics)

    def get_duration_seconds(self, run: TrainingRun) -> float | None:
        if run.started_at is None or run.finished_at is None:
            return None
        return round((run.finished_at - run.started_at).total_seconds(), 3)


# A body key the serializer does not declare is refused with the nearest name, not ignored:
# `{"conf": {...}}` trained on the defaults, `"rank": "min"` scored without a ranking. (A comment, not
# a docstring: the OpenAPI schema would show it on every request body built on it.)
class KnownFieldsOnly(serializers.Serializer):
    def to_internal_value(self, data):
        if isinstance(data, dict):
            found = unknown_name(data, set(self.fields), kind="field")
            if found:
                raise serializers.ValidationError({found[0]: [found[1]]})
        return super().to_internal_value(data)


class TrainingRunRequestSerializer(KnownFieldsOnly):
    config = serializers.DictField(
        required=False,
        default=dict,
        help_text=(
            "Training settings to override for this run (PRMConfig fields, e.g. max_epochs, ensemble_size; "
            "a compare project's reward model: RewardConfig fields, e.g. features, prm_project)."
        ),
    )

    def validate_config(self, value: dict) -> dict:
        server_paths = sorted(set(value) & (CONFIG_KEYS - API_CONFIG_KEYS))
        if server_paths:  # {"config": {"base_checkpoint": ["..."]}}
            message = "a server path: set by the deployment (ML_TRAINING_CONFIG) or the shell, not over HTTP"
            raise serializers.ValidationError({key: [message] for key in server_paths})
        unknown = set(value) - API_CONFIG_KEYS - REWARD_ONLY_KEYS
        if unknown:  # {"config": {"auto_label": ["unknown training setting (did you mean auto_labels?); ..."]}}
            name, message = unknown_name(value, API_CONFIG_KEYS | REWARD_ONLY_KEYS, kind="training setting")
            raise serializers.ValidationError({name: [message]})
        try:
            prm_part = validate_config({k: v for k, v in value.items() if k not in REWARD_ONLY_KEYS})
            return {**value, **prm_part}
        except ConfigError as exc:  # {"config": {"max_epochs": ["must be ..."]}}
            raise serializers.ValidationError({exc.field: [exc.message]}) from None
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None


class TrainingRunRequestedSerializer(TrainingRunSerializer):
    merged = serializers.BooleanField(
        read_only=True,
        help_text=(
            "True when the request joined a run that was already waiting (it trains on every label so far, with "
            "the settings this request asked for, if any), or the running run when no label has arrived since it "
            "started and no other settings were asked for, or the active model's run (status succeeded) when "
            "no run waits or runs, none was asked for with settings, and no label has arrived since it started."
        ),
    )

    class Meta(TrainingRunSerializer.Meta):
        fields = [*TrainingRunSerializer.Meta.fields, "merged"]
        read_only_fields = fields


class StrictText(serializers.CharField):
    """Text as JSON sends it: a number is not a step (DRF's CharField would score 1 as "1")."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            raise serializers.ValidationError("Must be a string.")
        return super().to_internal_value(data)


class StrictInteger(serializers.IntegerField):
    """An integer as JSON sends it: DRF's IntegerField took "8" (and 8.0) for 8, against the rule that
    the API's parsers are strict about JSON types (a script's string would pass here and not elsewhere)."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            raise serializers.ValidationError("Must be an integer: a JSON number, not a string or true/false.")
        return super().to_internal_value(data)


class StrictNumber(serializers.FloatField):
    """A number as JSON sends it (an integer or a decimal), never a string or a boolean."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int | float):
            raise serializers.ValidationError("Must be a JSON number, not a string or true/false.")
        return super().to_internal_value(data)


EMPTY_STEP = "a step may not be empty or only whitespace"
EMPTY_PROBLEM = "the problem may not be empty or only whitespace"


class NonBlankText(StrictText):
    """Text kept as sent (no trimming) that may not be empty or only whitespace, refused with `empty`.
    A candidate's step (the PRM scored "" as if it were one; refused by its path, `solutions[1][2]`, as
    the import refuses one, `steps[2]`) and the problem (the import refuses a blank one too)."""

    def __init__(self, *, empty: str, **kwargs):
        self.empty = empty
        kwargs.setdefault("error_messages", {})["blank"] = empty
        super().__init__(allow_blank=False, trim_whitespace=False, **kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not value.strip():  # whitespace alone: DRF's blank check sees only "" when not trimming
            raise serializers.ValidationError(self.empty)
        return value


class CountedList(serializers.ListField):
    """A list whose bounds are said in words, with the count sent, and checked before its items are
    parsed (DRF said "Ensure this field has at least 1 elements." after parsing every item).
    min_length and max_length stay for the OpenAPI schema."""

    def __init__(self, *, too_few: str, too_many: str, **kwargs):
        super().__init__(**kwargs)
        self.too_few, self.too_many = too_few, too_many

    def to_internal_value(self, data):
        if isinstance(data, list):
            if self.min_length is not None and len(data) < self.min_length:
                raise serializers.ValidationError(self.too_few)
            if self.max_length is not None and len(data) > self.max_length:
                raise serializers.ValidationError(self.too_many.format(most=self.max_length, got=len(data)))
        return super().to_internal_value(data)


# Errors by path, as the submit's: {"solutions[1][2]": ["Must be a string."]} (is_valid below).
class ScoreRequestSerializer(KnownFieldsOnly):
    project = serializers.SlugField(help_text="Project slug: its active PRM scores the steps.")
    problem = NonBlankText(empty=EMPTY_PROBLEM, max_length=MAX_TEXT)
    solutions = CountedList(
        child=CountedList(
            child=NonBlankText(empty=EMPTY_STEP, max_length=MAX_TEXT),
            min_length=1,
            max_length=MAX_STEPS,
            too_few="a solution needs at least one step",
            too_many="at most {most} steps per solution, got {got}",
        ),
        min_length=1,
        max_length=MAX_SOLUTIONS,
        too_few="give at least one candidate solution (a list of step texts)",
        too_many="at most {most} solutions per request, got {got}: send them in batches",
        help_text="Candidate solutions, each a list of step texts in order.",
    )
    rank_by = serializers.ChoiceField(
        ["product", "min", "reward"],
        required=False,
        help_text="Best-of-N: also return `ranking`, the solutions' indices best first, by the PRM's product or "
        "minimum (a steps project's active PRM) or by the reward model (a compare project's active Bradley-Terry "
        "model, which gives `reward` per solution instead of step scores).",
    )

    def is_valid(self, *, raise_exception: bool = False) -> bool:
        valid = super().is_valid()
        if not valid and raise_exception:  # {"solutions": {1: {2: [...]}}} -> {"solutions[1][2]": [...]}
            raise serializers.ValidationError(flat_errors(self.errors))
        return valid


class StepScoreSerializer(serializers.Serializer):
    p_positive = serializers.FloatField(help_text="P(+1)")
    p_neutral = serializers.FloatField(help_text="P(0)")
    p_negative = serializers.FloatField(help_text="P(-1)")
    uncertainty = serializers.FloatField(help_text="Entropy of the step's distribution, nats.")


class SolutionScoreSerializer(serializers.Serializer):
    steps = StepScoreSerializer(many=True, required=False, help_text="PRM only.")
    score_product = serializers.FloatField(
        required=False, help_text="PRM: product over steps of P(not -1) (PRM800K's solution score)."
    )
    score_min = serializers.FloatField(required=False, help_text="PRM: minimum over steps of P(not -1).")
    first_error = serializers.IntegerField(
        required=False,
        allow_null=True,
        help_text="PRM: the predicted first wrong step (0-based index: the first step whose P(-1) passes "
        "`model.first_error_threshold`), null when no step does.",
    )
    reward = serializers.FloatField(required=False, help_text="Reward model (rank_by=reward): higher is better.")


class ScoreModelSerializer(serializers.Serializer):
    training_run = serializers.IntegerField()
    generation = serializers.IntegerField()
    first_error_threshold = serializers.FloatField(
        required=False,
        help_text="PRM: the P(-1) threshold `first_error` is read with, chosen by the run for solutions "
        "without a graded answer (candidates sent here have none).",
    )


class ScoreResponseSerializer(serializers.Serializer):
    model = ScoreModelSerializer()
    solutions = SolutionScoreSerializer(many=True)
    rank_by = serializers.CharField(required=False, help_text="How `ranking` was made, when asked for.")
    ranking = serializers.ListField(
        child=serializers.IntegerField(), required=False, help_text="Indices into `solutions`, best first."
    )
