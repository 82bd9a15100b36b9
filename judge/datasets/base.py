"""What every adapter shares: reading files with clear errors, the loaded result, and span checking."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from judge.problems import Problem


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


@dataclass
class Loaded:
    """Everything an adapter read: typed items, every problem, the raw data, and the gold spans."""

    path: str
    format: str
    items: list = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    raw: Any = None
    spans: list[SpanRef] = field(default_factory=list)


def max_dataset_bytes() -> int:
    """Datasets are read whole; above this size they are refused rather than risking the machine's memory."""
    return int(float(os.environ.get("JUDGE_MAX_DATASET_MB", "100")) * 1e6)


def read_text(path: Path, problems: list[Problem]) -> str | None:
    try:
        size = path.stat().st_size
        if size > max_dataset_bytes():
            problems.append(Problem(
                file=str(path),
                message=f"{size / 1e6:.0f} MB is over the {max_dataset_bytes() / 1e6:.0f} MB limit for a dataset read into memory; "
                        "split it (judge run --shard works on parts), or raise JUDGE_MAX_DATASET_MB if the machine has the memory",
            ))
            return None
        data = path.read_bytes()
    except OSError as e:
        problems.append(Problem(file=str(path), message=f"cannot read: {e.strerror or e}"))
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        problems.append(Problem(file=str(path), message=f"not valid UTF-8 (byte {e.start}: {data[e.start:e.start + 4]!r})"))
        return None


def read_json(path: Path, problems: list[Problem]) -> Any:
    text = read_text(path, problems)
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        problems.append(Problem(file=str(path), message=f"malformed JSON at line {e.lineno}, column {e.colno}: {e.msg}"))
        return None


def read_jsonl(path: Path, problems: list[Problem]) -> list[tuple[int, Any]]:
    """(line number, object) for every non-blank line that parses; a problem for every one that does not."""
    text = read_text(path, problems)
    if text is None:
        return []
    rows = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append((lineno, json.loads(line)))
        except json.JSONDecodeError as e:
            problems.append(
                Problem(file=str(path), record_id=f"line {lineno}", message=f"malformed JSON, column {e.colno}: {e.msg}")
            )
    return rows


def check_span(ref: SpanRef, file: str) -> list[Problem]:
    """Offsets in range and ``source[start:end] == excerpt``; one problem naming the field otherwise."""
    start_field = "answer_start" if ref.style == "answer_start" else "start_char"
    n = len(ref.source)
    if not (0 <= ref.start < ref.end <= n):
        name = start_field if not 0 <= ref.start < n else ("end_char" if ref.style == "start_end" else "text")
        return [
            Problem(
                file=file,
                record_id=ref.record_id,
                field=f"{ref.field}.{name}",
                message=f"span [{ref.start}, {ref.end}) out of range for a source of {n} characters",
            )
        ]
    actual = ref.source[ref.start : ref.end]
    if actual != ref.excerpt:
        excerpt_field = "text" if ref.style == "answer_start" else "source_excerpt"
        return [
            Problem(
                file=file,
                record_id=ref.record_id,
                field=f"{ref.field}.{excerpt_field}",
                message=f"source[{ref.start}:{ref.end}] is {_short(actual)} but the excerpt is {_short(ref.excerpt)}",
            )
        ]
    return []


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def record_id_of(obj: Any, index: int, key: str = "id") -> str:
    if isinstance(obj, dict) and isinstance(obj.get(key), str) and obj[key]:
        return obj[key]
    return f"item {index}"
