"""Serializers of the export and import endpoints (documentation of their shapes in OpenAPI)."""

from collections.abc import Mapping
from typing import Any

from django.urls import reverse
from rest_framework import serializers

from annotate.models import Export, ImportJob
from annotate.services import exports
from core.models import JobStatus

FORMAT_HELP = (
    "prm800k: PRM800K records (DESIGN.md contract); trl: TRL stepwise-supervision rows; math_shepherd: "
    "Math-Shepherd lines {input, label, task} (see `labels`); critique: one line per labeled solution "
    '{"prompt", "steps", "verdicts": [{"index", "rating", "critique"}]} for generative verifiers (the critique '
    "null where none was written; kind and language added for code and traces); preference: TRL preference rows "
    '{"prompt", "chosen", "rejected", "margin"} from a compare project\'s pairs (steps joined by newlines; margin '
    "from the strength 1-3; `since` takes a cursor of an earlier preference export; the step-label filters "
    "`generation`, `finish_reason`, `min_agreement` and `screening` are refused)."
)


def _params(data) -> dict:
    """A query string (every value of a repeated key) or a JSON object, as a plain dict."""
    if hasattr(data, "lists"):
        return dict(data.lists())
    if not isinstance(data, Mapping):
        raise serializers.ValidationError(
            {"non_field_errors": [f"Invalid data. Expected a dictionary, but got {type(data).__name__}."]}
        )
    return dict(data)


class ExportOptionsSerializer(serializers.Serializer):
    """Options shared by the streamed export (query string) and export jobs (JSON body).

    The fields document the options (OpenAPI); parsing is the one validator,
    annotate.services.exports.parse_options, so the query string and the JSON body accept and
    refuse the same values. Needs the project in the context (cursors are per project);
    validated_data is {"options": ExportOptions, ...}.
    """

    def to_internal_value(self, data) -> dict:
        return {"options": exports.parse_options(project=self.context["project"], params=_params(data))}

    format = serializers.ChoiceField(
        ["prm800k", "trl", "math_shepherd", "critique", "preference"], default="prm800k", help_text=FORMAT_HELP
    )
    ties = serializers.ChoiceField(
        ["exclude", "include"],
        default="exclude",
        help_text="preference: ties are left out unless `include` (then chosen = the pair's first solution, margin 0).",
    )
    labels = serializers.ChoiceField(
        ["human", "auto"],
        default="human",
        help_text="math_shepherd: human labels (before the first -1 `+`, it and later steps `-`), or automatic "
        "labels (imported Math-Shepherd lines byte for byte, then rollout-labeled solutions). trl: `auto` gives one "
        "row per automatically labeled solution, every step with its label.",
    )
    generation = serializers.CharField(
        required=False, help_text="Active-learning round(s), comma-separated integers (-1 = screening)."
    )
    since = serializers.CharField(required=False, help_text="Cursor from an earlier export: only newer labels.")
    labeler = serializers.CharField(
        required=False, help_text="A labeler's pseudonymous UUID (anything else is refused with 400)."
    )
    qc = serializers.ChoiceField(["include", "exclude", "only"], default="include", help_text="Gold / QC questions.")
    screening = serializers.ChoiceField(
        ["include", "exclude", "only"], default="include", help_text="Initial screening questions."
    )
    finish_reason = serializers.CharField(
        required=False, help_text="Comma-separated: solution, found_error, give_up, bad_problem."
    )
    split = serializers.ChoiceField(
        ["train", "test"], required=False, help_text="By problem: MATH-500 problems are test (as in PRM800K)."
    )
    min_agreement = serializers.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        help_text="Where overlap > 1: keep solutions whose annotators agree on at least this share of steps.",
    )
    neutral = serializers.ChoiceField(
        ["positive", "negative", "drop"],
        default="positive",
        help_text="trl and math_shepherd (human): neutral counts as correct (PRM800K scoring), incorrect (TRL "
        "converter), or ends the row. A value other than `positive` with another format is refused (400).",
    )
    alternatives = serializers.ChoiceField(
        ["branch", "drop"],
        default="branch",
        help_text="trl: each rated alternative becomes its own row ending at that step, or is dropped (`drop` "
        "with another format is refused, 400).",
    )
    include_history = serializers.BooleanField(
        default=False,
        help_text="prm800k: add a top-level `history` key with each record's earlier versions (who, when, why).",
    )


