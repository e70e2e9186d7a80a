"""Model rows through raw SQL, for the few fixed statements of a hot path (annotate.queue_sql).

The ORM spends most of a short query's CPU building its SQL; a statement written once skips that,
but must still read and write values as the ORM does. `Reader` writes a model's select list and
turns a row back into an instance through the same converters the ORM applies (SQLite's naive
datetimes, JSON text, ...); `insert` stores a new instance the way `Model.save()` does (field
defaults, auto_now, values adapted by their fields, pre_save and post_save signals) in one INSERT.
Both work on PostgreSQL and SQLite; `lock` writes a row lock only where the backend has one.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections, models
from django.db.models.signals import post_save, pre_save


def cursor() -> Any:
    """A cursor for fixed statements: on PostgreSQL with server-side binding, so psycopg prepares a
    statement once it ran `prepare_threshold` times on the connection (the OPTIONS setting,
    config/settings/base.py) and PostgreSQL stops planning it on every call (planning the claim's
    candidate query cost ~4x its execution). Wrapped as connection.cursor() wraps its own (query
    logging, database errors as django.db exceptions); elsewhere connection.cursor() itself."""
    db = connections[DEFAULT_DB_ALIAS]  # once: every attribute of the `connection` proxy is a lookup
    if db.vendor != "postgresql":
        return db.cursor()
    import psycopg
    from django.db.backends.postgresql.psycopg_any import register_tzloader

    db.close_if_health_check_failed()
    db.ensure_connection()
    with db.wrap_database_errors:
        raw = psycopg.Cursor(db.connection)
    # As Django's create_cursor: the time zone loader on the cursor only if the connection's differs.
    if db.timezone != raw.adapters.get_loader(_timestamptz_oid(), psycopg.pq.Format.TEXT).timezone:
        register_tzloader(db.timezone, raw)
    return db.make_debug_cursor(raw) if db.queries_logged else db.make_cursor(raw)


@cache
def _timestamptz_oid() -> int:
    import psycopg

    return psycopg.adapters.types["timestamptz"].oid


def lock(*, of: str, skip_locked: bool = False) -> str:
    """FOR UPDATE OF `of` [SKIP LOCKED] where the backend locks rows (SQLite locks the database)."""
    if not connection.features.has_select_for_update:
        return ""
    return f" FOR UPDATE OF {of}" + (" SKIP LOCKED" if skip_locked else "")


class Reader:
    """A model's concrete columns under a table alias: `select` for the statement, `build` for the row."""

    def __init__(self, model: type[models.Model], alias: str) -> None:
        self.model = model
        self.alias = alias
        self.fields = list(model._meta.concrete_fields)
        self.attnames = [f.attname for f in self.fields]
        self.width = len(self.fields)
        self.select = ", ".join(f"{alias}.{connection.ops.quote_name(f.column)}" for f in self.fields)
        self._converters: dict[str, list[tuple[int, list[Any], Any]]] = {}

    def converters(self) -> list[tuple[int, list[Any], Any]]:
        """(position, converters, expression) of the columns that need converting, per backend: what
        the ORM's compiler applies (SQLCompiler.get_converters)."""
        vendor = connection.vendor
        if vendor not in self._converters:
            found = []
            for i, field in enumerate(self.fields):
                col = field.get_col(self.alias)
                funcs = connection.ops.get_db_converters(col) + col.get_db_converters(connection)
                if funcs:
                    found.append((i, funcs, col))
            self._converters[vendor] = found
        return self._converters[vendor]

    def build(self, row: Any, start: int = 0) -> models.Model:
        """The instance in row[start : start + width], as the ORM would load it."""
        values = list(row[start : start + self.width])
        for i, funcs, col in self.converters():
            for func in funcs:
                values[i] = func(values[i], col, connection)
        return self.model.from_db(connection.alias, self.attnames, values)


_INSERTS: dict[tuple[type[models.Model], str], tuple[str, list[models.Field]]] = {}


def insert(obj: models.Model, *, with_sql: str = "", with_params: tuple = ()) -> models.Model:
    """Store a new instance as `obj.save()` would (the primary key comes from the database), in one
    statement; pre_save and post_save are sent, so receivers (e.g. ml's auto-retrain) see it.
    `with_sql` (PostgreSQL): data-modifying CTEs to run in the same statement ("WITH a AS (...)"),
    with their positional `with_params`."""
    model = type(obj)
    key = (model, connection.vendor)
    if key not in _INSERTS:
        fields = [f for f in model._meta.concrete_fields if not f.primary_key]
        columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
        placeholders = ", ".join(["%s"] * len(fields))
        pk = connection.ops.quote_name(model._meta.pk.column)
        sql = f"INSERT INTO {model._meta.db_table} ({columns}) VALUES ({placeholders}) RETURNING {pk}"
        _INSERTS[key] = (sql, fields)
    sql, fields = _INSERTS[key]
    pre_save.send(sender=model, instance=obj, raw=False, using=connection.alias, update_fields=None)
    params = [f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields]
    with cursor() as db:
        db.execute(f"{with_sql} {sql}" if with_sql else sql, [*with_params, *params])
        obj.pk = db.fetchone()[0]
    obj._state.adding = False
    obj._state.db = connection.alias
    post_save.send(sender=model, instance=obj, created=True, update_fields=None, raw=False, using=connection.alias)
    return obj
