"""Importing PRM800K and plain JSONL files: validate everything, then write everything or nothing.

Two streaming passes over the file keep memory flat whatever its size (phase2_train is 456 MB):
the first parses and validates every line and collects errors; only a clean file gets the second,
which writes in batches inside one transaction. Identity hashes make a re-import a no-op.
"""

from annotate.services.imports.jobs import progress, run_import_job, start_import, sweep_stale_imports
from annotate.services.imports.reading import (
    MAX_REPORTED_ERRORS,
    EmptyFileError,
    ImportValidationError,
    LineError,
    NotJsonLinesError,
    WholeFileError,
    open_jsonl,
    validate_file,
)
from annotate.services.imports.writing import ImportResult, import_file, prefetch

__all__ = [
    "MAX_REPORTED_ERRORS",
    "EmptyFileError",
    "ImportResult",
    "ImportValidationError",
    "LineError",
    "NotJsonLinesError",
    "WholeFileError",
    "import_file",
    "progress",
    "run_import_job",
    "start_import",
    "sweep_stale_imports",
    "open_jsonl",
    "prefetch",
    "validate_file",
]
