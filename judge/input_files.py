"""The reading door: every file judge reads as input is opened by :func:`open_input` (the writing door is
judge.files).

A regular file is opened as it is; a stream (a pipe, ``<(cmd)``, /dev/stdin, a character device) is read
once, into a temporary file that every later reader of the same path shares, so a format sniff never
consumes what the loader then needs; a line of a stream longer than one record (JUDGE_MAX_RECORD_MB) stops
it, so /dev/zero is one line, not a full disk. Every OS error (missing, a directory, a link loop, a name too
long, permission, EIO during a read) is one :class:`InputFileError` line naming the path.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import tempfile

from judge.errors import InputError
from judge.files import _shown


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
    import codecs

    cap = int(number("JUDGE_MAX_RECORD_MB") * 1e6)
    stream, first = _open_stream(name, st, shown or name)
    text = codecs.getincrementaldecoder("utf-8")("strict")  # every stream judge reads is text (JSONL, YAML, TSV)
    fd, copy = tempfile.mkstemp(prefix="judge-stream-")
    try:
        with os.fdopen(fd, "wb") as out:
            line, lineno, read = 0, 1, 0
            while block := (first if first else _read_stream(stream, shown or name)):
                first = b""
                try:
                    text.decode(block)
                except UnicodeDecodeError as e:  # /dev/urandom: an endless stream of short "lines" that is no text
                    reason = (f"byte {read + e.start} of this stream is not UTF-8: a stream is read as text (JSONL, YAML); "
                              "is this the right input?")
                    raise InputFileError(f"{_shown(name)}: {reason}", reason) from None
                read += len(block)
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


FIFO_WRITER_WAIT_S = 2.0  # how long a named pipe may have no writer at all before it is refused (a writer then waits for data as long as it takes)


def _open_stream(name: str, st: os.stat_result, shown: str):
    """(the stream opened for reading, its first bytes). A pipe is opened without blocking: one no process has
    opened for writing within FIFO_WRITER_WAIT_S is one InputFileError line (a FIFO nobody writes to hung every
    command that read it); one with a writer is then read as slowly as it writes."""
    import time

    if not stat.S_ISFIFO(st.st_mode):
        return open(name, "rb", buffering=0), b""
    fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK)
    try:
        until, first = time.monotonic() + FIFO_WRITER_WAIT_S, b""
        while True:
            try:
                first = os.read(fd, 1 << 20)
            except BlockingIOError:  # a writer holds it open, no data yet: wait for it as a blocking read does
                break
            if first:
                break
            if time.monotonic() >= until:  # a read of a pipe no process holds open says end of file at once
                reason = f"is a pipe no process writes to (none opened it within {FIFO_WRITER_WAIT_S:g} s); judge would wait forever"
                raise InputFileError(f"{_shown(shown)}: {reason}", reason)
            time.sleep(0.05)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=0), first
    except BaseException:
        os.close(fd)
        raise


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


def _kind(mode: int) -> str:
    if stat.S_ISCHR(mode):
        return "a character device (such as /dev/zero or /dev/urandom)"
    if stat.S_ISBLK(mode):
        return "a block device (a disk)"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a plain file"


def open_plain(path, what: str = ""):
    """A file judge wrote and reads back (a run directory's results, summary, scores, run.json, calls; a
    baseline's marker): a plain file, a link to one followed, opened as it is. A device, a pipe, a socket or a
    folder in its place is one InputFileError line and is never read (/dev/zero or /dev/urandom at
    summary.json was a MemoryError): no file judge writes is one."""
    shown = _input_line(path, what)
    try:
        name = os.fspath(path)
        if "\0" in str(name):
            raise ValueError("embedded null byte")
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))  # a pipe never blocks the open
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                reason = f"is {_kind(st.st_mode)}, not a plain file; judge writes its files as plain files (the folder was edited)"
                raise InputFileError(f"{_shown(shown)}: {reason}", reason)
        except BaseException:
            os.close(fd)
            raise
        f = _Input(io.FileIO(fd, "rb"))
        f.shown = shown
        return f
    except (OSError, ValueError) as e:
        if isinstance(e, InputFileError):
            raise
        raise file_error(e, shown) from None


def max_file_bytes() -> int:
    """The most a whole JSON file judge reads back may hold (summary.json, scores.json, run.json, a marker):
    four records' worth (JUDGE_MAX_RECORD_MB each)."""
    from judge.env import number

    return int(number("JUDGE_MAX_RECORD_MB") * 4e6)


def read_plain(path, what: str = "", limit: int | None = None) -> bytes:
    """The bytes of a plain file (:func:`open_plain`), at most ``limit`` (default :func:`max_file_bytes`): a
    file over it is one InputFileError line, read no further (a 100 GB sparse summary.json never fills memory)."""
    follows_env = limit is None
    limit = max_file_bytes() if limit is None else limit
    with open_plain(path, what) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        reason = f"is over {limit / 1e6:,.0f} MB, more than judge ever writes there" + (" (the limit follows JUDGE_MAX_RECORD_MB)" if follows_env else "")
        raise InputFileError(f"{_shown(_input_line(path, what))}: {reason}", reason)
    return data


def plain_lines(f, shown: str = ""):
    """(line number, line) of an opened file, each line read with the one-record bound (JUDGE_MAX_RECORD_MB):
    a longer line is one InputFileError naming the file and the line, never read whole. A torn last line (no
    newline) is yielded as it is; a caller skips it."""
    from judge.env import number

    cap = int(number("JUDGE_MAX_RECORD_MB") * 1e6)
    shown = shown or getattr(f, "shown", "") or getattr(f, "name", "")
    i = 0
    while line := f.readline(cap + 1):
        i += 1
        if len(line) > cap and not line.endswith(b"\n"):
            reason = f"line {i} is over {cap / 1e6:,.0f} MB, the limit for one record (JUDGE_MAX_RECORD_MB)"
            raise InputFileError(f"{_shown(str(shown))}: {reason}", reason)
        yield i, line
