"""JSON comparison for round-trip tests: equal values, equal types, equal key order."""

from typing import Any


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values with the same types (1 is not 1.0) and the same key order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return a == b
