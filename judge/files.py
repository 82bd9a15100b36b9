"""Writing files without following links: every file judge writes (a run directory's files, a starter
project, a comparison's Markdown, an agreement page) is opened here.

- A file appended to (results.jsonl, calls.jsonl, run.log) or locked (run.lock) is opened with O_NOFOLLOW,
  and must be a plain file with one name (a hard link would write into another file's data).
- A file replaced whole (summary.json, reports, a rewritten results.jsonl) is written to a new temporary
  file beside it (O_EXCL, a random name) and moved over the name: a link at the name is replaced, never
  written through, so the file it pointed at is left as it was.
- A new file (judge init, an agreement page) is created with O_EXCL|O_NOFOLLOW: refused when anything,
  a dangling link included, already has its name.
- An output path that is one of the command's inputs, or a file of a run directory, is refused.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

from judge.errors import InputError

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
SELECTION_FILE = "selected.ids"  # the ids of the records a run takes (judge.runs.selection)
RUN_FILES = ("results.jsonl", "calls.jsonl", "run.log", "run.lock", "run.json", "config.yaml", SELECTION_FILE, "summary.json",
             "scores.json", "report.md", "report.html")


class UnsafePath(InputError, ValueError):
    """A path judge will not write through (a link, a file with several names, a run's own file, an input)."""


def _shown(path) -> str:
    return str(path).encode("utf-8", "backslashreplace").decode("utf-8")


def _refuse_link(path: Path, e: OSError) -> None:
    if e.errno in (errno.ELOOP, errno.EMLINK) or (os.path.islink(path)):
        raise UnsafePath(f"{_shown(path)} is a symbolic link: judge never writes through a link (remove it, or point judge at the real file)") from None


def check_plain(fd: int, path: Path) -> None:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise UnsafePath(f"{_shown(path)} is not a plain file: judge writes only plain files")
    if st.st_nlink > 1:
        os.close(fd)
        raise UnsafePath(f"{_shown(path)} has {st.st_nlink} names (a hard link): writing it would change another file too; copy it instead")


def open_fd(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` with O_NOFOLLOW; a link is an UnsafePath naming it, a non-plain or hard-linked file too."""
    try:
        fd = os.open(path, flags | NOFOLLOW, mode)
    except OSError as e:
        _refuse_link(path, e)
        raise
    check_plain(fd, path)
    return fd


def open_append(path: Path, binary: bool = False):
    """A file object appending to ``path`` (created if absent), never through a link."""
    fd = open_fd(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    return os.fdopen(fd, "ab" if binary else "a", **({} if binary else {"encoding": "utf-8"}))


def open_update(path: Path):
    """``path`` opened for reading and writing in place (r+b), never through a link."""
    return os.fdopen(open_fd(path, os.O_RDWR), "r+b")


def open_new(path: Path, binary: bool = False):
    """A new file at ``path``: refused (FileExistsError) when anything has its name, a dangling link too."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o644)
    except FileExistsError:
        kind = "a symbolic link" if os.path.islink(path) else "there"
        raise FileExistsError(f"{_shown(path)} is already {kind}; judge writes only into new files") from None
    return os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"}))


def replace_with(path: Path, parts, binary: bool = False) -> None:
    """Write ``parts`` to a new temporary file beside ``path`` and move it over ``path``: all or nothing, and a
    link at ``path`` is replaced, never followed."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as f:
            for part in parts:
                f.write(part)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def run_dir_of(path: Path) -> Path | None:
    """The run directory ``path`` is in (a folder holding run.json, at or above it), or None."""
    try:
        here = Path(os.path.abspath(path))
    except (OSError, ValueError):
        return None
    for folder in (here.parent, *here.parent.parents):
        if (folder / "run.json").is_file():
            return folder
    return None


def check_output(path: Path, inputs=(), flag: str = "output") -> None:
    """Refuse an output path that is one of ``inputs`` (the same file, through any link), that is a file of a
    run directory (results, calls, reports: only judge's own writers replace those), or a link."""
    path = Path(path)
    shown = _shown(path)
    if os.path.islink(path):
        raise UnsafePath(f"{flag} {shown} is a symbolic link: judge never writes through a link")
    target = Path(os.path.realpath(path))
    for i in inputs:
        try:
            same = Path(i).exists() and (target == Path(os.path.realpath(i)) or (target.exists() and os.path.samefile(target, i)))
        except (OSError, ValueError):
            same = False
        if same:
            raise UnsafePath(f"{flag} {shown} is an input of this command ({_shown(i)}); write the output elsewhere")
        if Path(i).is_dir() and Path(os.path.realpath(i)) in (target.parent, *target.parents):
            raise UnsafePath(f"{flag} {shown} is inside {_shown(i)}, an input of this command; write the output elsewhere")
    run_dir = run_dir_of(target)
    if run_dir is not None and (target.name in RUN_FILES or target.exists()):
        raise UnsafePath(f"{flag} {shown} is a file of the run directory {_shown(run_dir)}; write the output elsewhere")
