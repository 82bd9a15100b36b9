"""JSON written piece by piece, and lists held on disk, so that a run's scores never sit whole in memory.
:func:`json_parts` cuts only between whole lines, so a secret (always inside one JSON string) is never split
between two parts and each part can be redacted on its own.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator

SPILL_BYTES = 1 << 20  # a DiskList stays in memory up to this many bytes, then moves to a temporary file


class DiskList:
    """Append-only list of JSON values, kept as JSON lines in memory up to SPILL_BYTES, then in a temporary file
    (deleted when the list goes). Iterating reads the values back one at a time; iterations may overlap."""

    def __init__(self, items=()):
        self._lines: list[bytes] = []
        self._held = 0
        self._file = None
        self._len = 0
        for item in items:
            self.append(item)

    def append(self, value) -> None:
        line = json.dumps(value, ensure_ascii=True).encode("ascii") + b"\n"  # ascii: lone surrogates survive the trip
        self._len += 1
        if self._file is None:
            self._lines.append(line)
            self._held += len(line)
            if self._held > SPILL_BYTES:
                self._file = tempfile.TemporaryFile()
                self._file.write(b"".join(self._lines))
                self._lines, self._held = [], 0
        else:
            self._file.write(line)

    def __len__(self) -> int:
        return self._len

    def __bool__(self) -> bool:
        return self._len > 0

    def __iter__(self) -> Iterator:
        if self._file is None:
            for line in list(self._lines):
                yield json.loads(line)
            return
        self._file.flush()
        fd, at, rest = self._file.fileno(), 0, b""
        while True:
            block = os.pread(fd, 1 << 16, at)
            if not block:
                break
            at += len(block)
            lines = (rest + block).split(b"\n")
            rest = lines.pop()
            for line in lines:
                yield json.loads(line)
        if rest:
            yield json.loads(rest)

    def __eq__(self, other) -> bool:
        if isinstance(other, (DiskList, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return f"DiskList({self._len} items)"


def _key(k) -> str:
    if isinstance(k, str):
        return k
    if k is True:
        return "true"
    if k is False:
        return "false"
    if k is None:
        return "null"
    if isinstance(k, (int, float)):
        return json.dumps(k)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(k).__name__}")


def iter_json(value, indent: int = 1, level: int = 0) -> Iterator[str]:
    """The pieces of ``json.dumps(value, ensure_ascii=False, indent=indent)``; a DiskList is written as a list,
    read back one item at a time."""
    if isinstance(value, dict):
        if not value:
            yield "{}"
            return
        inner = "\n" + " " * (indent * (level + 1))
        yield "{"
        first = True
        for k, v in value.items():
            yield (inner if first else "," + inner) + json.dumps(_key(k), ensure_ascii=False) + ": "
            first = False
            yield from iter_json(v, indent, level + 1)
        yield "\n" + " " * (indent * level) + "}"
    elif isinstance(value, (list, tuple, DiskList)):
        if not value:
            yield "[]"
            return
        inner = "\n" + " " * (indent * (level + 1))
        yield "["
        first = True
        for v in value:
            yield inner if first else "," + inner
            first = False
            yield from iter_json(v, indent, level + 1)
        yield "\n" + " " * (indent * level) + "]"
    else:
        yield json.dumps(value, ensure_ascii=False)


def json_parts(value, indent: int = 1, size: int = 1 << 16, end: str = "\n") -> Iterator[str]:
    """:func:`iter_json`'s text (then ``end``) in parts of about ``size`` characters, each ending at a line end."""
    held: list[str] = []
    count = 0
    for piece in iter_json(value, indent):
        held.append(piece)
        count += len(piece)
        if count >= size:
            text = "".join(held)
            cut = text.rfind("\n") + 1
            if cut:
                yield text[:cut]
                held, count = [text[cut:]], len(text) - cut
            else:
                held, count = [text], len(text)
    text = "".join(held) + end
    if text:
        yield text
