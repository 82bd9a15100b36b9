"""The one bounded parse of a number written as text (issue 36, item 12), and the limits JSON and YAML numbers
are held to (judge.boundary): no NaN or Infinity, nothing beyond a float's range, no whole number of thousands of
digits (Python refuses over 4,300, with a ValueError that named no file)."""

from __future__ import annotations

import math

MAX_INT = 2**53  # whole numbers within +-MAX_INT: what JSON readers keep exactly
MAX_DIGITS = 4000  # Python converts at most 4,300 digits (sys.get_int_max_str_digits); none of our numbers needs 20


class Refused(ValueError):
    """JSON that parses but that judge refuses (:class:`DuplicateKey`, :class:`BadNumber`); ``field``: where,
    when known."""

    field: str | None = None


class BadNumber(Refused):
    """A number no file of judge's holds: NaN or Infinity (JSON has neither), one beyond a float's range
    (1e999), one of thousands of digits (Python refuses to convert more than 4,300)."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class _TooManyDigits:
    """A whole number too long to convert, as found (its digit count), so that the walk names its field."""

    def __init__(self, digits: int):
        self.digits = digits


def digits_message(digits: int) -> str:
    return f"a number of {digits:,} digits; no number judge reads needs more than {len(str(MAX_INT))}"


def parse_number(text: str, *, integer: bool = False, minimum: float | None = None, maximum: float | None = None) -> float | int:
    """A finite number (a whole one with ``integer``) within [minimum, maximum], or BadNumber with the reason,
    before anything slow or raising is converted (5,000 digits, NaN, inf, 1e999)."""
    raw = text.strip()
    shown = repr(raw if len(raw) <= 30 else raw[:29] + "…")
    digits = sum(ch.isdigit() for ch in raw[:MAX_DIGITS + 10])
    if digits > MAX_DIGITS:
        raise BadNumber(digits_message(len(raw)))
    try:
        value: float | int = int(raw) if integer else float(raw)
    except ValueError:
        raise BadNumber(f"expected {'a whole number' if integer else 'a number'}, found {shown}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise BadNumber(f"expected a finite number, found {shown}")
    if integer and not -MAX_INT <= value <= MAX_INT:
        raise BadNumber(f"{shown} is over the limit of {MAX_INT:,} (2**53)")
    if minimum is not None and value < minimum:
        raise BadNumber(f"expected a number of at least {minimum:g}, found {shown}")
    if maximum is not None and value > maximum:
        raise BadNumber(f"expected a number of at most {maximum:g}, found {shown}")
    return value
