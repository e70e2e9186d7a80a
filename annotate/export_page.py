"""The export page's "Export what is newer": a past export's settings as a query string, and the
form's initial values (and the options the form has no field for) read back from it, so the
incremental export is the same export from the cursor on, not a default one."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import QueryDict

from annotate.forms import ExportForm
from annotate.models import Export
from annotate.services.exports import OPTION_NAMES, ExportOptionError, ExportOptions, decode_cursor, deletions_since

# The form's own fields (its cursor aside), and the export options it has no field for, which ride
# along as hidden inputs (an API job may set them).
FORM_FIELDS = tuple(name for name in ExportForm.base_fields if name != "since")
CARRIED = tuple(sorted(OPTION_NAMES - set(ExportForm.base_fields)))
_DEFAULTS = {**ExportOptions().as_dict(), "gzip": False}


def _changed(filters: dict) -> list[tuple[str, str]]:
    """Every setting of an export (its cursor aside) that differs from the defaults, as (name, value)."""
    params: list[tuple[str, str]] = []
    for name in FORM_FIELDS + CARRIED:
        value = filters.get(name)
        if value in (None, "", []) or (value == _DEFAULTS.get(name) and name != "format"):
            continue
        if name == "finish_reason":
            params += [(name, str(v)) for v in value]
        elif isinstance(value, list):
            params.append((name, ",".join(str(v) for v in value)))
        elif isinstance(value, bool):
            params.append((name, "true"))
        else:
            params.append((name, str(value)))
    return params


def newer_query(export: Export) -> str:
    """`since=<its cursor>` and every setting of the export that differs from the defaults."""
    filters = export.filters or {}
    return urlencode([*_changed(filters), ("since", filters.get("cursor") or "")])


def deleted_since(export: Export) -> int:
    """How many labels were deleted after this export's position (0 without a cursor): its file, and
    the pulls before it, may hold their records (`export/deletions/` names them)."""
    cursor = (export.filters or {}).get("cursor")
    if not cursor:
        return 0
    preferences = export.format == "preference"
    try:
        position = decode_cursor(project=export.project, cursor=cursor, preferences=preferences)
    except ExportOptionError:  # a cursor from before preference cursors were marked
        return 0
    return deletions_since(project=export.project, since=position, preferences=preferences).count()


def deletions_query(export: Export) -> str:
    """The query of `export/deletions/` for the labels deleted since this export."""
    filters = export.filters or {}
    params = [("since", filters.get("cursor") or "")]
    if export.format == "preference":
        params.append(("format", "preference"))
    return urlencode(params)


def settings_summary(export: Export) -> str:
    """The past-exports table's words for what an export held: its settings that differ from the
    defaults (`split=train, qc=exclude, since a cursor`), or "all labels". Without them two rows of
    one format, one of 12 records and one of 0, could not be told apart."""
    filters = export.filters or {}
    shown: dict[str, list[str]] = {}
    for name, value in _changed(filters):
        if name != "format":  # a column of its own
            shown.setdefault(name, []).append(value)
    words = [f"{name}={','.join(values)}" if name != "gzip" else "gzip" for name, values in shown.items()]
    if filters.get("since"):
        words.append("since a cursor")
    return ", ".join(words) or "all labels"


def form_state(query: QueryDict) -> tuple[dict, list[tuple[str, str]]]:
    """(the form's initial values, the carried options as (name, value)) from the page's query."""
    initial: dict = {"since": query.get("since", "")}
    for name in FORM_FIELDS:
        if name == "finish_reason":
            if query.getlist(name):
                initial[name] = query.getlist(name)
        elif name == "gzip":
            initial[name] = query.get(name) in ("true", "1")
        elif query.get(name):
            initial[name] = query.get(name)
    carried = [(name, query[name]) for name in CARRIED if query.get(name)]
    return initial, carried
