"""Dataset adapters: one per format, all returning the same typed models.

``load(path, format=None)`` returns Records (Answers for answer files) and raises
:class:`judge.problems.DatasetError` listing every bad record; ``load_checked`` returns what could be read
together with the problems, for ``judge validate``.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

from judge.datasets import answers, hebrew_qa, plain, squad, wice
from judge.datasets.base import Loaded, check_span
from judge.models import Answer
from judge.problems import DatasetError, Problem

ADAPTERS: dict[str, ModuleType] = {m.FORMAT: m for m in (plain, hebrew_qa, answers, wice, squad)}
FORMATS = tuple(ADAPTERS)


def sniff(path: Path) -> str:
    """Guess the format from the file's first record."""
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            head = f.read(1 << 20)
    except OSError as e:
        raise DatasetError([Problem(file=str(path), message=f"cannot read: {e.strerror or e}")]) from None
    first = None
    stripped = head.lstrip()
    if stripped.startswith("{") and "\n" in stripped:
        try:
            first = json.loads(stripped.split("\n", 1)[0])  # JSONL
        except json.JSONDecodeError:
            first = None
    if first is None:
        try:
            first = json.loads(stripped)
        except json.JSONDecodeError:
            first = _first_array_item(stripped)
    for name, adapter in ADAPTERS.items():
        if first is not None and adapter.sniff(first):
            return name
    # a first record longer than the head read (a source of millions of characters): go by its keys
    if stripped.startswith("[") and '"source_text"' in head:
        return hebrew_qa.FORMAT
    if stripped.startswith("{") and '"paragraphs"' in head and '"data"' in head:
        return squad.FORMAT
    raise DatasetError(
        [Problem(file=str(path), message=f"cannot tell the format; pass --format (one of {', '.join(FORMATS)})")]
    )


def _first_array_item(text: str):
    """The first element of a JSON array too large to read whole, decoded on its own."""
    if not text.startswith("["):
        return None
    try:
        item, _ = json.JSONDecoder().raw_decode(text[1:].lstrip())
    except json.JSONDecodeError:
        return None
    return [item]


def load_checked(
    path: str | Path, format: str | None = None, records_path: str | Path | None = None, answer_model: str | None = None
) -> Loaded:
    """Read a dataset and collect every problem (schema and spans) instead of stopping at the first.

    ``answer_model`` names the model of a plain record's single ``answer`` (default "answer")."""
    path = Path(path)
    if format is None:
        format = sniff(path)
    if format not in ADAPTERS:
        raise DatasetError([Problem(file=str(path), message=f"unknown format {format!r}; known: {', '.join(FORMATS)}")])
    loaded = ADAPTERS[format].load(path, answer_model) if format == plain.FORMAT and answer_model else ADAPTERS[format].load(path)
    if format == "answers" and records_path is not None:
        answers.check_against_records(loaded, load(records_path))
    for ref in loaded.spans:
        loaded.problems.extend(check_span(ref, loaded.path))
    loaded.problems.extend(duplicate_problems(loaded))
    return loaded


def duplicate_problems(loaded: Loaded) -> list[Problem]:
    """Records must have distinct ids; an answers file must not repeat the same answer of the same model."""
    seen: dict[tuple, int] = {}
    problems = []
    for i, item in enumerate(loaded.items):
        if isinstance(item, Answer):
            key, what, field = (item.record_id, item.model, item.answer), "the same answer of the same model", "answer"
            rid = item.record_id
        else:
            key, what, field = (item.id,), "the same id", "id"
            rid = item.id
        if key in seen:
            problems.append(Problem(file=loaded.path, record_id=rid, field=field, message=f"{what} as item {seen[key]} (item {i}): duplicates are refused"))
        else:
            seen[key] = i
    return problems


def load(
    path: str | Path, format: str | None = None, records_path: str | Path | None = None, answer_model: str | None = None
) -> list:
    """Typed records (or answers) of a dataset file; raises DatasetError naming every bad record."""
    loaded = load_checked(path, format, records_path, answer_model)
    if loaded.problems:
        raise DatasetError(loaded.problems)
    return loaded.items


__all__ = ["ADAPTERS", "FORMATS", "DatasetError", "Loaded", "load", "load_checked", "sniff"]
