"""URL path converters."""

# A row id is a 64-bit signed integer in PostgreSQL: a longer number in a URL names no row. Django's
# <int:> accepts it and the raw-SQL lookups then overflow (a 500), so such a URL does not match (404).
MAX_ROW_ID = 2**63 - 1


class RowIdConverter:
    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if number > MAX_ROW_ID:
            raise ValueError("beyond a 64-bit row id")  # Django reads a ValueError as "no match"
        return number

    def to_url(self, value: int) -> str:
        return str(value)
