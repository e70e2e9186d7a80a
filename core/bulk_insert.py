"""Fast inserts for big imports: PostgreSQL COPY with pre-allocated ids, bulk_create elsewhere.

Building a model instance per row and Django's bulk INSERT cost most of an import's time at
PRM800K scale (a million steps); COPY of plain tuples is several times faster. Ids are taken
from the table's sequence up front so callers can link rows without reading them back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection, models
from django.utils import timezone


def _defaults(model: type[models.Model]) -> dict[str, Any]:
    now = timezone.now()
    defaults: dict[str, Any] = {}
    for field in model._meta.concrete_fields:
        if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            defaults[field.attname] = now
        else:
            # get_default() gives the declared default, "" for non-null text, else None.
            defaults[field.attname] = field.get_default()
    return defaults


def allocate_ids(model: type[models.Model], count: int) -> list[int]:
    """Reserve `count` primary keys from the table's sequence (PostgreSQL only)."""
    if count == 0:
        return []
    table = model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [table, count],
        )
        return [row[0] for row in cursor.fetchall()]


def insert_rows(model: type[models.Model], rows: Sequence[dict[str, Any]]) -> list[int]:
    """Insert rows given as {attname: value} (missing fields take the model default); return ids."""
    if not rows:
        return []
    if connection.vendor != "postgresql":
        created = model.objects.bulk_create([model(**row) for row in rows], batch_size=1000)
        return [obj.pk for obj in created]
    defaults = _defaults(model)
    columns = [f.attname for f in model._meta.concrete_fields]
    ids = allocate_ids(model, len(rows))
    table = connection.ops.quote_name(model._meta.db_table)
    column_sql = ", ".join(connection.ops.quote_name(f.column) for f in model._meta.concrete_fields)
    with connection.cursor() as cursor:
        with cursor.cursor.copy(f"COPY {table} ({column_sql}) FROM STDIN") as copy:
            for pk, row in zip(ids, rows, strict=True):
                copy.write_row([pk if name == "id" else row.get(name, defaults[name]) for name in columns])
    return ids


_BINARY_TYPES = {"bigint": ">i8", "integer": ">i4", "double precision": ">f8", "real": ">f4"}


def copy_arrays(model: type[models.Model], columns: dict[str, Any]) -> int:
    """Insert rows given as one numpy array per column (attname -> array; the id comes from the
    table's default): PostgreSQL binary COPY built by numpy in one buffer, with no Python object
    per row, which is what a million step scores need. Numeric columns only. Returns rows."""
    import numpy as np

    names = list(columns)
    n = len(columns[names[0]]) if names else 0
    if n == 0:
        return 0
    fields = {f.attname: f for f in model._meta.concrete_fields}
    if connection.vendor != "postgresql":
        rows = zip(*(columns[c].tolist() for c in names), strict=True)
        model.objects.bulk_create([model(**dict(zip(names, row, strict=True))) for row in rows], batch_size=1000)
        return n
    kinds = [_BINARY_TYPES[fields[c].db_type(connection)] for c in names]
    layout = [("nfields", ">i2")]
    for i, kind in enumerate(kinds):
        layout += [(f"len{i}", ">i4"), (f"val{i}", kind)]
    tuples = np.empty(n, dtype=np.dtype(layout))
    tuples["nfields"] = len(names)
    for i, (c, kind) in enumerate(zip(names, kinds, strict=True)):
        tuples[f"len{i}"] = np.dtype(kind).itemsize
        tuples[f"val{i}"] = columns[c]
    header = b"PGCOPY\n\xff\r\n\x00" + bytes(8)  # signature, flags, header extension length
    table = connection.ops.quote_name(model._meta.db_table)
    column_sql = ", ".join(connection.ops.quote_name(fields[c].column) for c in names)
    with connection.cursor() as cursor:
        with cursor.cursor.copy(f"COPY {table} ({column_sql}) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.write(header)
            copy.write(tuples.tobytes())
            copy.write(b"\xff\xff")  # the trailer: a field count of -1
    return n


def analyze(*tables: type[models.Model]) -> None:
    """Refresh the planner's statistics of tables just bulk-loaded (PostgreSQL's advice after a big load).

    Without them the claim query plans on stale counts (a full scan and sort at 10k solutions)
    until autovacuum gets round to the table, or never where it is off. SQLite: `PRAGMA optimize`,
    which analyzes only where its planner would gain.
    """
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            names = ", ".join(connection.ops.quote_name(model._meta.db_table) for model in tables)
            cursor.execute(f"ANALYZE {names}")
        elif connection.vendor == "sqlite":
            cursor.execute("PRAGMA optimize")
