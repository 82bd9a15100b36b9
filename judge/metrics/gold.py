"""The gold an answer is scored against (an answers file's ``gold_claims``, or the records' own claims), and its
predicted claims paired with the gold claims (by answer offsets, else text: judge.metrics.matching).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from judge.metrics.matching import match_claims
from judge.models import Answer, Record
from judge.results import AnswerResult, ClaimResult
from judge.text import split_sentences
from judge.verdicts import REFERENCE_MODEL

SpanKey = tuple[str | None, int, int]  # doc_id, start, end


@dataclass
class GoldClaim:
    text: str
    label: str | None
    spans: list[SpanKey]  # gold support in the sources
    answer_spans: list[tuple[int, int]]  # where the claim sits in the answer, when it is found there
    alternatives: list[list[SpanKey]] = field(default_factory=list)  # other gold sets that count as well (WiCE)

    def gold_sets(self) -> list[list[SpanKey]]:
        return [g for g in [self.spans, *self.alternatives] if g]


@dataclass
class Matched:
    pairs: list[tuple[ClaimResult, GoldClaim]]
    unmatched_predicted: int
    unmatched_gold: int


def _at(answer: str, text: str) -> list[tuple[int, int]]:
    at = answer.find(text)
    return [(at, at + len(text))] if at >= 0 else []


def gold_for_answer(record: Record, answer: AnswerResult, recorded: dict[tuple[str, str, str], Answer]) -> list[GoldClaim] | None:
    """The gold claims an answer can be scored against, or None when the data has none for it."""
    found = recorded.get((record.id, answer.model, answer.answer))
    if found is not None and found.gold_claims:
        return [
            GoldClaim(g.text, g.label, [(s.doc_id or record.sources[0].doc_id, s.start_char, s.end_char) for s in g.support], _at(answer.answer, g.text))
            for g in found.gold_claims
        ]
    gold_claims = [c for c in record.claims if c.label is not None or c.attribution]
    if gold_claims and (answer.model == REFERENCE_MODEL or any(c.text == answer.answer.strip() for c in gold_claims)):
        return [
            GoldClaim(
                c.text,
                c.label,
                [(a.doc_id, a.start_char, a.end_char) for a in c.attribution],
                _at(answer.answer, c.text),
                [[(a.doc_id, a.start_char, a.end_char) for a in alt] for alt in c.alternative_attributions],
            )
            for c in gold_claims
        ]
    return None


def matched_gold(record: Record | None, answer: AnswerResult, recorded: dict) -> Matched | None:
    """The answer's predicted claims paired with the gold claims they match, with the counts left unmatched
    on each side; None when the data holds no gold for this answer."""
    gold = gold_for_answer(record, answer, recorded) if record is not None else None
    if gold is None:
        return None
    predicted = [(c.text, [(s.start_char, s.end_char) for s in c.answer_spans]) for c in answer.claims]
    pairs, unmatched_predicted, unmatched_gold = match_claims(predicted, [(g.text, g.answer_spans) for g in gold])
    return Matched([(answer.claims[i], gold[j]) for i, j, _ in pairs], len(unmatched_predicted), len(unmatched_gold))


def sentence_spans(record: Record, spans: list[SpanKey]) -> list[SpanKey]:
    """The source sentences that hold any of ``spans``."""
    out = []
    for source in record.sources:
        sentences = split_sentences(source.text)
        for doc, start, end in spans:
            if doc not in (source.doc_id, None):
                continue
            out += [(source.doc_id, s.start, s.end) for s in sentences if s.start < end and start < s.end]
    return out
