"""Score sections of evidence: cited spans against reference spans, cited chunks against qrels, and the
evidence ceiling (was the gold support offered to the judges?)."""

from __future__ import annotations

from pydantic import BaseModel

from judge.metrics.free import EvidenceCeiling
from judge.metrics.spans import overlap, overlap_scores, sentence_hit
from judge.scoring.base import Block, Section, Table
from judge.metrics.gold import sentence_spans
from judge.verdicts import SUPPORTED


class EvidenceScores(BaseModel):
    precision: float | None
    recall: float | None
    f1: float | None
    iou: float | None
    cited: int
    gold: int
    shared: int
    union: int
    claims: int
    sentence_hit_rate: float | None


class Evidence(Section):
    key, title = "evidence", "Cited evidence against reference spans"
    needs = frozenset({"gold_spans"})

    def __init__(self):
        self.totals = dict.fromkeys(("cited", "gold", "shared", "union"), 0)  # summed claim by claim
        self.claims = self.hits = 0

    def add(self, item):
        for claim, gold in item.matched.pairs if item.matched else []:
            if gold.spans:
                cited = [(s.doc_id, s.start_char, s.end_char) for s in claim.evidence]
                counts = overlap(cited, gold.spans)
                for k in self.totals:
                    self.totals[k] += counts[k]
                self.claims += 1
                self.hits += sentence_hit(cited, sentence_spans(item.record, gold.spans))

    def result(self, context):
        if not self.claims:
            return None
        totals = dict(self.totals)
        return EvidenceScores(**overlap_scores(totals), **totals, claims=self.claims, sentence_hit_rate=self.hits / self.claims)

    @classmethod
    def block(cls, value, scores):
        if not value:
            return None
        e = value
        return Block(cls.title, [Table(["claims", "precision", "recall", "F1", "IoU", "sentence hit rate"],
                                        [[e["claims"], e["precision"], e["recall"], e["f1"], e["iou"], e["sentence_hit_rate"]]])])


class ChunkScores(BaseModel):
    answers: int
    cited: int
    cited_relevant: int
    relevant_retrieved: int
    relevant: int
    precision: float | None
    recall_of_retrieved_relevant: float | None
    recall_of_all_relevant: float | None


class ChunkAttribution(Section):
    """Cited chunks against the qrels: precision over cited chunks; recall against the relevant chunks that
    were retrieved (what the answer could cite) and against all relevant chunks."""

    key, title = "chunk_attribution", "Cited chunks against the qrels"
    needs = frozenset({"qrels"})

    def __init__(self):
        self.c = dict.fromkeys(("answers", "cited", "cited_relevant", "relevant_retrieved", "relevant"), 0)

    def add(self, item):
        qrels = item.record.meta.get("qrels") if item.record is not None else None
        if qrels is None:
            return
        relevant = {cid for cid, grade in qrels.items() if grade > 0}
        retrieved = {s.doc_id for s in item.record.sources}
        cited = {s.doc_id for c in item.answer.claims for s in c.evidence}
        c = self.c
        c["answers"] += 1
        c["cited"] += len(cited)
        c["cited_relevant"] += len(cited & relevant)
        c["relevant_retrieved"] += len(relevant & retrieved)
        c["relevant"] += len(relevant)

    def result(self, context):
        c = self.c
        if not c["answers"]:
            return None
        return ChunkScores(
            **c,
            precision=c["cited_relevant"] / c["cited"] if c["cited"] else None,
            recall_of_retrieved_relevant=c["cited_relevant"] / c["relevant_retrieved"] if c["relevant_retrieved"] else None,
            recall_of_all_relevant=c["cited_relevant"] / c["relevant"] if c["relevant"] else None,
        )

    @classmethod
    def block(cls, value, scores):
        if not value:
            return None
        c = value
        return Block(cls.title, [Table(["answers", "cited chunks", "precision", "recall (relevant retrieved)", "recall (all relevant)"],
                                        [[c["answers"], c["cited"], c["precision"], c["recall_of_retrieved_relevant"], c["recall_of_all_relevant"]]])])


class CeilingScores(BaseModel):
    claims: int  # gold-supported claims with gold support spans
    ceiling: float  # share whose whole gold support was offered to the judges
    judges_accuracy: float  # share the panel called supported
    judges_accuracy_when_offered: float | None


class EvidenceCeilingSection(Section):
    """What a perfect judge could reach in candidate mode: a supported claim whose support was not offered
    cannot be judged right. Shown beside the panel's accuracy on the same claims."""

    key, title = "evidence_ceiling", "Evidence ceiling: was the gold support offered to the judges?"
    needs = frozenset({"gold_spans"})

    def __init__(self):
        self.acc = EvidenceCeiling()

    def add(self, item):
        for claim, gold in item.matched.pairs if item.matched else []:
            if gold.label in (None, SUPPORTED) and gold.spans:
                offered = [(p.doc_id, p.start_char, p.end_char) for c in claim.candidates for p in c.parts]
                self.acc.add(gold.gold_sets(), offered, claim.label)

    def result(self, context):
        value = self.acc.result()
        return CeilingScores.model_validate(value) if value else None

    @classmethod
    def block(cls, value, scores):
        if not value:
            return Block(cls.title, text="No gold-supported claims with gold support spans in this data: the ceiling is not measured.")
        return Block(cls.title, [Table(["gold-supported claims", "ceiling (support offered)", "panel says supported", "... when offered"],
                                       [[value["claims"], value["ceiling"], value["judges_accuracy"], value["judges_accuracy_when_offered"]]])])
