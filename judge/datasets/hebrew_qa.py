"""The primary format: the Hebrew abstractive-QA grounding set (a JSON array of records)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from pydantic import Field, ValidationError

from judge.datasets.base import SpanRef, add_validation, iter_json_items, record_id_of, usable
from judge.models import Claim, HumanRating, Items, Record, Source, StrictModel
from judge.problems import Problem

FORMAT = "hebrew-qa"


class HebrewQARecord(StrictModel):
    """One record exactly as the file writes it."""

    id: str = Field(min_length=1)  # Record's rule, checked here so that the problem names the file's field
    question: str
    source_text: str
    reference_answer: str | None = None
    claims: Items[Claim] = []
    human_ratings: Items[HumanRating] = []
    genre: str | None = None
    difficulty: int | None = None
    source_task_id: str | None = None
    document_id: str | None = None


def to_record(raw: HebrewQARecord) -> Record:
    doc_id = raw.document_id or raw.id
    claims = [
        c.model_copy(update={"attribution": [a.model_copy(update={"doc_id": a.doc_id or doc_id}) for a in c.attribution]})
        for c in raw.claims
    ]
    return Record(
        id=raw.id,
        question=raw.question,
        sources=[Source(doc_id=doc_id, text=raw.source_text)],
        reference_answer=raw.reference_answer,
        claims=claims,
        human_ratings=raw.human_ratings,
        genre=raw.genre,
        difficulty=raw.difficulty,
        source_task_id=raw.source_task_id,
        document_id=raw.document_id,
    )


def iter_load(path: Path, problems: list[Problem]) -> Iterator[tuple[Record, list[SpanRef], int]]:
    """(record, its gold spans, item index), one array item at a time."""
    file = str(path)
    for i, item in iter_json_items(path, problems):
        rid = record_id_of(item, i)
        if not isinstance(item, dict):
            problems.append(Problem(file=file, record_id=rid, message=f"expected a JSON object, found {type(item).__name__}"))
            continue
        if not usable(item, file, rid, problems):
            continue
        try:
            parsed = HebrewQARecord.model_validate(item)
            record = to_record(parsed)
        except ValidationError as e:
            add_validation(problems, e, file, rid)
            continue
        spans = [
            SpanRef(
                record_id=rid,
                field=f"claims[{ci}].attribution[{ai}]",
                raw_path=(i, "claims", ci, "attribution", ai),
                source=parsed.source_text,
                start=a.start_char,
                end=a.end_char,
                excerpt=a.source_excerpt,
            )
            for ci, claim in enumerate(parsed.claims)
            for ai, a in enumerate(claim.attribution)
        ]
        yield record, spans, i



def sniff(head: Any) -> bool:
    return isinstance(head, list) and bool(head) and isinstance(head[0], dict) and "source_text" in head[0]
