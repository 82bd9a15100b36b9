"""Problems found in input data, reported all at once, each naming the file, the record and the field."""

from __future__ import annotations

import re

from pydantic import BaseModel, ValidationError

from judge.errors import InputError


class Problem(BaseModel):
    file: str
    record_id: str | None = None  # the record's id, or "line N" / "item N" where it has none
    field: str | None = None  # a path such as claims[0].attribution[1].start_char
    message: str

    def __str__(self) -> str:
        """One line, whatever the data: a line break, an ESC or a bidi override in a file name, a record id
        or a field is shown, never acted on (judge.text.control.one_line), and a huge id is cut."""
        from judge.text.control import one_line

        where = [one_line(self.file, 500)]
        if self.record_id is not None:
            where.append(f"record {one_line(self.record_id, 200)}")
        if self.field:
            where.append(f"field {one_line(self.field, 200)}")
        return f"{': '.join(where)}: {one_line(self.message)}"


class DatasetError(InputError):
    """Raised by :func:`judge.datasets.load` with every problem of the file, not just the first."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


UNION_TAGS = {"as-list", "by-model"}  # tags of tagged unions: part of pydantic's error path, not of the data


def field_path(loc: tuple) -> str:
    out = ""
    for part in loc:
        if part in UNION_TAGS:
            continue
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class _Hidden:
    def __repr__(self) -> str:
        return "a value not shown: it may be a secret"


_HIDDEN = _Hidden()


def shown(value: object, limit: int = 60) -> str:
    """A found value as a short literal with its JSON type, for 'expected X, found Y'; cut before it is
    formatted (a 5 MB string, a huge or deep structure or a 5000-digit number is never formatted whole)."""
    import reprlib

    from judge.redact import redact

    kind = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number", type(None): "null"}
    if value is _HIDDEN:
        return repr(value)
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        text = f"a number of about {int(value.bit_length() * 0.30103) + 1} digits"  # str() of a huge int costs (and may raise)
    else:
        cut = reprlib.Repr()
        cut.maxstring, cut.maxother, cut.maxlevel, cut.maxdict, cut.maxlist, cut.maxlong = limit, limit, 3, 6, 6, 40
        text = cut.repr(value)
    text = redact(text)  # a key pasted into the wrong field is not echoed either (shapes and configured keys)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"{text} ({kind.get(type(value), type(value).__name__)})"


# a field whose value may be a secret: an error about it never shows the value (an inline api_key:, a
# misspelt apikey:, a token, a password; api_base may hold user:password)
SECRET_FIELD = re.compile(r"(key|token|secret|passw|credential|auth|api_base)", re.IGNORECASE)


def describe(error: dict) -> str:
    """One pydantic error as plain words: what was expected and what was found (no URL, no dump). The value
    found is cut before it is formatted, and never shown for a field that may hold a secret."""
    kind, msg = error["type"], error["msg"]
    if any(isinstance(part, str) and SECRET_FIELD.search(part) for part in error.get("loc", ())):
        error = {**error, "input": _HIDDEN}
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return f"unknown field (found {shown(error.get('input'))}); check its spelling against the format's fields"
    if kind in ("value_error", "assertion_error"):
        return msg.split(", ", 1)[1] if msg.startswith(("Value error, ", "Assertion failed, ")) else msg
    if msg.startswith("Input should be "):
        msg = "expected " + msg[len("Input should be "):]
    return f"{msg}, found {shown(error.get('input'))}"


def problems_from_validation(
    error: ValidationError, file: str, record_id: str | None, prefix: tuple = (), limit: int | None = None
) -> list[Problem]:
    """One problem per pydantic error (the first ``limit`` of them), each naming its field."""
    errors = error.errors(include_url=False, include_context=False)
    if limit is not None:
        errors = errors[:limit]
    return [
        Problem(file=file, record_id=record_id, field=field_path(prefix + tuple(e["loc"])) or None, message=describe(e))
        for e in errors
    ]
