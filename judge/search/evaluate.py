"""How well the search finds gold support: recall@k of spans, hit@k of whole gold sets, MRR.

Definitions (the same for every dataset):
- a gold span is *found* at k when one of the top-k candidates covers at least half of its characters
  (a pair candidate covers with both of its parts);
- a gold *set* is hit at k when every span of it is found at k; a claim is hit when any of its
  alternative sets is (WiCE lists alternatives; SQuAD files list several annotators' spans);
- MRR is the mean over claims of 1/rank of the first candidate that covers any gold span (0 if none
  within k).
Span recall counts the spans of each claim's first gold set. Alongside, the same figures for a plain
word-level BM25 over the same sentences (lower-cased ``\\w+`` words, no normalisation, one sentence per
candidate), computed in the same run, so each figure has a baseline ratio.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from judge.models import Attribution, Candidate, Record
from judge.search.bm25 import BM25
from judge.search.index import Index
from judge.text import Sentence, split_sentences

FOUND_SHARE = 0.5
_PLAIN_WORD = re.compile(r"\w+")


@dataclass
class Scored:
    """What one system found for one claim."""

    group: str
    span_found: list[bool]  # spans of the first gold set, found within k
    set_hit: dict[int, bool]  # k -> any gold set wholly found within k
    reciprocal_rank: float


def _covered(span: Attribution, cand: Candidate) -> float:
    overlap = 0
    for p in cand.parts:
        if p.doc_id is None or span.doc_id is None or p.doc_id == span.doc_id:
            overlap += max(0, min(p.end_char, span.end_char) - max(p.start_char, span.start_char))
    return overlap / (span.end_char - span.start_char)


def _found_rank(span: Attribution, cands: list[Candidate]) -> int | None:
    """1-based rank of the first candidate covering at least half of the span."""
    for rank, c in enumerate(cands, start=1):
        if _covered(span, c) >= FOUND_SHARE:
            return rank
    return None


def score_claim(gold_sets: list[list[Attribution]], cands: list[Candidate], ks: tuple[int, ...], group: str) -> Scored:
    ranks = [[_found_rank(s, cands) for s in gold] for gold in gold_sets]
    k_max = max(ks)
    span_found = [r is not None and r <= k_max for r in ranks[0]]
    set_hit = {k: any(all(r is not None and r <= k for r in rs) for rs in ranks) for k in ks}
    firsts = [r for rs in ranks for r in rs if r is not None]
    return Scored(group, span_found, set_hit, 1.0 / min(firsts) if firsts else 0.0)


class PlainBM25:
    """The baseline: word-level BM25 over the same sentences, one sentence per candidate."""

    def __init__(self, source: str, doc_id: str | None = None, sentences: list[Sentence] | None = None):
        self.doc_id = doc_id
        self.sentences = split_sentences(source) if sentences is None else sentences
        self.bm25 = BM25([_PLAIN_WORD.findall(s.text.lower()) for s in self.sentences])

    def search(self, claim: str, k: int) -> list[Candidate]:
        scores = self.bm25.scores(_PLAIN_WORD.findall(claim.lower()))
        best = max(scores.values(), default=1.0) or 1.0
        out = []
        for i in sorted(scores, key=lambda i: (-scores[i], i))[:k]:
            s = self.sentences[i]
            span = dict(doc_id=self.doc_id, start_char=s.start, end_char=s.end, excerpt=s.text)
            out.append(Candidate(**span, score=scores[i] / best, method="ngram", sentence_ids=[i], parts=[span]))
        return out


def query_for(record: Record, claim_text: str, format: str) -> str:
    """SQuAD-style claims are bare answer extracts: the question is searched together with the answer."""
    return f"{record.question} {claim_text}" if format == "squad" else claim_text


def _summary(rows: list[Scored], ks: tuple[int, ...]) -> dict:
    spans = [f for r in rows for f in r.span_found]
    return {
        "claims": len(rows),
        "spans": len(spans),
        "span_recall": (sum(spans) / len(spans)) if spans else None,
        **{f"hit@{k}": (sum(r.set_hit[k] for r in rows) / len(rows)) if rows else None for k in ks},
        "mrr": (sum(r.reciprocal_rank for r in rows) / len(rows)) if rows else None,
    }


def _ratios(ours: dict, base: dict) -> dict:
    return {
        key: (round(ours[key] / base[key], 4) if isinstance(ours[key], float) and base.get(key) else None)
        for key in ours
        if key not in ("claims", "spans")
    }


def evaluate(records: list[Record], format: str, k: int = 5) -> dict:
    """Search every claim that has gold spans; figures overall and by genre, ours and the baseline's."""
    ks = tuple(sorted({1, k, 10} if k < 10 else {1, k}))
    k_max = max(ks)
    started = time.perf_counter()
    ours: list[Scored] = []
    base: list[Scored] = []
    base_seconds = 0.0
    for record in records:
        indexes = {s.doc_id: Index(s.text, s.doc_id) for s in record.sources}
        for claim in record.claims:
            gold = claim.gold_sets()
            if not gold:
                continue
            query = query_for(record, claim.text, format)
            group = record.genre or "all"
            cands = sorted(
                (c for ix in indexes.values() for c in ix.search(query, k_max)), key=lambda c: -c.score
            )[:k_max]
            ours.append(score_claim(gold, cands, ks, group))
            t0 = time.perf_counter()
            plain = [c for ix in indexes.values() for c in PlainBM25(ix.source, ix.doc_id, ix.sentences).search(query, k_max)]
            plain = sorted(plain, key=lambda c: -c.score)[:k_max]
            base.append(score_claim(gold, plain, ks, group))
            base_seconds += time.perf_counter() - t0
    seconds = time.perf_counter() - started - base_seconds
    groups = sorted({r.group for r in ours})
    report = {
        "k": k,
        "found_rule": f"a top-k candidate covers >= {FOUND_SHARE:.0%} of the gold span's characters",
        "overall": _summary(ours, ks),
        "baseline_overall": _summary(base, ks),
        "by_group": {g: _summary([r for r in ours if r.group == g], ks) for g in groups} if len(groups) > 1 else {},
        "baseline_by_group": {g: _summary([r for r in base if r.group == g], ks) for g in groups} if len(groups) > 1 else {},
        "seconds": round(seconds, 3),
    }
    report["ratio_to_baseline"] = _ratios(report["overall"], report["baseline_overall"])
    return report
