"""SQuAD-style reading-comprehension files (HeQ, FaQuAD): each question a record whose one claim is its first
gold answer, every other distinct answer span an alternative gold set; unanswerable ones have no claims.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judge.datasets.base import SpanRef, add_validation, iter_json_items, usable
from judge.models import Attribution, Claim, Items, Record, Source
from judge.problems import Problem

FORMAT = "squad"


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True, allow_inf_nan=False)


class SquadAnswer(_Loose):
    text: str
    answer_start: int = Field(ge=0)


class SquadQA(_Loose):
    id: str
    question: str
    answers: Items[SquadAnswer] = []
    is_impossible: bool = False


class SquadParagraph(_Loose):
    context: str
    qas: list[Any]


class SquadArticle(_Loose):
    title: str = ""
    paragraphs: list[Any]


def iter_load(path: Path, problems: list[Problem]) -> Iterator[tuple[Record, list[SpanRef], int]]:
    """(record, its gold spans, article index), one article of ``data`` at a time."""
    file = str(path)
    seen = False
    for ai, article_raw in iter_json_items(path, problems, "data.item"):
        seen = True
        if not usable(article_raw, file, f"article {ai}", problems):
            continue
        try:
            article = SquadArticle.model_validate(article_raw)
        except ValidationError as e:
            add_validation(problems, e, file, f"article {ai}", ("data", ai))
            continue
        for pi, para_raw in enumerate(article.paragraphs):
            where = ("data", ai, "paragraphs", pi)
            try:
                para = SquadParagraph.model_validate(para_raw)
            except ValidationError as e:
                add_validation(problems, e, file, f"article {ai} paragraph {pi}", where)
                continue
            doc_id = f"{article.title or 'article'}#{ai}.{pi}"
            for qi, qa_raw in enumerate(para.qas):
                rid = qa_raw.get("id") if isinstance(qa_raw, dict) and isinstance(qa_raw.get("id"), str) else f"article {ai} paragraph {pi} question {qi}"
                try:
                    qa = SquadQA.model_validate(qa_raw)
                except ValidationError as e:
                    add_validation(problems, e, file, rid)
                    continue
                spans: list[SpanRef] = []
                yield _to_record(qa, para.context, doc_id, article.title, where + ("qas", qi), spans), spans, ai
    if not seen and not any(p.file == file for p in problems):
        problems.append(Problem(file=file, field="data", message="expected {\"data\": [articles]}, found no articles"))



def _to_record(qa: SquadQA, context: str, doc_id: str, title: str, qa_path: tuple, spans: list[SpanRef]) -> Record:
    sets: list[list[Attribution]] = []
    seen: set[tuple[int, str]] = set()
    for ni, ans in enumerate(qa.answers):
        spans.append(
            SpanRef(
                record_id=qa.id,
                field=f"answers[{ni}]",
                raw_path=qa_path + ("answers", ni),
                source=context,
                start=ans.answer_start,
                end=ans.answer_start + len(ans.text),
                excerpt=ans.text,
                style="answer_start",
            )
        )
        key = (ans.answer_start, ans.text)
        if key in seen or not ans.text:
            continue
        seen.add(key)
        sets.append(
            [
                Attribution(
                    source_excerpt=ans.text,
                    start_char=ans.answer_start,
                    end_char=ans.answer_start + len(ans.text),
                    verified=False,
                    verification_method="squad",
                    doc_id=doc_id,
                )
            ]
        )
    claims = []
    if sets:
        claims.append(Claim(claim_id=0, text=sets[0][0].source_excerpt, attribution=sets[0], alternative_attributions=sets[1:]))
    extra = {k: v for k, v in (qa.model_extra or {}).items()}
    return Record(
        id=qa.id,
        question=qa.question,
        sources=[Source(doc_id=doc_id, title=title or None, text=context)],
        reference_answer=qa.answers[0].text if qa.answers else None,
        claims=claims,
        meta={"is_impossible": qa.is_impossible or not qa.answers, **extra},
    )


def sniff(head: Any) -> bool:
    return isinstance(head, dict) and isinstance(head.get("data"), list)
