"""Request bodies the database can store: JSON without NUL characters, unpaired surrogates or
infinite numbers, refused with a 400 that names the field.

PostgreSQL's text and jsonb types reject NUL (and jsonb the \\u0000 escape), UTF-8 cannot encode a
lone surrogate, and `1e999` parses to an infinity that is not JSON. Each would otherwise surface as
a 500 deep inside a service; checking once at the parser covers every endpoint.
"""

from __future__ import annotations

import math
from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.parsers import JSONParser


def _bad_text(text: str) -> str | None:
    if "\x00" in text:
        return "Must not contain NUL (\\u0000) characters."
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "Must not contain unpaired UTF-16 surrogates."
    return None


def find_unstorable(value: Any, path: str = "") -> tuple[str, str] | None:
    """(field path, message) of the first value that cannot be stored, or None."""
    if isinstance(value, str):
        message = _bad_text(value)
        return (path or "non_field_errors", message) if message else None
    if isinstance(value, float) and not math.isfinite(value):
        return (path or "non_field_errors", "Must be a finite number.")
    if isinstance(value, dict):
        for key, item in value.items():
            child = f"{path}.{key}" if path else str(key)
            message = _bad_text(key)
            if message:
                return (path or "non_field_errors", f"A key: {message}")
            found = find_unstorable(item, child)
            if found:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = find_unstorable(item, f"{path}[{index}]")
            if found:
                return found
    return None


class StrictJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        found = find_unstorable(data)
        if found:
            raise ValidationError({found[0]: [found[1]]})
        return data