# `{"qc": null}` was taken as the option left out, so a script that sends null for a value it has
# not set (`"labeler": null` with no labeler found) got the default, the whole project, without a
# word. Refused as the stream refuses `labeler=` (is empty), naming the option; no option documents
# null as meaning anything.
NULL_VALUE = "is null: give a value, or leave the option out for its default"
NULL_ITEM = "holds a null: give values only, or leave the option out for its default"


def refuse_nulls(params: Mapping[str, Any]) -> None:
    """ExportOptionError for the first option whose JSON value is null, an empty list (`"generation": []`
    filtered nothing, so the whole project came back) or a list holding a null."""
    for name, value in params.items():
        if value is None:
            raise exports.ExportOptionError(name, NULL_VALUE)
        if value == []:
            raise exports.ExportOptionError(name, exports.EMPTY_VALUE)
        if isinstance(value, list) and any(item is None for item in value):
            raise exports.ExportOptionError(name, NULL_ITEM)


class ExportJobRequestSerializer(ExportOptionsSerializer):
    gzip = serializers.BooleanField(default=False, help_text="Compress the file with gzip.")

    def to_internal_value(self, data) -> dict:
        params = _params(data)
        if "trailer" in params:
            raise exports.ExportOptionError(
                "trailer",
                "a job's file is whole or not written at all (the job fails); trailer applies to the stream "
                "(GET /api/v1/projects/{slug}/export/)",
            )
        exports.refuse_unknown(params, exports.OPTION_NAMES | {"gzip"})
        refuse_nulls(params)  # a JSON body's null (a query string has none); after a misspelt name's error
        gzip_output = exports.parse_flag(exports.single_value(params, "gzip"), "gzip")
        params.pop("gzip", None)
        return {**super().to_internal_value(params), "gzip": gzip_output}


class StreamRequestSerializer(ExportOptionsSerializer):
    trailer = serializers.BooleanField(
        default=False,
        help_text='Add a last line `{"steplabel_export_end": {"lines": N, "format": ..., "cursor": ...}}` after '
        "the N lines of the export, so a client can tell a complete stream from a cut one (default false: the "
        "body is exactly the JSONL).",
    )

    def to_internal_value(self, data) -> dict:
        params = _params(data)
        if "gzip" in params:
            raise exports.ExportOptionError(
                "gzip", "the stream is plain JSONL; gzip applies to export jobs (POST /api/v1/projects/{slug}/exports/)"
            )
        exports.refuse_unknown(params, exports.OPTION_NAMES | {"trailer"})
        trailer = exports.parse_flag(exports.single_value(params, "trailer"), "trailer")
        params.pop("trailer", None)
        return {**super().to_internal_value(params), "trailer": trailer}


class DeletionsRequestSerializer(serializers.Serializer):
    """`since` and `format` of `export/deletions/`, read by the export options' own validator (a cursor
    of another project or of the other sequence is refused the same way)."""

    since = serializers.CharField(
        required=False,
        help_text="The cursor you pulled labels with last (the `since` of your latest pull, not the cursor it "
        "returned): deletions made after it. Without it, every deletion.",
    )
    format = serializers.ChoiceField(
        ["prm800k", "trl", "math_shepherd", "critique", "preference"],
        default="prm800k",
        help_text="`preference` for a compare project's deleted preferences; any other: deleted step labels.",
    )

    def to_internal_value(self, data) -> dict:
        params = _params(data)
        # An export's own option (a pipeline that sends its export's params here too) is not unknown:
        # say that deletions are not filtered, rather than "unknown export option" for `split`.
        for name in sorted(params):
            if name in (exports.OPTION_NAMES | {"trailer", "gzip"}) - DELETIONS_OPTIONS:
                raise exports.ExportOptionError(name, DELETIONS_UNFILTERED)
        exports.refuse_unknown(params, DELETIONS_OPTIONS)
        return {"options": exports.parse_options(project=self.context["project"], params=params)}


