"""What every adapter shares: reading files with clear errors, the loaded result, and span checking."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Literal

from judge.boundary import DuplicateKey, Refused, loads, problem_of
from judge.env import problems_shown
from judge.problems import Problem, field_path, problems_from_validation


@dataclass
class SpanRef:
    """A gold span as the file states it, and where it sits in the raw data (so a repair can patch it)."""

    record_id: str
    field: str  # e.g. claims[0].attribution[1]
    raw_path: tuple  # keys from the raw document down to the span's dict
    source: str  # the text the offsets point into
    start: int
    end: int
    excerpt: str
    style: Literal["start_end", "answer_start"] = "start_end"


class ProblemList(list):
    """The problems of one file: the first ``limit`` (JUDGE_MAX_PROBLEMS, default 50) are kept, the rest are
    counted in one closing line, so a file with a million bad fields costs neither memory nor a flood."""

    def __init__(self, file: str = "", limit: int | None = None):
        super().__init__()
        self.file = file
        self.limit = problems_shown() if limit is None else limit
        self.total = 0
        self._more: Problem | None = None

    def append(self, problem: Problem) -> None:  # type: ignore[override]
        self.total += 1
        if self.total <= self.limit:
            super().append(problem)
        else:
            self._update_more(problem.file)

    def _update_more(self, file: str) -> None:
        text = f"... and {self.total - self.limit} more problems ({self.total} in all; the first {self.limit} are listed, JUDGE_MAX_PROBLEMS sets how many)"
        if self._more is None:
            self._more = Problem(file=self.file or file, message=text)
            super().append(self._more)
        else:
            self._more.message = text

    def extend(self, problems) -> None:  # type: ignore[override]
        for p in problems:
            self.append(p)

    @property
    def room(self) -> int:
        """How many more problems would still be listed (to ask a validator for no more than that)."""
        return max(1, self.limit - self.total)

    def add_validation(self, error, file: str, record_id: str | None, prefix: tuple = ()) -> None:
        """A pydantic error's first problems, and the rest counted (never all converted)."""
        shown = problems_from_validation(error, file, record_id, prefix, limit=self.room)
        self.extend(shown)
        self.count(error.error_count() - len(shown), file)

    def count(self, n: int, file: str = "") -> None:
        """``n`` more problems, counted but not listed."""
        if n > 0:
            self.total += n
            self._update_more(file)


@dataclass
class Loaded:
    """Everything an adapter read: typed items, every problem (the first N and a count), the gold spans."""

    path: str
    format: str
    items: list = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    spans: list[SpanRef] = field(default_factory=list)

    def __post_init__(self):
        if not isinstance(self.problems, ProblemList):
            problems, self.problems = self.problems, ProblemList(self.path)
            self.problems.extend(problems)


def max_record_bytes() -> int:
    """Files are streamed, so their size is free; one record (a JSONL line, an array item) is read whole, and
    one larger than this (JUDGE_MAX_RECORD_MB, default 64) is refused rather than risking the memory."""
    from judge.env import number

    return int(number("JUDGE_MAX_RECORD_MB") * 1e6)


MAX_DEPTH = 64  # JSON nesting deeper than any of our formats needs (and far below Python's recursion limit)
# ijson's C backend turns a whole read buffer into events before yielding one, each with its prefix string
# ("item.item.item..."): a buffer of n opening brackets costs O(n^2) memory before the depth check above can
# stop it (200,000 brackets in a 64 KB buffer: 10 GB). A small buffer bounds that at a few MB.
PARSE_BUFFER = 4096


def too_large(size: int, where: str) -> str:
    return (f"{where} is {size / 1e6:.1f} MB, over the {max_record_bytes() / 1e6:.0f} MB limit for one record; "
            "split the record, or raise JUDGE_MAX_RECORD_MB if the machine has the memory")


def _open(path: Path, problems: list[Problem]):
    """The one door (judge.files.open_input): a file, or a stream read once; an OS error is one problem."""
    from judge.input_files import InputFileError, open_input

    try:
        return open_input(path)
    except InputFileError as e:
        problems.append(Problem(file=str(path), message=e.reason))
        return None


