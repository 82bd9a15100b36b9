"""The numeric JUDGE_* environment variables, read and checked in one place.

A bad value (``JUDGE_MAX_RECORD_MB=abc``) is an environment problem: exit 2 with one line naming the variable,
raised before a command does any work (:func:`check`, called by the CLI's error boundary) and again wherever
the value is read, so library callers get the same line."""

from __future__ import annotations

import math
import os

from judge.problems import DatasetError, Problem

# name -> (default, kind, what it bounds); kind "int": a whole number >= 1, "mb": a positive number of megabytes
NUMERIC = {
    "JUDGE_MAX_RECORD_MB": ("64", "mb", "the size of one record"),
    "JUDGE_MAX_PROBLEMS": ("50", "int", "how many problems of one file are listed"),
    "JUDGE_LOCAL_CONTEXT": ("8192", "int", "the embedded models' context in tokens"),
}
# names earlier versions read: setting one does nothing now, which the user should hear about
RETIRED = {"JUDGE_MAX_DATASET_MB": "files stream now, whatever their size; JUDGE_MAX_RECORD_MB bounds one record"}


def _problem(name: str, raw: str, expected: str) -> DatasetError:
    return DatasetError([Problem(file="environment", field=name, message=f"expected {expected}, found {raw!r}")])


def number(name: str) -> float:
    """The value of a numeric JUDGE_* variable (its default when unset); DatasetError naming it when bad."""
    default, kind, _ = NUMERIC[name]
    raw = os.environ.get(name, default)
    if kind == "int":
        if not (raw.strip().isascii() and raw.strip().isdecimal()) or int(raw) < 1:
            raise _problem(name, raw, "a whole number of at least 1")
        return int(raw)
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise _problem(name, raw, "a positive number of megabytes")
    return value


def check() -> list[str]:
    """Every numeric JUDGE_* variable checked (DatasetError on the first bad one); returns a warning line for
    each retired variable that is set."""
    for name in NUMERIC:
        number(name)
    return [f"warning: {name} is set but no longer read: {why}" for name, why in RETIRED.items() if name in os.environ]
