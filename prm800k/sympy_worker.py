"""The child process that asks sympy whether two plain-text expressions are equal.

Run as a script (`python sympy_worker.py`); it imports nothing of this project, so it starts the
same way under a web server, a Celery worker or a test. Protocol: one JSON line `[a, b]` in, one
JSON line `true` / `false` out; it exits when its stdin closes. The parent kills it when an answer
takes longer than its timeout, so a runaway simplification never outlives the limit, whatever
thread or process asked. Memory is capped too: an expression that needs more fails instead.
"""

from __future__ import annotations

import json
import resource
import sys

MEMORY_LIMIT_BYTES = 2 << 30


def sympy_equal(a: str, b: str) -> bool:
    """sympy.simplify((a) - (b)) == 0, reading `^` as a power and `2x` as a product; False on any error."""
    import sympy
    from sympy.parsing import sympy_parser

    transformations = sympy_parser.standard_transformations + (sympy_parser.implicit_multiplication_application,)
    try:
        difference = sympy_parser.parse_expr(f"({a})-({b})".replace("^", "**"), transformations=transformations)
        return bool(sympy.simplify(difference) == 0)
    except (MemoryError, RecursionError):
        raise  # out of resources: undecided, not unequal
    except Exception:  # unreadable text or a failing simplification: not shown equal (as PRM800K)
        return False


def main() -> None:
    try:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    except (ValueError, OSError):
        pass
    import sympy  # noqa: F401  (loaded before "ready", so the first answer is not charged for it)

    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for line in sys.stdin:
        try:
            a, b = json.loads(line)
            answer = "true" if sympy_equal(str(a), str(b)) else "false"
        except (MemoryError, RecursionError):
            answer = "null"
        except (ValueError, TypeError):
            answer = "false"
        sys.stdout.write(answer + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
