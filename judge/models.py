"""The core types every stage passes along (pydantic v2, strict).

Field names follow the Hebrew QA grounding schema (the primary format). A record's evidence is a list of
sources, so RAG chunks, FlashRAG documents and BEIR passages fit the same type; the primary schema's
single ``source_text`` is a one-element list, and every span carries the ``doc_id`` it points into.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

from judge.verdicts import Label


def omitted_when_empty(*keys: str):
    """A model's serializer that leaves out the named fields while they are empty: results and configs written
    before a field existed stay byte-identical (and configs hash as they did). In a class body:
    ``_omit_empty = omitted_when_empty("conflicts")``."""

    def serialize(self, handler):
        data = handler(self)
        for key in keys:
            if not data.get(key):
                data.pop(key, None)
        return data

    return model_serializer(mode="wrap")(serialize)

T = TypeVar("T")
# A list read from input stops at its first bad item: a hostile record with a million bad items costs one
# error, not a million (memory stays bounded; the first problem is the one to fix anyway).
Items = Annotated[list[T], Field(fail_fast=True)]

DIMENSIONS: tuple[str, ...] = ("coherence", "relevance", "completeness", "faithfulness", "attribution")


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class Offsets(StrictModel):
    """A non-empty character range [start_char, end_char)."""

    start_char: int = Field(ge=0)
    end_char: int = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> Offsets:
        if self.end_char <= self.start_char:
            raise ValueError(f"end_char ({self.end_char}) must be greater than start_char ({self.start_char})")
        return self


class Span(Offsets):
    """A character range [start_char, end_char) of one source, with the text it must slice."""

    doc_id: str | None = None
    excerpt: str


class Attribution(Offsets):
    """A reference span supporting a claim (primary schema: ``claims[].attribution[]``)."""

    sentence_id: int | None = Field(None, ge=0)
    source_excerpt: str
    verified: bool = False
    verification_method: str | None = None
    doc_id: str | None = None


class Claim(StrictModel):
    """One checkable statement. ``attribution`` is the gold support; ``alternative_attributions`` are other
    gold sets that count as equally correct (WiCE's alternatives, SQuAD's several annotators)."""

    claim_id: int = Field(ge=0)
    text: str
    attribution: Items[Attribution] = []
    alternative_attributions: Items[Items[Attribution]] = []
    label: Label | None = None  # a gold verdict, where the dataset has one

    def gold_sets(self) -> list[list[Attribution]]:
        return [s for s in [self.attribution, *self.alternative_attributions] if s]


class RatingScores(StrictModel):
    coherence: int = Field(ge=0, le=2)
    relevance: int = Field(ge=0, le=2)
    completeness: int = Field(ge=0, le=2)
    faithfulness: int = Field(ge=0, le=2)
    attribution: int = Field(ge=0, le=2)


class HumanRating(StrictModel):
    annotator_id: str
    scores: RatingScores


class Source(StrictModel):
    doc_id: str
    title: str | None = None
    text: str


class Record(StrictModel):
    """A question with its source(s), and whatever gold the dataset carries."""

    id: str = Field(min_length=1)
    question: str
    sources: Items[Source] = Field(min_length=1)
    reference_answer: str | None = None
    claims: Items[Claim] = []
    human_ratings: Items[HumanRating] = []
    genre: str | None = None
    difficulty: int | None = None
    source_task_id: str | None = None
    document_id: str | None = None
    meta: dict[str, Any] = {}
    answers: Items[Answer] = []  # answers recorded in the dataset itself (the plain format)

    @model_validator(mode="after")
    def _one_of_each(self):
        """What names a thing names one thing: a source id, a claim id, an annotator's rating of the record;
        an attribution names one of the record's sources. Every format's records are held to it."""
        docs = [x.doc_id for x in self.sources]
        given_once(docs, "sources", "source id")
        given_once([c.claim_id for c in self.claims], "claims", "claim_id")
        given_once([r.annotator_id for r in self.human_ratings], "human_ratings", "rating by annotator")
        for ci, c in enumerate(self.claims):
            for gi, group in enumerate(c.gold_sets()):
                for a in group:
                    if a.doc_id is not None and a.doc_id not in docs:
                        where = "attribution" if gi == 0 else f"alternative_attributions[{gi - 1}]"
                        raise ValueError(f"claims[{ci}].{where}: doc_id {a.doc_id!r} names no source of the record ({', '.join(map(repr, docs))})")
        return self

    @property
    def language(self) -> str:
        """The record's language code, detected from its question and first source: the one reading of it that
        a run stores (``RecordResult.language``) and every stage, control and re-ask uses."""
        from judge.text.language import detect_language

        return detect_language(self.question + " " + self.sources[0].text[:2000])

    @property
    def source_text(self) -> str:
        """The text of a single-source record (the primary schema's ``source_text``)."""
        if len(self.sources) != 1:
            raise ValueError(f"record {self.id} has {len(self.sources)} sources, not one")
        return self.sources[0].text

    def source(self, doc_id: str | None) -> Source:
        if doc_id is None and len(self.sources) == 1:
            return self.sources[0]
        for s in self.sources:
            if s.doc_id == doc_id:
                return s
        raise KeyError(f"record {self.id} has no source with doc_id {doc_id!r}")


def given_once(values: list, field: str, what: str) -> None:
    """ValueError naming ``field`` at the first value given twice (an id names one thing)."""
    seen: set = set()
    for v in values:
        if v in seen:
            raise ValueError(f"{field}: the {what} {v!r} appears twice; each must be given once")
        seen.add(v)


class SupportSpan(Offsets):
    """A gold support span of an answer claim: offsets into the record's source."""

    doc_id: str | None = None


class GoldClaim(StrictModel):
    text: str
    label: Label
    support: Items[SupportSpan] = []
    kind: str | None = None


class Answer(StrictModel):
    """A model's answer to one record's question (recorded, or generated by a model under test)."""

    record_id: str = Field(min_length=1)
    model: str
    answer: str
    gold_claims: Items[GoldClaim] = []
    family: str | None = None


Record.model_rebuild()  # its answers are declared after it


Method = Literal["exact", "normalized", "folded", "fuzzy", "ngram", "pair"]


class Candidate(StrictModel):
    """A support span found by the deterministic search, best first in a result list.

    ``start_char``/``end_char``/``excerpt`` are the candidate's first part; ``parts`` lists every part (one,
    or two when two separate sentences together support the claim). Every part slices its source exactly.
    """

    doc_id: str | None = None
    start_char: int = Field(ge=0)
    end_char: int = Field(ge=0)
    excerpt: str
    score: float = Field(ge=0.0, le=1.0)
    method: Method
    sentence_ids: list[int] = []
    parts: list[Span] = Field(min_length=1, max_length=2)

    @model_validator(mode="after")
    def _first_part_is_main(self) -> Candidate:
        first = self.parts[0]
        if (first.start_char, first.end_char, first.excerpt) != (self.start_char, self.end_char, self.excerpt):
            raise ValueError("the candidate's main span must be its first part")
        return self

    @property
    def text(self) -> str:
        return " … ".join(p.excerpt for p in self.parts)
