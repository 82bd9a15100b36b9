"""The plain format for users' own data: JSONL, one record a line (docs/formats.md). A record with an answer is
evaluated as recorded; one without is answered by the config's models under test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Iterator, Union

from pydantic import Discriminator, Field, Tag, ValidationError, field_validator, model_validator

from judge.datasets.base import SpanRef, add_validation, iter_jsonl, usable
from judge.models import Answer, GoldClaim, Items, Record, Source, StrictModel, given_once
from judge.problems import Problem

FORMAT = "plain"
DEFAULT_ANSWER_MODEL = "answer"
SOURCE_FIELDS = ("source", "sources")


GoldClaims = Annotated[
    Union[Annotated[Items[GoldClaim], Tag("as-list")], Annotated[dict[str, Items[GoldClaim]], Tag("by-model")]],
    Discriminator(lambda v: "by-model" if isinstance(v, dict) else "as-list"),
]


def _not_blank(value: str | None) -> str | None:
    """An id, a model name or a source text of only spaces names or holds nothing (a record refused, not
    judged against nothing); None is the field's own rule's."""
    if value is not None and not value.strip():
        raise ValueError("is empty or only spaces; give a value")
    return value


class PlainSource(StrictModel):
    id: str = Field(min_length=1)
    title: str | None = None
    text: str

    _blank = field_validator("id", "text")(_not_blank)


class PlainRecord(StrictModel):
    """One line exactly as the user writes it."""

    id: str = Field(min_length=1)
    question: str = ""
    source: str | None = None
    sources: Items[PlainSource] | None = None
    answer: str | None = None
    answers: dict[str, str] | None = None
    reference_answer: str | None = None
    gold_claims: GoldClaims = []
    genre: str | None = None
    meta: dict[str, Any] = {}

    _blank = field_validator("id", "source")(_not_blank)

    @field_validator("answers")
    @classmethod
    def _named_models(cls, answers: dict[str, str] | None) -> dict[str, str] | None:
        for model in answers or {}:
            if not model.strip():
                raise ValueError(f"a model name is blank ({model!r}); name the model that wrote each answer")
        return answers

    @model_validator(mode="after")
    def _one_of_each(self):
        if (self.source is None) == (self.sources is None):
            raise ValueError("give exactly one of source (a string) or sources (a list of {id, title?, text})")
        if self.sources is not None and not self.sources:
            raise ValueError("sources is empty; give at least one {id, text}")
        if self.answer is not None and self.answers is not None:
            raise ValueError("give answer (one answer) or answers ({model: text}), not both")
        if isinstance(self.gold_claims, dict) and self.answers is None:
            raise ValueError("gold_claims as a {model: claims} mapping needs answers; with answer, give a list")
        if isinstance(self.gold_claims, list) and self.gold_claims and self.answer is None:
            raise ValueError("gold_claims (a list) label the claims of answer; this record has no answer")
        if isinstance(self.gold_claims, dict) and self.answers is not None:  # a typo in a model key would lose its gold
            unknown = [m for m in self.gold_claims if m not in self.answers]
            if unknown:
                raise ValueError(f"gold_claims.{unknown[0]}: no answer of model {unknown[0]!r} (answers has {', '.join(map(repr, self.answers))})")
        given_once([s.id for s in self.sources or []], "sources", "source id")  # Record's rule, said before anything is staged
        return self


def to_record(raw: PlainRecord, answer_model: str = DEFAULT_ANSWER_MODEL) -> Record:
    if raw.source is not None:
        sources = [Source(doc_id=raw.id, text=raw.source)]
    else:
        sources = [Source(doc_id=s.id, title=s.title, text=s.text) for s in raw.sources or []]
    answers = []
    if raw.answer is not None:
        gold = raw.gold_claims if isinstance(raw.gold_claims, list) else []
        answers.append(Answer(record_id=raw.id, model=answer_model, answer=raw.answer, gold_claims=gold))
    for model, text in (raw.answers or {}).items():
        gold = raw.gold_claims.get(model, []) if isinstance(raw.gold_claims, dict) else []
        answers.append(Answer(record_id=raw.id, model=model, answer=text, gold_claims=gold))
    return Record(
        id=raw.id,
        question=raw.question,
        sources=sources,
        reference_answer=raw.reference_answer,
        genre=raw.genre,
        meta=raw.meta,
        answers=answers,
    )


def span_refs(raw: PlainRecord, record: Record, raw_index: int) -> tuple[list[SpanRef], list[Problem]]:
    """Every gold support span of the record's answers, to check against its sources."""
    refs, problems = [], []
    if isinstance(raw.gold_claims, dict):
        groups = [((model,), f"gold_claims.{model}", claims) for model, claims in raw.gold_claims.items()]
    else:
        groups = [((), "gold_claims", raw.gold_claims)]
    for keys, prefix, claims in groups:
        for ci, claim in enumerate(claims):
            for si, span in enumerate(claim.support):
                field = f"{prefix}[{ci}].support[{si}]"
                try:
                    text = record.source(span.doc_id).text
                except KeyError:
                    known = ", ".join(s.doc_id for s in record.sources)
                    problems.append(Problem(file="", record_id=record.id, field=f"{field}.doc_id",
                                            message=f"expected one of the record's source ids ({known}), found {span.doc_id!r}"))
                    continue
                refs.append(SpanRef(record_id=record.id, field=field, raw_path=(raw_index, "gold_claims", *keys, ci, "support", si),
                                    source=text, start=span.start_char, end=span.end_char,
                                    excerpt=text[span.start_char : min(span.end_char, len(text))]))
    return refs, problems


def parse(
    obj: Any, file: str, rid: str, raw_index: int, problems: list[Problem], answer_model: str = DEFAULT_ANSWER_MODEL
) -> tuple[Record | None, list[SpanRef]]:
    """One decoded line -> a Record and its gold spans, or None with the problems noted."""
    if not isinstance(obj, dict):
        problems.append(Problem(file=file, record_id=rid, message=f"expected a JSON object, found {type(obj).__name__}"))
        return None, []
    if not usable(obj, file, rid, problems):
        return None, []
    try:
        raw = PlainRecord.model_validate(obj)
    except ValidationError as e:
        add_validation(problems, e, file, rid)
        return None, []
    record = to_record(raw, answer_model)
    refs, found = span_refs(raw, record, raw_index)
    problems.extend(p.model_copy(update={"file": file}) for p in found)
    return record, refs


def iter_load(path: Path, problems: list[Problem], answer_model: str = DEFAULT_ANSWER_MODEL) -> Iterator[tuple[Record, list[SpanRef], int]]:
    """(record, its gold spans, byte offset of its line), one line at a time; problems noted as they come."""
    for index, (lineno, offset, obj) in enumerate(iter_jsonl(path, problems)):
        rid = obj["id"] if isinstance(obj, dict) and isinstance(obj.get("id"), str) and obj["id"] else f"line {lineno}"
        record, refs = parse(obj, str(path), rid, index, problems, answer_model)
        if record is not None:
            yield record, refs, offset



def sniff(head: Any) -> bool:
    return isinstance(head, dict) and "id" in head and any(k in head for k in SOURCE_FIELDS) and "record_id" not in head
