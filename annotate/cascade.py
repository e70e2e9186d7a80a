"""What a deletion takes with it, counted in SQL: one COUNT per model reached by CASCADE, never a row
loaded. Django's admin lists every row a deletion takes (its confirmation page, and our audit's
`with` counts used the same collector): a project of 20,000 steps took 6 s and a 4.6 MB page, one of
PRM800K's size never answered. `cascade_counts` gives the same counts at any size."""

from __future__ import annotations

from collections import defaultdict
from graphlib import CycleError, TopologicalSorter

from django.db import models
from django.db.models import Model, Q, QuerySet


class NotCountable(Exception):
    """The cascade meets PROTECT or RESTRICT, or a cycle: let Django's collector handle it."""


def _cascades(model: type[Model]) -> list[models.ForeignObjectRel]:
    rels = []
    for relation in model._meta.related_objects:
        if relation.on_delete in (models.PROTECT, models.RESTRICT):
            raise NotCountable(f"{relation.related_model.__name__}.{relation.field.name}")
        if relation.on_delete is models.CASCADE and not relation.many_to_many:
            rels.append(relation)
    return rels


def cascade_counts(queryset: QuerySet) -> dict[type[Model], int]:
    """Rows of each model that deleting `queryset` deletes, itself included (counts > 0 only).

    A row reached along two paths (a project's annotation, by its project and by its solution) is
    counted once: each model's rows are the union over the relations that reach it, in an order
    where every model comes after those that cascade to it."""
    parents: dict[type[Model], list[models.ForeignObjectRel]] = defaultdict(list)
    graph: dict[type[Model], set[type[Model]]] = {queryset.model: set()}
    todo = [queryset.model]
    while todo:
        current = todo.pop()
        for relation in _cascades(current):
            child = relation.related_model
            parents[child].append(relation)
            if child not in graph:
                graph[child] = set()
                todo.append(child)
            graph[child].add(current)
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        raise NotCountable(str(exc)) from None
    rows: dict[type[Model], QuerySet] = {queryset.model: queryset.values("pk")}
    for model in order:
        if model is queryset.model:
            continue
        reached = Q()
        for relation in parents[model]:
            reached |= Q(**{f"{relation.field.name}__in": rows[relation.model]})
        rows[model] = model._base_manager.filter(reached).values("pk")
    counts = {model: rows[model].count() for model in order}
    return {model: n for model, n in counts.items() if n}
