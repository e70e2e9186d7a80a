"""Application errors: what services raise (never DRF's exceptions) and the API maps to HTTP.

labeling_api.exceptions.exception_handler turns them into 400 (Invalid, with messages by field
path), 403 (Forbidden), 404 (NotFound) and 409 (Conflict) answers; pages handle them themselves.
"""

from __future__ import annotations


class AppError(Exception):
    """Base of the application's refusals; `message` is shown to the caller as it is."""

    default_message = "The request was refused."
    code: str | None = None  # a machine-readable reason, added to the API's answer when set

    def __init__(self, message: str | None = None) -> None:
        self.message = message or self.default_message
        super().__init__(self.message)

    @property
    def detail(self) -> str:  # the name DRF's exceptions use, kept for callers that read it
        return self.message


class Invalid(AppError):
    """Bad input; `errors` maps field paths (e.g. steps[2].rating) to messages."""

    default_message = "Invalid input."

    def __init__(self, errors: dict[str, list[str]] | str | None = None, *, field: str | None = None) -> None:
        if isinstance(errors, str):
            errors = {field or "non_field_errors": [errors]}
        self.errors: dict[str, list[str]] = dict(errors or {})
        first = next(iter(self.errors.items()), None)
        super().__init__(f"{first[0]}: {first[1][0]}" if first else None)


def unknown_name(params, known, *, kind: str = "option") -> tuple[str, str] | None:
    """(the first name of `params` not in `known`, a message naming the nearest known one), or None:
    so a misspelt option is refused instead of silently taking its default."""
    import difflib

    unknown = sorted(set(params) - set(known))
    if not unknown:
        return None
    # by case first: `FORMAT=trl` is `format`, which difflib's ratio on the raw names misses
    same_but_case = [name for name in sorted(known) if name.lower() == unknown[0].lower()]
    near = same_but_case or difflib.get_close_matches(unknown[0].lower(), sorted(known), n=1)
    hint = f" (did you mean {near[0]}?)" if near else ""
    return unknown[0], f"unknown {kind}{hint}; the options are {', '.join(sorted(known))}"


class Forbidden(AppError):
    default_message = "You may not do this."


class NotFound(AppError):
    default_message = "Not found."


class Conflict(AppError):
    default_message = "The request conflicts with the current state."
