"""The writing door: every file judge writes is opened here (the reading door is judge.input_files); the rules
are SECURITY.md's. Appended or locked files: O_NOFOLLOW, a plain file with one name. Files replaced whole: a
temporary file beside it moved over the name (a link at the name is replaced, never written through). New
files: O_EXCL|O_NOFOLLOW. An output that is an input or a run directory's file is refused; a character device
or a pipe is written as such; modes come from the umask, and a replaced file keeps its own.
"""

from __future__ import annotations

import contextlib
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


def _shown(path, limit: int = 240) -> str:
    """A path as it may be printed: lone surrogates escaped, a name of thousands of characters cut."""
    text = str(path).encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o666)  # less the umask
    except FileExistsError:
        kind = "a symbolic link" if os.path.islink(path) else "there"
        raise FileExistsError(f"{_shown(path)} is already {kind}; judge writes only into new files") from None
    return os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"}))


def _umask() -> int:
    """The process's umask, read without changing it where Linux tells it (os.umask would set it for a moment,
    and another thread's file made in that moment would get the wrong mode)."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode of a new file: 0666 less the umask (what ``open(path, "w")`` would give)."""
    return 0o666 & ~_umask()


def make_temp_dir(parent: Path, prefix: str) -> Path:
    """A new folder with a random name in ``parent``, with the umask's mode (mkdtemp makes it 0700: a baseline
    folder another user or a CI step must read)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    os.chmod(folder, 0o777 & ~_umask())
    return folder


def _stream_target(path: Path, follow: bool) -> bool:
    """Whether ``path`` is a character device or a pipe to write into as such (never replaced); with
    ``follow``, also through a link (/dev/stdout, ``>(cmd)``). A block device, a socket or a folder is refused."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    if stat.S_ISLNK(st.st_mode):
        if not follow:
            return False
        try:
            st = os.stat(path)
        except OSError:
            return False
        if not (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
            return False
    kind = stat.S_IFMT(st.st_mode)
    if kind in (stat.S_IFCHR, stat.S_IFIFO):
        return True
    if kind == stat.S_IFBLK:
        raise UnsafePath(f"{_shown(path)} is a block device (a disk): judge never writes to one")
    if kind == stat.S_IFSOCK:
        raise UnsafePath(f"{_shown(path)} is a socket: judge writes files, character devices and pipes only")
    if kind == stat.S_IFDIR:
        raise UnsafePath(f"{_shown(path)}: cannot write it: is a directory, expected a file name")
    return False


def is_stream(path: Path) -> bool:
    """Whether an output path is a character device or a pipe, directly or through a link (/dev/stdout)."""
    try:
        return _stream_target(Path(path), follow=True)
    except UnsafePath:
        return False


def _open_stream(path: Path):
    """A character device or pipe opened for writing as it is: no O_CREAT, no O_TRUNC; a pipe with no reader is
    refused at once (O_NONBLOCK), not waited on forever."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise UnsafePath(f"{_shown(path)} is a pipe with no reader: nothing would read what judge writes") from None
        raise
    st = os.fstat(fd)
    if not (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):  # it changed between the look and the open
        os.close(fd)
        raise UnsafePath(f"{_shown(path)} changed while it was opened; judge writes a device or pipe only as such")
    os.set_blocking(fd, True)
    return fd


@contextlib.contextmanager
def output(path: Path, binary: bool = False, follow_streams: bool = False):
    """A file object for the whole content of ``path``, all or nothing (the module's rules); a character device
    or a pipe is written as such (``follow_streams``: also through a link, as /dev/stdout is); a block device,
    a socket or a folder is refused (UnsafePath)."""
    path = Path(path)
    kwargs = {} if binary else {"encoding": "utf-8", "errors": "surrogatepass"}
    if _stream_target(path, follow_streams):
        with os.fdopen(_open_stream(path), "wb" if binary else "w", **kwargs) as f:
            yield f
        return
    try:
        st = os.lstat(path)
        mode = stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else file_mode()
    except OSError:
        mode = file_mode()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:200]}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb" if binary else "w", **kwargs) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def replace_with(path: Path, parts, binary: bool = False, follow_streams: bool = False) -> None:
    """Write ``parts`` to ``path`` through :func:`output`: all or nothing, a link at ``path`` replaced, never
    followed; a device or a pipe written as such."""
    with output(path, binary, follow_streams) as f:
        for part in parts:
            f.write(part)


def write_new(path: Path, parts, binary: bool = False) -> None:
    """``parts`` into a new file at ``path`` (refused when anything has its name, :func:`open_new`), or into a
    character device or pipe as such (/dev/null, /dev/stdout)."""
    path = Path(path)
    if _stream_target(path, follow=True):
        replace_with(path, parts, binary, follow_streams=True)
        return
    with open_new(path, binary) as f:
        for part in parts:
            f.write(part)


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
    try:
        if _stream_target(path, follow=True):
            return  # /dev/null, /dev/stdout, a pipe: written as such, nothing replaced
    except UnsafePath as e:
        raise UnsafePath(f"{flag} {e}") from None
    if path.name == "" or os.path.isdir(path):
        raise UnsafePath(f"{flag} {shown} is a directory, expected a file name")
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
