"""The two doors of the file system: every file judge reads as input is opened by :func:`open_input`, and
every file it writes (a run directory's files, a starter project, a comparison's Markdown, an agreement
page, aligned rows) by the writers below.

Reading (:func:`open_input`): a regular file is opened as it is; a stream (a pipe, ``<(cmd)``, /dev/stdin, a
character device) is read once, into a temporary file that every later reader of the same path shares, so
a format sniff never consumes what the loader then needs; a line of a stream longer than one record
(JUDGE_MAX_RECORD_MB) stops it, so /dev/zero is one line, not a full disk. Every OS error (missing, a
directory, a link loop, a name too long, permission, EIO) is one :class:`InputFileError` line naming the path.

Writing:

- A file appended to (results.jsonl, calls.jsonl, run.log) or locked (run.lock) is opened with O_NOFOLLOW,
  and must be a plain file with one name (a hard link would write into another file's data).
- A file replaced whole (summary.json, reports, a rewritten results.jsonl) is written to a new temporary
  file beside it (O_EXCL, a random name) and moved over the name: a link at the name is replaced, never
  written through, so the file it pointed at is left as it was.
- A new file (judge init, an agreement page) is created with O_EXCL|O_NOFOLLOW: refused when anything,
  a dangling link included, already has its name.
- An output path that is one of the command's inputs, or a file of a run directory, is refused.
- An output that is a character device or a pipe (/dev/null, /dev/stdout, ``>(cmd)``) is written as such,
  never replaced by a regular file; a block device, a socket or a directory is refused in one line.
- New files and folders take their modes from the umask (0666 and 0777 masked), as any tool's output does; a
  file replaced keeps the mode it had.
"""

from __future__ import annotations

import contextlib
import errno
import io
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


class InputFileError(InputError, ValueError):
    """A path that cannot be read or written, as one line naming it (exit 2 at the CLI); ``reason``: the line
    without the path (for a Problem, which names the file itself)."""

    def __init__(self, line: str, reason: str | None = None):
        super().__init__(line)
        self.reason = reason or line


NUL_SHOWN = "\\0"
_WHY = {
    errno.ENOENT: "does not exist",
    errno.EISDIR: "is a directory, expected a file",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.ELOOP: "is a loop of symbolic links",
    errno.ENAMETOOLONG: "the name is too long for the file system (at most 255 bytes a name)",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EIO: "input/output error (a failing disk, network mount or device)",
    errno.ENXIO: "no such device, or a pipe with no reader",
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "over the disk quota",
    errno.EROFS: "the file system is read-only",
    errno.EMFILE: "too many open files",
    errno.EFBIG: "file too large",
    errno.ETXTBSY: "the file is busy",
}


def os_error_reason(error: BaseException, doing: str = "read") -> str:
    """What an OS error (or a path holding a NUL byte) means, without the path: "cannot read it: why"."""
    if isinstance(error, ValueError):
        return "a path cannot hold a NUL byte"
    if getattr(error, "errno", None) in (errno.ENOENT, errno.EISDIR):
        return _WHY[error.errno]
    why = _WHY.get(getattr(error, "errno", None)) or (getattr(error, "strerror", None) or str(error) or type(error).__name__)
    return f"cannot {doing} it: {why}"


def os_error_line(error: BaseException, path=None, doing: str = "read") -> str:
    """An OS error (or a path holding a NUL byte) as one line naming the path: "PATH: cannot read it: why"."""
    name = path if path is not None else getattr(error, "filename", None)
    reason = os_error_reason(error, doing)
    if name is None:
        return reason
    return f"{_shown(str(name).replace(chr(0), NUL_SHOWN))}: {reason}"


def describe_os_error(error: OSError) -> str:
    """Any OS error as one line, naming the path(s) it carries: the CLI's last word on an OSError that no door
    turned into an InputFileError (a path.is_dir() on a name too long, a folder that cannot be made)."""
    if getattr(error, "errno", None) is None:
        return str(error)
    why = _WHY.get(error.errno) or error.strerror or type(error).__name__
    names = [_shown(n) for n in (error.filename, getattr(error, "filename2", None)) if n is not None]
    if not names:
        return why[0].upper() + why[1:]
    return f"{names[0]}: {why}" + (f" ({names[1]})" if len(names) > 1 else "")


def file_error(error: BaseException, path, doing: str = "read") -> InputFileError:
    """An OS error as an InputFileError naming ``path``."""
    return InputFileError(os_error_line(error, path, doing), os_error_reason(error, doing))


def _input_line(path, what: str) -> str:
    return f"{what} {path}" if what else str(path)


