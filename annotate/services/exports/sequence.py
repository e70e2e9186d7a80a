"""The export sequence: every annotation (and every preference, numbered apart) gets an `export_seq`
the first time an export runs after it committed (one serialized UPDATE per project). Rows
committed later get larger numbers, so an export that returns "everything up to seq N" plus a
cursor for N never skips a label that was still in flight, and never repeats one. A corrected
annotation is numbered again, after every other (annotate.services.audit), so the next
incremental export carries the correction; a deleted one leaves a tombstone numbered the same way
(annotate.services.exports.deletions), so the next pull of deletions carries it."""

from __future__ import annotations

from django.db import connection, transaction
from django.db.models import Model

from annotate.models import Annotation, DeletedLabel, Preference, Project

# one advisory lock per numbered table and project
_LOCK_KEYS: dict[type[Model], int] = {Annotation: 72_001, Preference: 72_002}
_KINDS: dict[type[Model], str] = {Annotation: DeletedLabel.Kind.ANNOTATION, Preference: DeletedLabel.Kind.PREFERENCE}


def lock_export_sequence(*, project: Project, model: type[Model] = Annotation) -> int:
    """Take the project's export-numbering lock until the transaction ends; return the highest number.

    Whoever hands out export numbers holds it: exports stamping new labels, imports, which
    number their labels as they insert them (so a big import needs no UPDATE pass afterwards),
    corrections, which move a label after every other, and deletions, whose tombstones take the
    next number.
    """
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_LOCK_KEYS[model], project.pk])
        table = model._meta.db_table
        # Deletions take positions in the same sequence (exports.deletions), so numbering goes on above them.
        greatest = "GREATEST" if connection.vendor == "postgresql" else "MAX"  # SQLite's two-argument MAX
        cursor.execute(
            f"""
            SELECT {greatest}(
                (SELECT COALESCE(MAX(export_seq), 0) FROM {table} WHERE project_id = %s),
                (SELECT COALESCE(MAX(export_seq), 0) FROM {DeletedLabel._meta.db_table}
                 WHERE project_id = %s AND kind = %s)
            )
            """,
            [project.pk, project.pk, _KINDS[model]],
        )
        return cursor.fetchone()[0]


def stamp_export_sequence(*, project: Project, model: type[Model] = Annotation) -> int:
    """Number the committed, not-yet-numbered annotations in id order; return the highest number.

    Serialized per project (an advisory lock on PostgreSQL; SQLite serializes writers itself), so
    numbers are handed out in the order rows become visible.
    """
    with transaction.atomic():
        base = lock_export_sequence(project=project, model=model)
        table = model._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute(
                f"""
                UPDATE {table} SET export_seq = numbered.seq
                FROM (
                    SELECT id, %s + ROW_NUMBER() OVER (ORDER BY id) AS seq
                    FROM {table} WHERE project_id = %s AND export_seq IS NULL
                ) AS numbered
                WHERE {table}.id = numbered.id
                """,
                [base, project.pk],
            )
            if cursor.rowcount:
                cursor.execute(f"SELECT MAX(export_seq) FROM {table} WHERE project_id = %s", [project.pk])
                return cursor.fetchone()[0]
            return base
