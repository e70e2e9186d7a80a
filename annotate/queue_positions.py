"""Writing queue positions to solutions: a priority and its origin (`Solution.strategy`) each, and,
when a model's scoring set them, its verifier score, generation and run. One UPDATE per batch,
each batch its own short transaction so claims wait on few row locks. Used by the model loop's
rescoring (ml.services.scoring) and by a strategy change before any model
(annotate.services.reorder); ml may import it (it is not a service)."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection, transaction

from annotate.models import Solution

BATCH = 5000  # solution rows per transaction


def write_positions(
    *,
    ids: Sequence[int],
    priority: Sequence[float],
    origin: Sequence[str],
    score: Sequence[float] | None = None,
    generation: int | None = None,
    model_run_id: int | None = None,
) -> int:
    """Rows updated. `score`, `generation` and `model_run_id` come together (a model's scoring)
    or not at all (a model-free order: those columns are left as they are)."""
    n = 0
    for start in range(0, len(ids), BATCH):
        end = start + BATCH
        batch = (list(ids[start:end]), list(priority[start:end]), list(origin[start:end]))
        scores = None if score is None else list(score[start:end])
        write = _write if connection.vendor == "postgresql" else _bulk
        with transaction.atomic():
            n += write(batch, scores, generation, model_run_id)
    return n


def _write(
    batch: tuple[list, list, list], scores: list | None, generation: int | None, model_run_id: int | None
) -> int:
    table = connection.ops.quote_name(Solution._meta.db_table)
    if scores is not None:
        sql = (
            f"UPDATE {table} AS s SET priority = v.priority, verifier_score = v.score, "
            "generation = %s, strategy = v.origin, model_run_id = %s "
            "FROM unnest(%s::bigint[], %s::float8[], %s::text[], %s::float8[]) "
            "AS v(id, priority, origin, score) WHERE s.id = v.id"
        )
        params = [generation, model_run_id, *batch, scores]
    else:
        sql = (
            f"UPDATE {table} AS s SET priority = v.priority, strategy = v.origin "
            "FROM unnest(%s::bigint[], %s::float8[], %s::text[]) AS v(id, priority, origin) WHERE s.id = v.id"
        )
        params = list(batch)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def _bulk(batch: tuple[list, list, list], scores: list | None, generation: int | None, model_run_id: int | None) -> int:
    ids, priority, origin = batch
    if scores is not None:
        objs = [
            Solution(pk=i, priority=p, strategy=o, verifier_score=s, generation=generation, model_run_id=model_run_id)
            for i, p, o, s in zip(ids, priority, origin, scores, strict=True)
        ]
        fields = ["priority", "strategy", "verifier_score", "generation", "model_run_id"]
    else:
        objs = [Solution(pk=i, priority=p, strategy=o) for i, p, o in zip(ids, priority, origin, strict=True)]
        fields = ["priority", "strategy"]
    return Solution.objects.bulk_update(objs, fields, batch_size=500)
