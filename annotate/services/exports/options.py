"""Export options: what may be asked for, the one validator of them, and signed cursors."""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any

from django.core import signing

from annotate.models import Project, TaskKind
from core.errors import Invalid, unknown_name
from prm800k.schema import FINISH_REASONS, MAX_GENERATION

# critique: prompt, steps, verdicts (prm800k.kinds); preference: TRL rows from a compare project's pairs
FORMATS = ("prm800k", "trl", "math_shepherd", "critique", "preference")
LABEL_SOURCES = ("human", "auto")  # math_shepherd: human annotations, or automatic labels (autolabel app)
TRISTATE = ("include", "exclude", "only")
# Options that shape only some formats' rows, with their defaults and the formats they shape: asking
# for anything but the default with another format is refused (it would be ignored without a word).
FORMAT_ONLY = {
    "neutral": ("positive", ("trl", "math_shepherd")),  # math_shepherd: its human labels (labels=human)
    "alternatives": ("branch", ("trl",)),
}
STEP_FORMATS = tuple(f for f in FORMATS if f != "preference")
# Filters on step labels: a compare project's preferences have no generation, finish reason,
# agreement or screening, so asking for one with format=preference is refused, not ignored.
STEP_ONLY = {"generation": [], "finish_reason": [], "min_agreement": None, "screening": "include"}
# Filters on people's labels (annotations), which automatic labels (labels=auto) do not have.
HUMAN_ONLY = {**STEP_ONLY, "since": 0, "labeler": None, "qc": "include", "split": None}
# Row shapes of people's ratings: automatic labels are + or - already and have no alternatives.
HUMAN_SHAPES = {"neutral": "positive", "alternatives": "branch"}
_CURSOR_SALT = "steplabel.export.cursor"


