"""Dataset adapters: one per format, all streaming the same typed models. ``iter_load`` streams (item, gold
spans, position) with every span checked; ``load`` raises :class:`judge.problems.DatasetError` naming the bad
records; ``load_checked`` returns the items with the problems. Runs stream through :mod:`judge.runs.inputs`.
"""

from __future__ import annotations

import hashlib
from array import array
from pathlib import Path
from types import ModuleType
from typing import Iterator

from judge.boundary import loads
from judge.datasets import answers, hebrew_qa, plain, squad, wice
from judge.datasets.base import (
    MAX_DEPTH,
    Loaded,
    ProblemList,
    SpanRef,
    check_span,
    iter_json_items,
    max_record_bytes,
)
from judge.models import Answer
from judge.problems import DatasetError, Problem

ADAPTERS: dict[str, ModuleType] = {m.FORMAT: m for m in (plain, hebrew_qa, answers, wice, squad)}
FORMATS = tuple(ADAPTERS)


def sniff(path: Path) -> str:
    """Guess the format from the file's first record (read alone, bounded in size and nesting)."""
    path = Path(path)
    problems: list[Problem] = []
    from judge.input_files import InputFileError, open_input

    try:
        with open_input(path) as f:  # a stream is read once, into the copy every later reader shares
            head = f.read(min(1 << 20, max_record_bytes()))
    except InputFileError as e:
        raise DatasetError([Problem(file=str(path), message=e.reason)]) from None
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DatasetError([Problem(file=str(path), message="is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8")])
    text = head.decode("utf-8-sig", errors="replace").lstrip()
    first = None
    if text.startswith("{"):
        line = text.split("\n", 1)[0]
        try:
            first = loads(line)  # JSONL, or a one-line JSON object
        except (ValueError, RecursionError):  # malformed, a key twice, NaN or 5,000 digits: the loader names it
            first = None
    elif text.startswith("["):
        for _, item in iter_json_items(path, problems):
            first = [item]
            break
        if first is None and problems:
            raise DatasetError(problems)
    for name, adapter in ADAPTERS.items():
        if first is not None and adapter.sniff(first):
            return name
    # a first record longer than the head read (a source of millions of characters): go by its keys
    if text.startswith("{") and '"paragraphs"' in text and '"data"' in text:
        return squad.FORMAT
    if text.startswith("{") and '"record_id"' in text.split("\n", 1)[0] and '"answer"' in text.split("\n", 1)[0]:
        return answers.FORMAT
    if text.startswith("{") and '"id"' in text.split("\n", 1)[0] and ('"source"' in text or '"sources"' in text):
        return plain.FORMAT
    raise DatasetError(
        [Problem(file=str(path), message=f"cannot tell the format; pass --format (one of {', '.join(FORMATS)})")]
    )


def resolve_format(path: Path, format: str | None) -> tuple[str, ModuleType]:
    if format is None:
        format = sniff(path)
    if format not in ADAPTERS:
        raise DatasetError([Problem(file=str(path), message=f"unknown format {format!r}; known: {', '.join(FORMATS)}")])
    return format, ADAPTERS[format]


def iter_load(
    path: str | Path, format: str | None = None, problems: list[Problem] | None = None, answer_model: str | None = None
) -> Iterator[tuple[object, list, int]]:
    """(item, its gold spans, position) one record at a time, every span checked; problems go to ``problems``."""
    path = Path(path)
    format, adapter = resolve_format(path, format)
    problems = ProblemList(str(path)) if problems is None else problems
    kwargs = {"answer_model": answer_model} if format == plain.FORMAT and answer_model else {}
    for item, spans, pos in adapter.iter_load(path, problems, **kwargs):
        for ref in spans:
            problems.extend(check_span(ref, str(path)))
        yield item, spans, pos


def item_key(item) -> bytes:
    """What must be unique, as a 16-byte digest (a dict of these, not of the items, finds duplicates): a
    record's id; an answer's (record id, model, text)."""
    h = hashlib.blake2b(digest_size=16)
    parts = (item.record_id, item.model, item.answer) if isinstance(item, Answer) else ("", item.id)
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return h.digest()


def duplicate_problem(item, file: str, first: int, now: int) -> Problem:
    if isinstance(item, Answer):
        return Problem(file=file, record_id=item.record_id, field="answer",
                       message=f"the same answer of the same model as item {first} (item {now}): duplicates are refused")
    return Problem(file=file, record_id=item.id, field="id", message=f"the same id as item {first} (item {now}): duplicates are refused")


def iter_checked(
    path: Path, format: str, problems: list[Problem], answer_model: str | None = None
) -> Iterator[tuple[int, object, list, int]]:
    """``iter_load`` with duplicates named (a problem each; the item is still yielded): (ordinal, item, its
    checked spans, position). Holds one digest per item, never the items."""
    seen: dict[bytes, int] = {}
    for i, (item, spans, pos) in enumerate(iter_load(path, format, problems, answer_model)):
        first = seen.setdefault(item_key(item), i)
        if first != i:
            problems.append(duplicate_problem(item, str(path), first, i))
        yield i, item, spans, pos


def load_checked(
    path: str | Path, format: str | None = None, records_path: str | Path | None = None, answer_model: str | None = None
) -> Loaded:
    """Read a dataset into lists and collect its problems (schema, spans, duplicates; the first N and a count).
    ``answer_model`` names the model of a plain record's single ``answer`` (default "answer")."""
    path = Path(path)
    format, _ = resolve_format(path, format)
    loaded = Loaded(path=str(path), format=format)
    offsets: dict[str, array] = {}
    for i, item, spans, pos in iter_checked(path, format, loaded.problems, answer_model):
        loaded.items.append(item)
        loaded.spans.extend(spans)
        if format == answers.FORMAT:
            offsets.setdefault(item.record_id, array("q")).extend((i, pos))
    if format == answers.FORMAT and records_path is not None:
        loaded.spans.extend(join_records(path, offsets, Path(records_path), loaded.problems))
    return loaded


def join_records(path: Path, offsets: dict[str, array], records_path: Path, problems: list[Problem]) -> Iterator[SpanRef]:
    """The gold spans of an answers file joined to its records, each checked: the records are streamed, and
    each record's answers read back from their byte offsets (``offsets``: record id -> ordinal, offset, ...)."""
    found: set[str] = set()
    record_problems = ProblemList(str(records_path))
    from judge.input_files import open_input

    with open_input(path) as f:
        for record, _, _ in iter_load(records_path, None, record_problems):
            at = offsets.get(record.id)
            if at is None:
                continue
            found.add(record.id)
            for k in range(0, len(at), 2):
                refs = answers.answer_spans(answers.read_at(f, at[k + 1]), record, at[k], str(path), problems)
                for ref in refs:
                    problems.extend(check_span(ref, str(path)))
                yield from refs
    if record_problems:
        raise DatasetError(list(record_problems))
    for rid in offsets:
        if rid not in found:
            problems.append(Problem(file=str(path), record_id=rid, field="record_id", message="no record with this id in the records file"))


def load(
    path: str | Path, format: str | None = None, records_path: str | Path | None = None, answer_model: str | None = None
) -> list:
    """Typed records (or answers) of a dataset file; raises DatasetError naming the bad records."""
    loaded = load_checked(path, format, records_path, answer_model)
    if loaded.problems:
        raise DatasetError(list(loaded.problems))
    return loaded.items


__all__ = ["ADAPTERS", "FORMATS", "MAX_DEPTH", "DatasetError", "Loaded", "iter_checked", "iter_load", "join_records", "load", "load_checked", "resolve_format", "sniff"]
