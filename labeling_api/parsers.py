"""Request bodies the database can store: JSON without NUL characters, unpaired surrogates or
infinite numbers, nested at most MAX_DEPTH deep, refused with a 400 that names the field.

Nesting is checked on the raw bytes before parsing: Python's json module recurses once per level,
so `[` x 50,000 would raise RecursionError (a 500) inside the parser, and every later walk of the
value (validation, jsonb encoding) would recurse too. No body this API accepts needs more than a
few levels (a submit is 4 deep); workspace drafts get room to spare.

PostgreSQL's text and jsonb types reject NUL (and jsonb the \\u0000 escape), UTF-8 cannot encode a
lone surrogate, and `1e999` parses to an infinity that is not JSON. Each would otherwise surface as
a 500 deep inside a service; checking once at the parser covers every endpoint.
"""

from __future__ import annotations

import io
import math
import re
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


MAX_DEPTH = 32
# Characters that open or close a string or a nesting level, or escape inside a string.
_TOKEN = re.compile(rb'["\\\[\]{}]')
_OPEN, _CLOSE, _QUOTE, _BACKSLASH = b"[{", b"]}", ord('"'), ord("\\")


def nested_deeper_than(raw: bytes, limit: int) -> bool:
    """Whether arrays and objects in a JSON text nest deeper than `limit`, found in one pass
    without parsing (no recursion; brackets inside strings do not count)."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    depth, in_string, escaped_at = 0, False, -1
    for match in _TOKEN.finditer(raw):
        pos = match.start()
        if pos == escaped_at:
            continue
        char = raw[pos]
        if in_string:
            if char == _BACKSLASH:
                escaped_at = pos + 1
            elif char == _QUOTE:
                in_string = False
        elif char == _QUOTE:
            in_string = True
        elif char in _OPEN:
            depth += 1
            if depth > limit:
                return True
        elif char in _CLOSE:
            depth -= 1
    return False


class StrictJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream is not None else b""
        if nested_deeper_than(raw, MAX_DEPTH):
            raise ValidationError({"non_field_errors": [f"JSON nested deeper than {MAX_DEPTH} levels is refused."]})
        data = super().parse(io.BytesIO(raw), media_type, parser_context)
        found = find_unstorable(data)
        if found:
            raise ValidationError({found[0]: [found[1]]})
        return data
