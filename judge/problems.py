"""Problems found in input data, reported all at once, each naming the file, the record and the field."""

from __future__ import annotations

from pydantic import BaseModel, ValidationError


class Problem(BaseModel):
    file: str
    record_id: str | None = None  # the record's id, or "line N" / "item N" where it has none
    field: str | None = None  # a path such as claims[0].attribution[1].start_char
    message: str

    def __str__(self) -> str:
        where = [self.file]
        if self.record_id is not None:
            where.append(f"record {self.record_id}")
        if self.field:
            where.append(f"field {self.field}")
        return f"{': '.join(where)}: {self.message}"


def problems_shown() -> int:
    """How many problems of one file are listed (the rest are counted): JUDGE_MAX_PROBLEMS, default 50."""
    from judge.env import number

    return int(number("JUDGE_MAX_PROBLEMS"))


class DatasetError(Exception):
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


def shown(value: object, limit: int = 60) -> str:
    """A found value as a short literal with its JSON type, for 'expected X, found Y'."""
    kind = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number", type(None): "null"}
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"{text} ({kind.get(type(value), type(value).__name__)})"


def describe(error: dict) -> str:
    """One pydantic error as plain words: what was expected and what was found (no URL, no dump)."""
    kind, msg = error["type"], error["msg"]
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
