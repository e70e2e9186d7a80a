"""The one seam between annotate and the automatic labels of the autolabel app.

autolabel builds on annotate (its labels point at annotate's solutions), so annotate never imports
it (an import-linter contract). Imports and exports still carry Math-Shepherd lines, whose tags are
stored by autolabel: autolabel registers its functions here when Django loads it
(autolabel.apps.AutolabelConfig.ready), and annotate calls them through this module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class AutoLabelStore:
    # (project=, batch=, solution_ids=) -> labels created: the Math-Shepherd tags of an import batch
    write_math_shepherd: Callable[..., int]
    # (project=, chunk_size=) -> lines: format=math_shepherd&labels=auto
    math_shepherd_lines: Callable[..., Iterator[str]]
    # (project=, chunk_size=) -> rows: format=trl&labels=auto
    trl_rows: Callable[..., Iterator[str]]


_store: AutoLabelStore | None = None


def register(store: AutoLabelStore) -> None:
    global _store
    _store = store


def store() -> AutoLabelStore:
    if _store is None:
        raise RuntimeError("Automatic labels need the autolabel app in INSTALLED_APPS.")
    return _store


def write_math_shepherd(*, project: Any, batch: list[Any], solution_ids: dict[str, int]) -> int:
    if not any(parsed.auto is not None for parsed in batch):
        return 0  # no Math-Shepherd line in this batch
    return store().write_math_shepherd(project=project, batch=batch, solution_ids=solution_ids)