def _children(value: dict | list):
    return iter(value.items()) if isinstance(value, dict) else enumerate(value)


def scan(obj: Any) -> tuple[str, tuple[str, int, str] | None] | None:
    """One iterative walk over a decoded record (memory in the depth only): ("deep", None) past MAX_DEPTH,
    ("surrogate", (field path, index, the surrogate)) for the first lone UTF-16 surrogate, else None."""
    if isinstance(obj, str):
        m = _SURROGATE.search(obj)
        return ("surrogate", ("", m.start(), m.group())) if m else None
    if not isinstance(obj, (dict, list)):
        return None
    stack, keys = [_children(obj)], []
    while stack:
        for key, value in stack[-1]:
            for text, where in (((key, None), (value, key)) if isinstance(key, str) else ((value, key),)):
                if isinstance(text, str):
                    m = _SURROGATE.search(text)
                    if m:
                        path = tuple(keys) + ((where,) if where is not None else ())
                        return "surrogate", (field_path(path), m.start(), m.group())
            if isinstance(value, (dict, list)):
                if len(stack) >= MAX_DEPTH:
                    return "deep", None
                keys.append(key)
                stack.append(_children(value))
                break
        else:
            stack.pop()
            if keys:
                keys.pop()
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")


def add_validation(problems: list[Problem], error, file: str, record_id: str | None, prefix: tuple = ()) -> None:
    """A pydantic error into ``problems``: into a ProblemList its first problems and a count of the rest."""
    if isinstance(problems, ProblemList):
        problems.add_validation(error, file, record_id, prefix)
    else:
        problems.extend(problems_from_validation(error, file, record_id, prefix))


def usable(obj: Any, file: str, record_id: str, problems: list[Problem]) -> bool:
    """False (and the problem noted) when a decoded record nests too deep or holds a lone surrogate."""
    problem = decoded_problem(obj, file, record_id)
    if problem is not None:
        problems.append(problem)
    return problem is None


def decoded_problem(obj: Any, file: str, record_id: str) -> Problem | None:
    """What makes a decoded record unusable before any schema: nesting too deep, a lone surrogate."""
    found = scan(obj)
    if found is None:
        return None
    if found[0] == "deep":
        return Problem(file=file, record_id=record_id, message=f"JSON nested deeper than {MAX_DEPTH} levels; no record of these formats needs that")
    where, at, char = found[1]
    escaped = char.encode("utf-8", "backslashreplace").decode()
    return Problem(file=file, record_id=record_id, field=where or None,
                   message=f"expected Unicode text, found a lone surrogate {escaped} at character {at} (a broken \\u escape); fix or remove it")


def iter_jsonl(path: Path, problems: list[Problem]) -> Iterator[tuple[int, int, Any]]:
    """(line number, byte offset, object) for every non-blank line that parses, read one line at a time; a
    problem for every line that does not (malformed, not UTF-8, too large, too deep)."""
    f = _open(path, problems)
    if f is None:
        return
    cap = max_record_bytes()
    with f:
        offset, lineno = 0, 0
        while True:
            line = f.readline(cap + 1)
            if not line:
                return
            lineno += 1
            start = offset
            offset += len(line)
            if len(line) > cap and not line.endswith(b"\n"):
                size = len(line)
                while True:  # skip the rest of the line without holding it
                    chunk = f.readline(1 << 20)
                    offset += len(chunk)
                    size += len(chunk)
                    if not chunk or chunk.endswith(b"\n"):
                        break
                problems.append(Problem(file=str(path), record_id=f"line {lineno}", message=too_large(size, "the line")))
                continue
            if lineno == 1 and line.startswith(b"\xef\xbb\xbf"):
                line, start = line[3:], start + 3
            if not line.strip():
                continue
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as e:
                problems.append(Problem(file=str(path), record_id=f"line {lineno}",
                                        message=f"not valid UTF-8 (byte {start + e.start} of the file: {line[e.start:e.start + 4]!r})"))
                continue
            try:
                obj = loads(text)
            except json.JSONDecodeError as e:
                problems.append(Problem(file=str(path), record_id=f"line {lineno}", message=f"malformed JSON, column {e.colno}: {e.msg}"))
                continue
            except Refused as e:  # a key twice, NaN, 1e999, 5000 digits
                problems.append(Problem(file=str(path), record_id=f"line {lineno}", field=e.field, message=str(e)))
                continue
            except RecursionError:
                problems.append(Problem(file=str(path), record_id=f"line {lineno}", message=f"JSON nested deeper than {MAX_DEPTH} levels; no record of these formats needs that"))
                continue
            yield lineno, start, obj


