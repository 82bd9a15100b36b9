"""Model answers as JSONL: ``{record_id, model, answer, gold_claims?}`` one per line.

Gold support spans point into the record's source, so they can only be checked against the records
(:func:`answer_spans`, joined through the on-disk index in :mod:`judge.datasets.index`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO, Iterator

from pydantic import ValidationError

from judge.datasets.base import Loaded, SpanRef, add_validation, iter_jsonl, usable
from judge.llm.families import override_problem
from judge.models import Answer, Record
from judge.problems import Problem

FORMAT = "answers"


def rid_of(obj: Any, lineno: int) -> str:
    if isinstance(obj, dict) and isinstance(obj.get("record_id"), str):
        return f"{obj['record_id']} (line {lineno})"
    return f"line {lineno}"


def iter_load(path: Path, problems: list[Problem]) -> Iterator[tuple[Answer, list[SpanRef], int]]:
    """(answer, no spans until joined to its record, byte offset of its line), one line at a time."""
    for lineno, offset, obj in iter_jsonl(path, problems):
        rid = rid_of(obj, lineno)
        if not isinstance(obj, dict):
            problems.append(Problem(file=str(path), record_id=rid, message=f"expected a JSON object, found {type(obj).__name__}"))
            continue
        if not usable(obj, str(path), rid, problems):
            continue
        try:
            answer = Answer.model_validate(obj)
        except ValidationError as e:
            add_validation(problems, e, str(path), rid)
            continue
        why = override_problem(answer.model, None, answer.family) if answer.family else None
        if why:  # "family": "anthropic" on a gpt-4o answer would let a gpt judge grade its own family's answers
            problems.append(Problem(file=str(path), record_id=rid, field="family", message=why))
            continue
        yield answer, [], offset


def read_at(f: BinaryIO, offset: int) -> Answer:
    """The answer on the line starting at ``offset`` of the open file (already validated by the pass that
    noted the offset), so a join holds offsets, never answers."""
    f.seek(offset)
    return Answer.model_validate_json(f.readline())


def load(path: Path) -> Loaded:
    out = Loaded(path=str(path), format=FORMAT)
    out.items = [a for a, _, _ in iter_load(path, out.problems)]
    return out


def answer_spans(answer: Answer, record: Record, index: int, file: str, problems: list[Problem]) -> list[SpanRef]:
    """The answer's gold support spans against its record's sources (a problem for an unknown doc_id)."""
    refs = []
    rid = answer.record_id
    for ci, claim in enumerate(answer.gold_claims):
        for si, span in enumerate(claim.support):
            try:
                source = record.source(span.doc_id).text
            except KeyError as e:
                problems.append(Problem(file=file, record_id=rid, field=f"gold_claims[{ci}].support[{si}].doc_id", message=str(e)))
                continue
            refs.append(
                SpanRef(
                    record_id=rid,
                    field=f"gold_claims[{ci}].support[{si}]",
                    raw_path=(index, "gold_claims", ci, "support", si),
                    source=source,
                    start=span.start_char,
                    end=span.end_char,
                    excerpt=source[span.start_char : min(span.end_char, len(source))],
                )
            )
    return refs


def sniff(head: Any) -> bool:
    return isinstance(head, dict) and "record_id" in head and "answer" in head