class ExportOptionError(Invalid):
    """A bad export option; `field` names it."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__({field_name: [message]})
        self.field = field_name
        self.message = message


@dataclass(slots=True)
class ExportOptions:
    format: str = "prm800k"
    generation: list[int] = field(default_factory=list)
    since: int = 0  # decoded cursor: export_seq already delivered
    labeler: str | None = None
    qc: str = "include"
    screening: str = "include"
    finish_reason: list[str] = field(default_factory=list)
    split: str | None = None
    min_agreement: float | None = None
    neutral: str = "positive"  # trl: how a neutral (0) rating maps
    alternatives: str = "branch"  # trl: rated alternatives as their own rows, or dropped
    include_history: bool = False  # prm800k: a top-level "history" key (annotate.services.audit)
    ties: str = "exclude"  # preference: ties left out unless `include`
    labels: str = "human"  # math_shepherd: human labels, or automatic ones (`auto`: imported lines byte for byte)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExportOptions:
        return cls(**data)


def parse_flag(value: Any, name: str) -> bool:
    """true/false/1/0 (any case) from a query string, or a JSON boolean; absent is false."""
    text = "false" if value is None or value == "" else str(value).strip().lower()
    if text not in ("true", "false", "1", "0"):
        raise ExportOptionError(name, f"must be true or false, got {text!r}")
    return text in ("true", "1")


def parse_labeler(value: str) -> str:
    """A labeler's pseudonymous UUID in the form exports carry it (lowercase, with hyphens), so a
    typo is refused instead of matching no label."""
    try:
        return str(uuid.UUID(value.strip()))
    except ValueError:
        shown = value if len(value) <= 64 else f"{value[:64]}..."
        raise ExportOptionError("labeler", f"must be a labeler UUID, got {shown!r}") from None


# A compare project numbers its step labels (the marks) and its preferences apart, so a cursor says
# which sequence it is a position in: one from the other would skip or repeat rows without a word.
PREFERENCE_CURSOR = "preference"


def encode_cursor(*, project: Project, seq: int, preferences: bool = False) -> str:
    """Opaque and tamper-evident: a signed (project, position) pair, and for the preference
    sequence its name.

    Deterministic (no timestamp), so the same position always reads as the same cursor: a pipeline
    that finds nothing new gets back the very cursor it sent, within a second or across one.
    """
    value = [project.pk, seq, PREFERENCE_CURSOR] if preferences else [project.pk, seq]
    return signing.Signer(salt=_CURSOR_SALT).sign_object(value, compress=True)


def decode_cursor(*, project: Project, cursor: str, preferences: bool = False) -> int:
    try:
        value = _unsign_cursor(cursor)
        project_id, seq = value[0], value[1]
        kind = value[2] if len(value) > 2 else None
    except (signing.BadSignature, ValueError, TypeError, IndexError, KeyError):
        raise ExportOptionError("since", "not a cursor returned by an earlier export") from None
    if project_id != project.pk or not isinstance(seq, int) or seq < 0:
        raise ExportOptionError("since", "this cursor belongs to another project")
    if preferences and kind != PREFERENCE_CURSOR:
        raise ExportOptionError(
            "since",
            "this cursor is a position in the step labels (or from before preference cursors were marked), not "
            "in the preferences: pull format=preference without since once, then use its cursor",
        )
    if not preferences and kind is not None:
        raise ExportOptionError("since", "this cursor is a position in the preferences: use it with format=preference")
    return seq


def _unsign_cursor(cursor: str) -> Any:
    try:
        return signing.Signer(salt=_CURSOR_SALT).unsign_object(cursor)
    except (signing.BadSignature, ValueError):
        # Cursors issued before they were deterministic carry a timestamp; they still read.
        return signing.loads(cursor, salt=_CURSOR_SALT)


# Every option parse_options reads (the fields of ExportOptions): any other name is refused, so a
# misspelt filter (`finish_reasons=`) never returns the whole project as if it had applied.
OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(ExportOptions))


def refuse_unknown(params: dict[str, Any], known: frozenset[str]) -> None:
    """ExportOptionError for the first name not in `known`, with the nearest known one."""
    found = unknown_name(params, known, kind="export option")
    if found:
        raise ExportOptionError(*found)


def single_value(params: dict[str, Any], name: str) -> Any:
    """The value of a one-value option as given (None when absent).

    `split=train&split=test` must not quietly mean test: a one-value option given two ways is
    refused (generation and finish_reason take several; see parse_options.many)."""
    value = params.get(name)
    if isinstance(value, list):
        if len({str(item) for item in value}) > 1:
            shown = ", ".join(repr(str(item)) for item in value)
            raise ExportOptionError(name, f"takes one value, got several ({shown})")
        value = value[-1] if value else None
    return value


# `labeler=$L` with L unset filtered nothing, so the whole project came back (the export page
# leaves its empty fields out; an option not wanted is left out too)
EMPTY_VALUE = "is empty: give a value, or leave the option out for no filter"


def parse_options(*, project: Project, params: dict[str, Any]) -> ExportOptions:
    """Validate export options from a query string or JSON body; raise ExportOptionError."""
    refuse_unknown(params, OPTION_NAMES)

    def one(name: str) -> str | None:
        value = single_value(params, name)
        if value is None:
            return None
        if str(value).strip() == "":
            raise ExportOptionError(name, EMPTY_VALUE)
        return str(value)

    def many(name: str) -> list[str]:
        value = params.get(name)
        items = value if isinstance(value, list) else [] if value is None else [value]
        parts = []
        for item in items:
            if str(item).strip() == "":
                raise ExportOptionError(name, EMPTY_VALUE)
            for part in str(item).split(","):
                if not part.strip():  # ` ` or `1,,2` filtered nothing, so the whole project came back
                    given = repr(str(item))
                    raise ExportOptionError(name, f"has an empty value in {given}: give values separated by commas")
                parts.append(part.strip())
        return parts

    def choice(name: str, allowed: tuple[str, ...], default: str) -> str:
        value = one(name) or default
        if value not in allowed:
            raise ExportOptionError(name, f"must be one of {', '.join(allowed)}, got {value!r}")
        return value

    options = ExportOptions(
        format=choice("format", FORMATS, "prm800k"),
        qc=choice("qc", TRISTATE, "include"),
        screening=choice("screening", TRISTATE, "include"),
        neutral=choice("neutral", ("positive", "negative", "drop"), "positive"),
        alternatives=choice("alternatives", ("branch", "drop"), "branch"),
        labels=choice("labels", LABEL_SOURCES, "human"),
        ties=choice("ties", ("exclude", "include"), "exclude"),
    )
    # (a compare project exports its preferences, and its first-wrong-step marks as step labels)
    if options.format == "preference" and project.task_kind != TaskKind.COMPARE:
        raise ExportOptionError(
            "format",
            f"format=preference is for projects that compare solutions; this one labels steps: "
            f"use {', '.join(STEP_FORMATS)}",
        )
    if options.ties == "include" and options.format != "preference":
        raise ExportOptionError("ties", "only the preference format has ties")
    for name, (default, formats) in FORMAT_ONLY.items():
        value = getattr(options, name)
        if value != default and options.format not in formats:
            applies = " or ".join(f"format={f}" for f in formats)
            raise ExportOptionError(name, f"{name}={value} applies to {applies} only, not format={options.format}")
    if options.labels == "auto" and options.format not in ("math_shepherd", "trl"):
        raise ExportOptionError("labels", "automatic labels export only with format=math_shepherd or trl")
    for item in many("generation"):
        try:
            number = int(item)
        except ValueError:
            raise ExportOptionError("generation", f"must be integers, got {item!r}") from None
        if not -1 <= number <= MAX_GENERATION:  # -1 is screening; the column is a 32-bit integer
            raise ExportOptionError("generation", f"must be a round between -1 and {MAX_GENERATION}, got {item}")
        options.generation.append(number)
    for item in many("finish_reason"):
        if item not in FINISH_REASONS:
            raise ExportOptionError("finish_reason", f"must be among {', '.join(FINISH_REASONS)}, got {item!r}")
        options.finish_reason.append(item)
    options.include_history = parse_flag(one("include_history"), "include_history")
    if options.include_history and options.format != "prm800k":
        raise ExportOptionError("include_history", "only the prm800k format carries the history")
    split = one("split")
    if split is not None and split not in ("train", "test"):
        raise ExportOptionError("split", f"must be train or test, got {split!r}")
    options.split = split
    labeler = one("labeler")
    if labeler is not None:
        options.labeler = parse_labeler(labeler)
    since = one("since")
    if since is not None:
        options.since = decode_cursor(project=project, cursor=since, preferences=options.format == "preference")
    min_agreement = one("min_agreement")
    if min_agreement is not None:
        try:
            options.min_agreement = float(min_agreement)
        except ValueError:
            raise ExportOptionError("min_agreement", f"must be a number in [0, 1], got {min_agreement!r}") from None
        if not 0.0 <= options.min_agreement <= 1.0:
            raise ExportOptionError("min_agreement", f"must be a number in [0, 1], got {min_agreement!r}")
    if options.labels == "auto":
        # automatic labels come whole from their own store, which has no export positions or annotators
        for name, default in HUMAN_ONLY.items():
            # (a cursor of a project without labels yet is position 0, the default: given is enough)
            if getattr(options, name) != default or (name == "since" and since is not None):
                raise ExportOptionError(name, f"{name} filters human labels; labels=auto exports every automatic label")
        for name, default in HUMAN_SHAPES.items():
            if getattr(options, name) != default:
                what = "a neutral (0) rating" if name == "neutral" else "rated alternatives"
                raise ExportOptionError(
                    name, f"{name} shapes {what} of people; automatic labels (labels=auto) are + or - and have none"
                )
    if options.format == "preference":
        for name, default in STEP_ONLY.items():
            if getattr(options, name) != default:
                raise ExportOptionError(name, f"{name} filters step labels; format=preference has none")
    return options
