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


class DatasetError(Exception):
    """Raised by :func:`judge.datasets.load` with every problem of the file, not just the first."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def field_path(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def problems_from_validation(
    error: ValidationError, file: str, record_id: str | None, prefix: tuple = ()
) -> list[Problem]:
    return [
        Problem(file=file, record_id=record_id, field=field_path(prefix + tuple(e["loc"])) or None, message=e["msg"])
        for e in error.errors()
    ]
