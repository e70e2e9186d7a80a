"""Exporting annotations as PRM800K records or TRL stepwise-supervision rows, streamed.

Order and cursors: every annotation gets an `export_seq` the first time an export runs after it
committed (one serialized UPDATE per project). Rows committed later get larger numbers, so an
export that returns "everything up to seq N" plus a cursor for N never skips a label that was
still in flight, and never repeats one. Reading is keyset-paginated by that sequence, and the
steps of a chunk's solutions come in one query, so memory depends on the chunk, not the project.
"""

from annotate.services.exports.deletions import deletions_since, record_deletion
from annotate.services.exports.jobs import (
    EXPORT_RUNNING_DEADLINE,
    create_export_job,
    export_dir,
    run_export_job,
    sweep_stale_exports,
)
from annotate.services.exports.options import (
    EMPTY_VALUE,
    FORMATS,
    OPTION_NAMES,
    ExportOptionError,
    ExportOptions,
    decode_cursor,
    encode_cursor,
    parse_flag,
    parse_options,
    refuse_unknown,
    single_value,
)
from annotate.services.exports.sequence import lock_export_sequence, stamp_export_sequence
from annotate.services.exports.stream import (
    CHUNK_SIZE,
    END_KEY,
    ExportPlan,
    annotations_for_export,
    corrections_in,
    iter_chunks,
    iter_lines,
    iter_records,
    plan_export,
    with_end_line,
)

__all__ = [
    "CHUNK_SIZE",
    "EMPTY_VALUE",
    "END_KEY",
    "EXPORT_RUNNING_DEADLINE",
    "FORMATS",
    "ExportOptionError",
    "ExportOptions",
    "ExportPlan",
    "annotations_for_export",
    "corrections_in",
    "create_export_job",
    "decode_cursor",
    "deletions_since",
    "encode_cursor",
    "export_dir",
    "iter_chunks",
    "iter_lines",
    "iter_records",
    "lock_export_sequence",
    "parse_flag",
    "single_value",
    "refuse_unknown",
    "OPTION_NAMES",
    "parse_options",
    "plan_export",
    "record_deletion",
    "run_export_job",
    "stamp_export_sequence",
    "sweep_stale_exports",
    "with_end_line",
]