class _Counting:
    """A binary file that counts the bytes read (to bound one array item's size while it streams)."""

    def __init__(self, f):
        self.f, self.pos, self.lines = f, 0, 1

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(n)
        self.pos += len(data)
        self.lines += data.count(b"\n")
        return data


class _Stop(Exception):
    pass


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_escapes_seen: dict[tuple, bool] = {}


def has_surrogate_escapes(path: Path) -> bool:
    """Whether a file holds any \\uD800-\\uDFFF escape (remembered per file version): ijson's C backend turns a
    lone surrogate into "?" without a word, so such a file is parsed by the pure-Python backend."""
    from judge.input_files import input_stat, open_input

    st = input_stat(path)
    key = (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _escapes_seen:
        found, tail = False, b""
        with open_input(path) as f:
            while chunk := f.read(1 << 22):
                if _SURROGATE_ESCAPE.search(tail + chunk):
                    found = True
                    break
                tail = chunk[-5:]
        _escapes_seen[key] = found
    return _escapes_seen[key]


def iter_json_items(path: Path, problems: list[Problem], prefix: str = "item") -> Iterator[tuple[int, Any]]:
    """(index, item) of every element of the JSON array at ``prefix`` ("item", "data.item"), streamed one item
    at a time, nesting and size bounded, so a hostile file gives one problem, never a crash."""
    import ijson
    from ijson.common import ObjectBuilder

    f = _open(path, problems)
    if f is None:
        return
    backend = ijson.get_backend("python") if has_surrogate_escapes(path) else ijson
    cap = max_record_bytes()
    file = str(path)
    kinds = {"start_map": "an object", "start_array": "an array"}
    with f:
        if f.read(3) != b"\xef\xbb\xbf":
            f.seek(0)
        reader = _Counting(f)
        index, builder, depth, item_depth, started, first = 0, None, 0, 0, 0, True
        try:
            for where, event, value in backend.parse(reader, use_float=True, buf_size=PARSE_BUFFER):
                if first and prefix == "item" and event != "start_array":
                    problems.append(Problem(file=file, message=f"expected a JSON array of records, found {kinds.get(event, 'a ' + event)}"))
                    return
                first = False
                if builder is None:
                    if where != prefix or event in ("end_array", "end_map", "map_key"):
                        if event in ("start_map", "start_array"):
                            depth += 1
                            if depth > MAX_DEPTH:
                                raise _Stop(f"JSON nested deeper than {MAX_DEPTH} levels; no record of these formats needs that")
                        elif event in ("end_map", "end_array"):
                            depth -= 1
                        continue
                    builder, item_depth, started, keys = ObjectBuilder(), 0, reader.pos, []
                if event == "start_map":  # the keys of each open object, kept here (ijson's builder keeps no dict
                    keys.append(set())    # to look in before 3.6: a second value would replace the first)
                elif event == "end_map":
                    keys.pop()
                elif event == "map_key":
                    if value in keys[-1]:
                        raise _Stop(f"item {index}: {DuplicateKey(value)}")
                    keys[-1].add(value)
                builder.event(event, value)
                if event in ("start_map", "start_array"):
                    item_depth += 1
                    if depth + item_depth > MAX_DEPTH:
                        raise _Stop(f"item {index}: JSON nested deeper than {MAX_DEPTH} levels; no record of these formats needs that")
                elif event in ("end_map", "end_array"):
                    item_depth -= 1
                if reader.pos - started > cap + (1 << 16):
                    raise _Stop(too_large(reader.pos - started, f"item {index}"))
                if item_depth == 0:
                    yield index, builder.value
                    index, builder = index + 1, None
        except _Stop as e:
            problems.append(Problem(file=file, message=f"{e}; reading stopped there"))
        except ijson.JSONError as e:
            where = f"line {reader.lines}" if reader.lines > 1 or reader.pos < (1 << 16) else f"byte {reader.pos}"
            problems.append(Problem(file=file, message=f"malformed JSON at {where} (after {index} items): {str(e).splitlines()[0][:200]}"))
        except UnicodeDecodeError as e:
            problems.append(Problem(file=file, message=f"not valid UTF-8 near byte {reader.pos}: {e.reason}"))


def read_text(path: Path, problems: list[Problem], limit: int | None = None) -> str | None:
    """A whole small file (a qrels table, a manifest) as text; with ``limit``: None (and no problem) when the
    file is longer, for a caller that then reads it line by line."""
    f = _open(path, problems)
    if f is None:
        return None
    with f:
        try:
            data = f.read() if limit is None else f.read(limit + 1)
        except OSError as e:  # a read that fails after the open (EIO)
            from judge.input_files import os_error_reason

            problems.append(Problem(file=str(path), message=os_error_reason(e)))
            return None
    if limit is not None and len(data) > limit:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        problems.append(Problem(file=str(path), message=f"not valid UTF-8 (byte {e.start}: {data[e.start:e.start + 4]!r})"))
        return None


def read_json(path: Path, problems: list[Problem]) -> Any:
    """A whole JSON document (small side files; datasets stream with iter_json_items)."""
    text = read_text(path, problems)
    if text is None:
        return None
    try:
        value = loads(text)
    except json.JSONDecodeError as e:
        problems.append(Problem(file=str(path), message=f"malformed JSON at line {e.lineno}, column {e.colno}: {e.msg}"))
    except Refused as e:
        problems.append(Problem(file=str(path), field=e.field, message=str(e)))
    except RecursionError:
        problems.append(Problem(file=str(path), message=f"JSON nested deeper than {MAX_DEPTH} levels; no file of these formats needs that"))
    else:
        problem = problem_of(value, str(path))  # the input boundary: depth, lone surrogates, numbers in range
        if problem is None:
            return value
        problems.append(problem)
    return None


def read_jsonl(path: Path, problems: list[Problem]) -> list[tuple[int, Any]]:
    """(line number, object) of every line that parses and passes the input boundary (judge.boundary: depth,
    lone surrogates, numbers in range), collected; a problem for every other line."""
    out = []
    for lineno, _, obj in iter_jsonl(path, problems):
        problem = problem_of(obj, str(path), f"line {lineno}")
        if problem is None:
            out.append((lineno, obj))
        else:
            problems.append(problem)
    return out


def check_span(ref: SpanRef, file: str) -> list[Problem]:
    """Offsets in range and ``source[start:end] == excerpt``; one problem naming the field otherwise."""
    if span_ok(ref):
        return []
    def at(name: str, message: str) -> list[Problem]:
        return [Problem(file=file, record_id=ref.record_id, field=f"{ref.field}.{name}", message=message)]

    start_field = "answer_start" if ref.style == "answer_start" else "start_char"
    n = len(ref.source)
    if not (0 <= ref.start < ref.end <= n):
        name = start_field if not 0 <= ref.start < n else ("end_char" if ref.style == "start_end" else "text")
        return at(name, f"span [{ref.start}, {ref.end}) out of range for a source of {n} characters")
    actual = ref.source[ref.start : ref.end]
    excerpt_field = "text" if ref.style == "answer_start" else "source_excerpt"
    return at(excerpt_field, f"source[{ref.start}:{ref.end}] is {_short(actual)} but the excerpt is {_short(ref.excerpt)}")


def span_ok(ref: SpanRef) -> bool:
    """The one rule a gold span must meet: offsets in range and ``source[start:end] == excerpt``."""
    return 0 <= ref.start < ref.end <= len(ref.source) and ref.source[ref.start : ref.end] == ref.excerpt


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def record_id_of(obj: Any, index: int, key: str = "id") -> str:
    if isinstance(obj, dict) and isinstance(obj.get(key), str) and obj[key]:
        return obj[key]
    return f"item {index}"
