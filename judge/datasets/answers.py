"""Model answers as JSONL: ``{record_id, model, answer, gold_claims?}`` one per line.

Gold support spans point into the record's source, so they can only be checked against the records
(:func:`check_against_records`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judge.datasets.base import Loaded, SpanRef, read_jsonl
from judge.models import Answer, Record
from judge.problems import Problem, problems_from_validation

FORMAT = "answers"


def load(path: Path) -> Loaded:
    out = Loaded(path=str(path), format=FORMAT)
    rows = read_jsonl(path, out.problems)
    out.raw = [obj for _, obj in rows]
    for lineno, obj in rows:
        rid = f"line {lineno}"
        if isinstance(obj, dict) and isinstance(obj.get("record_id"), str):
            rid = f"{obj['record_id']} (line {lineno})"
        if not isinstance(obj, dict):
            out.problems.append(Problem(file=str(path), record_id=rid, message="a line must hold a JSON object"))
            continue
        try:
            out.items.append(Answer.model_validate(obj))
        except ValidationError as e:
            out.problems.extend(problems_from_validation(e, str(path), rid))
    return out


def check_against_records(loaded: Loaded, records: list[Record]) -> None:
    """Add every answer's gold support spans (and unknown record ids) to ``loaded``'s spans and problems."""
    by_id = {r.id: r for r in records}
    for i, answer in enumerate(loaded.items):
        rid = answer.record_id
        record = by_id.get(rid)
        if record is None:
            loaded.problems.append(
                Problem(file=loaded.path, record_id=rid, field="record_id", message="no record with this id in the records file")
            )
            continue
        for ci, claim in enumerate(answer.gold_claims):
            for si, span in enumerate(claim.support):
                try:
                    source = record.source(span.doc_id).text
                except KeyError as e:
                    loaded.problems.append(
                        Problem(file=loaded.path, record_id=rid, field=f"gold_claims[{ci}].support[{si}].doc_id", message=str(e))
                    )
                    continue
                end = min(span.end_char, len(source))
                loaded.spans.append(
                    SpanRef(
                        record_id=rid,
                        field=f"gold_claims[{ci}].support[{si}]",
                        raw_path=(i, "gold_claims", ci, "support", si),
                        source=source,
                        start=span.start_char,
                        end=span.end_char,
                        excerpt=source[span.start_char : end],
                    )
                )


def sniff(head: Any) -> bool:
    return isinstance(head, dict) and "record_id" in head and "answer" in head
