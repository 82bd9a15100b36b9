"""Reading a run's own files back: a run directory is an input (DESIGN.md, "Untrusted bytes"), read through the
reading door and the input boundary, its failures one RunDirError naming the file."""

from __future__ import annotations

import json
import re
from pathlib import Path

from judge.errors import InputError

_RECORD_ID = re.compile(rb'^\{"schema_version":(\d{1,9}),"record_id":("(?:[^"\\]|\\.)*")')  # how model_dump_json starts a result


def record_id_of(line: bytes) -> tuple[int, str] | None:
    """(schema version, record id) of a results line as judge writes it, read from its first bytes without
    parsing the rest; None for a line of another shape (the caller parses it whole)."""
    m = _RECORD_ID.match(line)
    return (int(m.group(1)), json.loads(m.group(2))) if m else None


class RunDirError(InputError, ValueError):
    """A run directory that cannot be used (missing, from another version, corrupt, not writable, or a bad name)."""


def read_json_object(path: Path) -> dict:
    """A JSON object from one of the run's own files; RunDirError naming the file when it is unreadable,
    not JSON, or not an object (a corrupt or hand-edited run directory)."""
    from judge.boundary import parse_json
    from judge.problems import DatasetError

    from judge.input_files import InputFileError, read_plain

    try:  # the reading door: a plain file, within its size (a device there is refused, never read)
        data = parse_json(read_plain(path), str(path))  # the input boundary: depth, surrogates, numbers in range
    except InputFileError as e:
        if e.reason == "does not exist":
            raise RunDirError(f"{path} is missing: {path.parent} is not a complete run directory") from None
        raise RunDirError(str(e)) from None
    except DatasetError as e:  # not UTF-8, not JSON, too deep
        raise RunDirError(f"{path} is corrupt (not JSON: {e.problems[0].message})") from None
    if not isinstance(data, dict):
        raise RunDirError(f"{path} is corrupt: expected a JSON object, found {type(data).__name__}")
    return data


def validated(model, data, path: Path, at: tuple = ()):
    """``data`` (read from the run's file ``path``, at the keys ``at`` in it) as ``model``; a field the model
    refuses is one RunDirError naming the file and the field, never a traceback."""
    from pydantic import ValidationError

    from judge.problems import describe, field_path

    try:
        return model.model_validate(data)
    except ValidationError as e:
        error = e.errors()[0]
        raise RunDirError(f"{path}: field {field_path((*at, *error['loc']))}: {describe(error)}; a run's files are written by judge "
                          "(rerun `judge run --resume` to rewrite it)") from None
