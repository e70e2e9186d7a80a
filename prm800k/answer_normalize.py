"""The two answer normalisations of PRM800K's grader, written from its documented behaviour.

`mathd_normalize` is the MATH dataset's string normalisation (Hendrycks et al.): it drops LaTeX
decoration (\\left, \\dfrac, degrees, dollars, a trailing `\\text{ unit}`, `x =`), fixes `\\frac12`
and `\\sqrt3`, and spells `a/b` and `0.5` as `\\frac{a}{b}`. `prm800k_normalize` turns the answer into
plain text that sympy can read: units, percent and thousands separators go, LaTeX becomes text
(`\\frac{14}{3}` -> `14/3`), case is folded, and integral numbers are written as integers.
Pure functions, no Django, never raise: a string they cannot handle is returned as it is.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

# ---------------------------------------------------------------------------------------------
# MATH (mathd) normalisation
# ---------------------------------------------------------------------------------------------

_ENCLOSING_TEXT = re.compile(r"^\\text\{(?P<text>.+?)\}$")


def mathd_normalize(answer: str) -> str:
    answer = answer.strip()
    match = _ENCLOSING_TEXT.search(answer)
    if match is not None:
        answer = match.group("text").strip()
    return _strip_mathd(answer)


def _strip_mathd(s: str) -> str:
    for old, new in (
        ("\n", ""),
        ("\\!", ""),
        ("\\\\", "\\"),
        ("tfrac", "frac"),
        ("dfrac", "frac"),
        ("\\left", ""),
        ("\\right", ""),
        ("^{\\circ}", ""),
        ("^\\circ", ""),
        ("\\$", ""),
    ):
        s = s.replace(old, new)
    parts = s.split("\\text{ ")  # a unit written as `\text{ cm}` ends the answer
    if len(parts) == 2:
        s = parts[0]
    elif len(parts) > 2:
        return s  # MATH's normaliser gives up on two units; so do we
    s = s.replace("\\%", "").replace(" .", " 0.").replace("{.", "{0.")
    if not s:
        return s
    if s[0] == ".":
        s = "0" + s
    sides = s.split("=")
    if len(sides) == 2 and len(sides[0]) <= 2:  # `x = 5`, `k=5`
        s = sides[1]
    s = _fix_sqrt(s).replace(" ", "")
    s = _fix_fracs(s)
    if s == "0.5":
        s = "\\frac{1}{2}"
    return _fix_a_slash_b(s)


def _fix_sqrt(s: str) -> str:
    head, *rest = s.split("\\sqrt")
    out = [head]
    for part in rest:
        out.append("\\sqrt{" + part[0] + "}" + part[1:] if part and part[0] != "{" else "\\sqrt" + part)
    return "".join(out)


def _fix_fracs(s: str) -> str:
    """`\\frac12` -> `\\frac{1}{2}`, `\\frac1{72}` -> `\\frac{1}{72}`."""
    head, *rest = s.split("\\frac")
    out = [head]
    for part in rest:
        out.append("\\frac")
        if part and part[0] == "{":
            out.append(part)
        elif len(part) < 2:
            return s
        elif part[1] != "{":
            out.append("{" + part[0] + "}{" + part[1] + "}" + part[2:])
        else:
            out.append("{" + part[0] + "}" + part[1:])
    return "".join(out)


_INT = re.compile(r"^-?(0|[1-9][0-9]*)$")


def _fix_a_slash_b(s: str) -> str:
    """`3/4` -> `\\frac{3}{4}`, for two integers written the way Python would print them."""
    parts = s.split("/")
    if len(parts) == 2 and all(_INT.match(p) and p != "-0" for p in parts):
        return "\\frac{" + parts[0] + "}{" + parts[1] + "}"
    return s


# ---------------------------------------------------------------------------------------------
# PRM800K normalisation (plain text for sympy)
# ---------------------------------------------------------------------------------------------

_UNITS = (
    "degree",
    "cm",
    "centimeter",
    "meter",
    "mile",
    "second",
    "minute",
    "hour",
    "day",
    "week",
    "month",
    "year",
    "foot",
    "feet",
    "inch",
    "yard",
)
_UNIT_RES = [re.compile(unit + r"(es)?(s)? *(\^[0-9]+)?") for unit in _UNITS]
_DEGREE_RE = re.compile(r"\^ *\\circ")
_THIN_THOUSANDS_RE = re.compile(r",\\! *")
_MIXED_NUMBER_RE = re.compile(r"([0-9]) +([0-9])")
_FORMATTED_COMMAS_RE = re.compile(r"(\d)(,)(\d\d\d)($|\D)")


def prm800k_normalize(expr: str) -> str:
    match = _ENCLOSING_TEXT.search(expr)
    if match is not None:
        expr = match.group("text")
    expr = expr.replace("\\%", "%").replace("\\$", "$").replace("$", "").replace("%", "")
    expr = expr.replace(" or ", " , ").replace(" and ", " , ")
    expr = expr.replace("million", "*10^6").replace("billion", "*10^9").replace("trillion", "*10^12")
    for unit in _UNIT_RES:
        expr = unit.sub("", expr)
    expr = _DEGREE_RE.sub("", expr)
    if len(expr) > 1 and expr[0] == "{" and expr[-1] == "}":
        expr = expr[1:-1]
    expr = _THIN_THOUSANDS_RE.sub("", expr)
    as_int = integral_text(expr)
    if as_int is not None:
        expr = as_int
    if "\\" in expr:
        expr = latex_to_text(expr)
    expr = re.sub(r"- *", "-", expr)  # `- 3` and mixed numbers with a sign
    expr = _MIXED_NUMBER_RE.sub(r"\1+\2", expr)  # `7 3/4` -> `7+3/4`
    expr = expr.replace(" ", "").replace("{", "").replace("}", "").lower()
    if is_integral(expr):
        expr = integral_text(expr.replace(",", "")) or expr
    return expr


def strip_formatted_commas(expr: str) -> str:
    """`1,000,000` -> `1000000`; tuple commas like `(1,2)` stay."""
    while True:
        stripped = _FORMATTED_COMMAS_RE.sub(r"\1\3\4", expr)
        if stripped == expr:
            return expr
        expr = stripped


def _decimal(text: str) -> Decimal | None:
    try:
        value = Decimal(text.strip())
    except (InvalidOperation, ValueError):
        return None
    if not value.is_finite() or abs(value.adjusted()) > 1000:  # `1e999999`: not worth writing out
        return None
    return value


def integral_text(text: str) -> str | None:
    """`5.0` -> `5`, `1e3` -> `1000`; None unless the number is within 1e-7 of an integer (as PRM800K)."""
    value = _decimal(text)
    if value is None:
        return None
    nearest = value.to_integral_value()
    if abs(value - nearest) > _INTEGER_TOLERANCE:
        return None
    return "0" if nearest == 0 else format(nearest, "f")


_INTEGER_TOLERANCE = Decimal("1e-7")


def is_integral(text: str) -> bool:
    """An integer, possibly with proper thousands separators (`1,000`) or a `.0` tail."""
    return bool(text) and integral_text(strip_formatted_commas(text)) is not None


_FRACTION_RE = re.compile(r"^-?[0-9]+.?/0*[1-9][0-9]*.?$")


def is_plain_fraction(text: str) -> bool:
    """`14/3`, `-28/6`: a fraction of integers, whose written form must match exactly."""
    return bool(_FRACTION_RE.search(text))


# ---------------------------------------------------------------------------------------------
# LaTeX to plain text
# ---------------------------------------------------------------------------------------------

_SYMBOLS = {
    "pi": "π",
    "infty": "∞",
    "cup": "∪",
    "cap": "∩",
    "cdot": "·",
    "times": "×",
    "div": "÷",
    "pm": "±",
    "mp": "∓",
    "le": "≤",
    "leq": "≤",
    "ge": "≥",
    "geq": "≥",
    "ne": "≠",
    "neq": "≠",
    "approx": "≈",
    "circ": "∘",
    "degree": "°",
    "emptyset": "∅",
    "varnothing": "∅",
    "in": "∈",
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "epsilon": "ε",
    "theta": "θ",
    "lambda": "λ",
    "mu": "μ",
    "sigma": "σ",
    "phi": "φ",
    "omega": "ω",
    "Delta": "Δ",
    "Omega": "Ω",
    "ldots": "...",
    "cdots": "...",
    "dots": "...",
}
_FUNCTIONS = frozenset(
    "sin cos tan cot sec csc arcsin arccos arctan sinh cosh tanh log ln exp lg det gcd lcm max min deg".split()
)
_KEEP_ARGUMENT = frozenset("text textbf textit textrm mathrm mathbf mathit mathsf operatorname mbox boxed hbox".split())
_DROP = frozenset("left right displaystyle textstyle limits quad qquad big Big bigl bigr Bigl Bigr".split())
# Which characters follow from these after sympy's parser reads the text (PRM800K's replacements).
_TEXT_REPLACEMENTS = (("√", "sqrt"), ("π", "pi"), ("∞", "inf"), ("∪", "U"), ("·", "*"), ("×", "*"))
_ATOM = re.compile(r"^-?[0-9A-Za-z.π∞]+$")


def latex_to_text(expr: str) -> str:
    """Plain text for LaTeX, as PRM800K's grader reads it; a fraction's parts keep their precedence.

    `\\frac` gets a space before it so a mixed number `7\\frac34` reads as `7 3/4`.
    """
    expr = expr.replace("\\tfrac", "\\frac").replace("\\dfrac", "\\frac").replace("\\frac", " \\frac")
    try:
        text = _Reader(expr).read_until(None)
    except (IndexError, RecursionError):
        return expr
    for old, new in _TEXT_REPLACEMENTS:
        text = text.replace(old, new)
    return text.strip()


class _Reader:
    """A small recursive reader for the LaTeX found in final answers."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def read_until(self, end: str | None) -> str:
        out: list[str] = []
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if end is not None and ch == end:
                self.pos += 1
                return "".join(out)
            if ch == "{":
                self.pos += 1
                out.append(self.read_until("}"))
            elif ch == "\\":
                out.append(self.macro())
            elif ch in "^_":
                self.pos += 1
                argument = self.argument()
                out.append(ch + (argument if _ATOM.match(argument) else f"({argument})"))
            elif ch == "&":
                self.pos += 1
                out.append(",")
            elif ch == "~":
                self.pos += 1
                out.append(" ")
            else:
                self.pos += 1
                out.append(ch)
        return "".join(out)

    def argument(self) -> str:
        """One macro argument: a group, a macro, or a single character."""
        while self.pos < len(self.text) and self.text[self.pos] == " ":
            self.pos += 1
        if self.pos >= len(self.text):
            return ""
        ch = self.text[self.pos]
        if ch == "{":
            self.pos += 1
            return self.read_until("}")
        if ch == "\\":
            return self.macro()
        self.pos += 1
        return ch

    def optional(self) -> str | None:
        if self.pos < len(self.text) and self.text[self.pos] == "[":
            self.pos += 1
            return self.read_until("]")
        return None

    def macro(self) -> str:
        self.pos += 1  # the backslash
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos].isalpha():
            self.pos += 1
        name = self.text[start : self.pos]
        if not name:  # `\{`, `\,`, `\\`, `\%`
            ch = self.text[self.pos] if self.pos < len(self.text) else ""
            self.pos += 1
            return {"{": "{", "}": "}", "\\": ";", ",": " ", ";": " ", ":": " ", "!": "", " ": " "}.get(ch, ch)
        if name == "frac":
            top, bottom = self.argument(), self.argument()
            return f"{_group(top)}/{_group(bottom)}"
        if name == "sqrt":
            index = self.optional()
            radicand = self.argument()
            return f"√({radicand})" if index is None else f"({radicand})^(1/({index}))"
        if name == "begin":
            self.argument()
            return "[" + self.read_environment() + "]"
        if name == "end":
            self.argument()
            return ""
        if name in _KEEP_ARGUMENT:
            return self.argument()
        if name in _DROP:
            return ""
        if name in _FUNCTIONS:
            return name
        if name in _SYMBOLS:
            return _SYMBOLS[name]
        return ""  # an unknown macro: its arguments, read next, stay as text

    def read_environment(self) -> str:
        """A matrix or cases body up to `\\end{...}`: rows joined by `;`, cells by `,`."""
        out: list[str] = []
        while self.pos < len(self.text):
            if self.text.startswith("\\end", self.pos):
                self.pos += len("\\end")
                self.argument()
                return "".join(out).strip()
            ch = self.text[self.pos]
            if ch == "{":
                self.pos += 1
                out.append(self.read_until("}"))
            elif ch == "\\":
                out.append(self.macro())
            elif ch == "&":
                self.pos += 1
                out.append(",")
            else:
                self.pos += 1
                out.append(ch)
        return "".join(out).strip()


def _group(text: str) -> str:
    """A fraction's numerator or denominator; parenthesised unless it is one number or symbol."""
    text = text.strip()
    return text if _ATOM.match(text) else f"({text})"