class _Input(io.BufferedReader):
    """A file opened by :func:`open_input`: a read that fails after the open (EIO from a failing disk or
    mount) is one InputFileError naming the path, like a failed open."""

    shown = ""

    def _failed(self, e: OSError) -> InputFileError:
        return file_error(e, self.shown)

    def read(self, *args):
        try:
            return super().read(*args)
        except OSError as e:
            raise self._failed(e) from None

    def read1(self, *args):
        try:
            return super().read1(*args)
        except OSError as e:
            raise self._failed(e) from None

    def readline(self, *args):
        try:
            return super().readline(*args)
        except OSError as e:
            raise self._failed(e) from None

    def readinto(self, *args):
        try:
            return super().readinto(*args)
        except OSError as e:
            raise self._failed(e) from None

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line


_STREAMS: dict[tuple, tuple] = {}  # (st_dev, st_ino, st_rdev) of a stream -> (the stream, held open; its copy)


def open_input(path, what: str = ""):
    """``path`` opened for binary reading: a regular file as it is, a stream (pipe, /dev/stdin, a character
    device) through its one copy (:func:`spooled`). Anything else, or any OS error, is one InputFileError line
    naming the path (``what``: "the corpus", "--predictions"...)."""
    try:
        name = os.fspath(path)
        if "\0" in str(name):
            raise ValueError("embedded null byte")
        st = os.stat(name)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", name)
        if stat.S_ISBLK(st.st_mode):
            reason = "is a block device (a disk), expected a file or a stream"
            raise InputFileError(f"{_shown(_input_line(path, what))}: {reason}", reason)
        if not stat.S_ISREG(st.st_mode):
            name = spooled(name, st, _input_line(path, what))
        f = _Input(io.FileIO(name, "rb"))
        f.shown = _input_line(path, what)
        return f
    except (OSError, ValueError) as e:
        if isinstance(e, InputFileError):
            raise
        raise file_error(e, _input_line(path, what)) from None


def input_stat(path) -> os.stat_result:
    """The stat of what :func:`open_input` reads (a stream's copy, not the pipe); OSError as os.stat."""
    name = os.fspath(path)
    st = os.stat(name)
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
        return st
    return os.stat(spooled(name, st))


def spooled(name: str, st: os.stat_result | None = None, shown: str | None = None) -> str:
    """The path of the one copy of the stream at ``name``: read once, the first time any reader opens it, and
    shared by every later reader (a sniff, then the loader, then a second pass). The stream stays open while
    its copy is kept, so no other pipe can take its identity. A line longer than one record
    (JUDGE_MAX_RECORD_MB) stops the copy with one line: an endless stream (/dev/zero) never fills the disk."""
    import atexit

    from judge.env import number

    st = st or os.stat(name)
    key = (st.st_dev, st.st_ino, st.st_rdev)
    if key in _STREAMS:
        return _STREAMS[key][1]
    cap = int(number("JUDGE_MAX_RECORD_MB") * 1e6)
    stream = open(name, "rb", buffering=0)
    fd, copy = tempfile.mkstemp(prefix="judge-stream-")
    try:
        with os.fdopen(fd, "wb") as out:
            line, lineno = 0, 1
            while block := _read_stream(stream, shown or name):
                out.write(block)
                end = block.rfind(b"\n")
                lineno += block.count(b"\n")
                line = len(block) - end - 1 if end >= 0 else line + len(block)
                if line > cap:
                    reason = (f"line {lineno} of this stream is over {cap / 1e6:.0f} MB, the limit for one record (JUDGE_MAX_RECORD_MB); "
                              "a stream is read one record a line: is this the right input?")
                    raise InputFileError(f"{_shown(name)}: {reason}", reason)
    except BaseException:
        stream.close()
        os.unlink(copy)
        raise
    if not _STREAMS:
        atexit.register(forget_streams)
    _STREAMS[key] = (stream, copy)
    return copy


def _read_stream(stream, shown: str) -> bytes:
    try:
        return stream.read(1 << 20)
    except OSError as e:
        raise file_error(e, shown) from None


def forget_streams() -> None:
    """Close the streams read so far and delete their copies (at exit, and when a command ends)."""
    while _STREAMS:
        stream, copy = _STREAMS.popitem()[1]
        stream.close()
        try:
            os.unlink(copy)
        except OSError:
            pass


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
        raise UnsafePath(f"{_shown(path)} is a directory, expected a file name")
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
    """A file object for the whole content of ``path``, all or nothing. A regular file (or none) is written to
    a temporary file beside it and moved over the name when the block ends without an error (a link at the
    name is replaced, never followed; a file replaced keeps its mode, a new one takes the umask's). A
    character device or a pipe is written as such (``follow_streams``: also through a link, as /dev/stdout
    is); a block device, a socket or a folder is refused (UnsafePath)."""
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
