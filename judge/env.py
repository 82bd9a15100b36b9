"""The numeric JUDGE_* environment variables, read and checked in one place: a bad value is one line naming the
variable (exit 2), before a command does any work (:func:`check`) and wherever the value is read."""

from __future__ import annotations

import math
import os


from judge.problems import DatasetError, Problem


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


# name -> (default, kind, what it bounds); kind "int": a whole number >= 1, "mb": a positive number of megabytes
NUMERIC = {
    "JUDGE_MAX_RECORD_MB": ("64", "mb", "the size of one record"),
    "JUDGE_MAX_PROBLEMS": ("50", "int", "how many problems of one file are listed"),
    "JUDGE_LOCAL_CONTEXT": ("8192", "int", "the embedded models' context in tokens"),
    # llama-cpp-python's own default is half the CPUs (for hyper-threads): on a 2-core machine one thread, half
    # the speed of two
    "JUDGE_LOCAL_THREADS": (str(_usable_cpus()), "int", "the threads each embedded model decodes with"),
}
# the largest value each may take: a number beyond it is a typo or an attack, never a setting (1e15 MB for
# one record would turn every size check off)
MAXIMUM = {"JUDGE_MAX_RECORD_MB": 100_000, "JUDGE_MAX_PROBLEMS": 1_000_000, "JUDGE_LOCAL_CONTEXT": 1_048_576, "JUDGE_LOCAL_THREADS": 1024}
# names earlier versions read: setting one does nothing now, which the user should hear about
RETIRED = {"JUDGE_MAX_DATASET_MB": "files stream now, whatever their size; JUDGE_MAX_RECORD_MB bounds one record"}


def _problem(name: str, raw: str, expected: str) -> DatasetError:
    return DatasetError([Problem(file="environment", field=name, message=f"expected {expected}, found {raw!r}")])


def number(name: str) -> float:
    """The value of a numeric JUDGE_* variable (its default when unset); DatasetError naming it when bad."""
    default, kind, _ = NUMERIC[name]
    top = MAXIMUM[name]
    raw = os.environ.get(name, default)
    shown = raw if len(raw) <= 40 else raw[:39] + "…"  # cut before it is formatted
    if kind == "int":
        digits = raw.strip()
        if not (digits.isascii() and digits.isdecimal()) or not digits.lstrip("0"):
            raise _problem(name, shown, "a whole number of at least 1")
        if len(digits.lstrip("0")) > 12 or int(digits) > top:
            raise _problem(name, shown, f"a whole number of at most {top:,}")
        return int(digits)
    try:
        value = float(raw) if len(raw) <= 40 else math.nan
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise _problem(name, shown, "a positive number of megabytes")
    if value > top:
        raise _problem(name, shown, f"at most {top:,} megabytes")
    return value


def problems_shown() -> int:
    """How many problems of one file are listed (the rest are counted): JUDGE_MAX_PROBLEMS, default 50."""
    return int(number("JUDGE_MAX_PROBLEMS"))


def check() -> list[str]:
    """Every numeric JUDGE_* variable checked (DatasetError on the first bad one); returns a warning line for
    each retired variable that is set."""
    for name in NUMERIC:
        number(name)
    return [f"warning: {name} is set but no longer read: {why}" for name, why in RETIRED.items() if name in os.environ]