DELETIONS_OPTIONS = frozenset({"since", "format"})
DELETIONS_UNFILTERED = (
    "applies to the export, not to its deletions: every label deleted since the cursor is listed, whatever the "
    "export's filters and row options; give only since (and format=preference for a compare project)"
)


class DeletedLabelSerializer(serializers.Serializer):
    labeler = serializers.CharField(source="labeler_uuid", help_text="The record's `labeler`, as exported.")
    timestamp = serializers.CharField(
        source="timestamp_text", help_text="The record's `timestamp`, as exported: with `labeler`, its key."
    )
    deleted_at = serializers.DateTimeField()


class DeletionsSerializer(serializers.Serializer):
    deletions = DeletedLabelSerializer(many=True, help_text="Oldest deletion first.")


class ExportJobSerializer(serializers.ModelSerializer):
    download_url = serializers.SerializerMethodField(help_text="Set when the export succeeded; only for you.")
    cursor = serializers.SerializerMethodField(help_text="Pass as `since` to get only what is newer next time.")
    project = serializers.CharField(source="project.slug")
    filters = serializers.SerializerMethodField(
        help_text="The options the job was asked with; `since` is the cursor given, or null for everything."
    )

    class Meta:
        model = Export
        fields = [
            "id",
            "project",
            "status",
            "format",
            "filters",
            "record_count",
            "byte_size",
            "error",
            "created_at",
            "started_at",
            "finished_at",
            "cursor",
            "download_url",
        ]

    def get_download_url(self, export: Export) -> str | None:
        if export.status != JobStatus.SUCCEEDED:
            return None
        request = self.context.get("request")
        path = reverse("export-download", kwargs={"id": export.pk})
        return request.build_absolute_uri(path) if request else path

    def get_cursor(self, export: Export) -> str | None:
        return export.filters.get("cursor") or None  # a job that reads no sequence (labels=auto) has none

    def get_filters(self, export: Export) -> dict[str, Any]:
        # Stored are the decoded position and the job's resulting cursor (shown as `cursor`): give
        # back the cursor as it was asked for, as the position means nothing outside the server.
        shown = {key: value for key, value in export.filters.items() if key != "cursor"}
        if shown.get("since"):
            preferences = shown.get("format") == "preference"
            shown["since"] = exports.encode_cursor(project=export.project, seq=shown["since"], preferences=preferences)
        elif "since" in shown:
            shown["since"] = None
        return shown


class ImportRequestSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="PRM800K JSONL (phase 1 or 2) or plain JSONL lines; one file per import.")

    def validate(self, attrs: dict) -> dict:
        # A form with two `file` parts would otherwise import the last one and drop the other unsaid.
        sent = len(self.initial_data.getlist("file")) if hasattr(self.initial_data, "getlist") else 1
        if sent > 1:
            raise serializers.ValidationError({"file": [f"one file per import: {sent} were sent; send each alone"]})
        return attrs


class LineErrorSerializer(serializers.Serializer):
    line = serializers.IntegerField()
    field = serializers.CharField()
    message = serializers.CharField()


class ImportJobSerializer(serializers.ModelSerializer):
    errors = LineErrorSerializer(many=True, help_text="When it failed: the first 20 bad lines; nothing was imported.")
    progress = serializers.SerializerMethodField(help_text="0..1 while running (null when unknown, e.g. gzip).")
    url = serializers.SerializerMethodField(help_text="Poll this until `status` is succeeded or failed.")

    class Meta:
        model = ImportJob
        fields = [
            "id",
            "status",
            "filename",
            "file_size",
            "progress",
            "counters",
            "errors",
            "created_at",
            "started_at",
            "finished_at",
            "url",
        ]

    def get_progress(self, job: ImportJob) -> float | None:
        from annotate.services.imports import progress

        return progress(job)

    def get_url(self, job: ImportJob) -> str:
        # absolute, as an export job's download_url: a script polls both the same way
        request = self.context.get("request")
        path = reverse("project-import-detail", kwargs={"slug": job.project.slug, "id": job.pk})
        return request.build_absolute_uri(path) if request else path
