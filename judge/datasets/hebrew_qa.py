"""The primary format: the Hebrew abstractive-QA grounding set (a JSON array of records)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judge.datasets.base import Loaded, SpanRef, read_json, record_id_of
from judge.models import Claim, HumanRating, Record, Source, StrictModel
from judge.problems import Problem, problems_from_validation

FORMAT = "hebrew-qa"


class HebrewQARecord(StrictModel):
    """One record exactly as the file writes it."""

    id: str
    question: str
    source_text: str
    reference_answer: str | None = None
    claims: list[Claim] = []
    human_ratings: list[HumanRating] = []
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


def load(path: Path) -> Loaded:
    out = Loaded(path=str(path), format=FORMAT)
    raw = read_json(path, out.problems)
    out.raw = raw
    if raw is None:
        return out
    if not isinstance(raw, list):
        out.problems.append(Problem(file=str(path), message=f"expected a JSON array of records, found {type(raw).__name__}"))
        return out
    for i, item in enumerate(raw):
        rid = record_id_of(item, i)
        if not isinstance(item, dict):
            out.problems.append(Problem(file=str(path), record_id=rid, message="a record must be a JSON object"))
            continue
        try:
            parsed = HebrewQARecord.model_validate(item)
        except ValidationError as e:
            out.problems.extend(problems_from_validation(e, str(path), rid))
            continue
        out.items.append(to_record(parsed))
        for ci, claim in enumerate(parsed.claims):
            for ai, a in enumerate(claim.attribution):
                out.spans.append(
                    SpanRef(
                        record_id=rid,
                        field=f"claims[{ci}].attribution[{ai}]",
                        raw_path=(i, "claims", ci, "attribution", ai),
                        source=parsed.source_text,
                        start=a.start_char,
                        end=a.end_char,
                        excerpt=a.source_excerpt,
                    )
                )
    return out


def sniff(head: Any) -> bool:
    return isinstance(head, list) and bool(head) and isinstance(head[0], dict) and "source_text" in head[0]
