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

Candidates differ in size, so hit@k alone flatters a search that offers long ones. Budget-honest figures:
- ``offered``: for the top-k candidates, the sentences and tokens (characters / 4, union of the offered
  characters) per claim, and plain BM25 given exactly as many sentences per claim as were offered;
- ``budget``: the curve over token budgets, each a share of the mean full-source tokens of the evaluated
  claims (one budget for every claim, so the share is a ratio of means, as the context benchmark counts
  prompt tokens). At each budget the search offers whole sentences (``judge.search.offer``); a gold set is
  hit when the union of what was offered covers at least half of each of its spans. Beside it: plain BM25
  given the same sentences per claim, and plain BM25 given the same tokens. ``headline`` is the 0.2 row.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from judge.models import Attribution, Candidate, Record
from judge.search.bm25 import BM25
from judge.search.index import CHARS_PER_TOKEN, Index, offer
from judge.text import Sentence, split_sentences

FOUND_SHARE = 0.5
BUDGET_SHARES = (0.05, 0.1, 0.2, 0.3)
HEADLINE_SHARE = 0.2
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


def _union(parts: list[tuple[str | None, int, int]]) -> dict[str | None, list[tuple[int, int]]]:
    """Offered characters per document, merged into disjoint ranges."""
    by_doc: dict[str | None, list[tuple[int, int]]] = {}
    for doc, a, b in sorted(parts, key=lambda p: (str(p[0]), p[1])):
        ranges = by_doc.setdefault(doc, [])
        if ranges and a <= ranges[-1][1]:
            ranges[-1] = (ranges[-1][0], max(ranges[-1][1], b))
        else:
            ranges.append((a, b))
    return by_doc


def _offered(cands: list[Candidate]) -> tuple[dict, int, int]:
    """(offered ranges per document, characters offered, sentences touched)."""
    union = _union([(p.doc_id, p.start_char, p.end_char) for c in cands for p in c.parts])
    chars = sum(b - a for ranges in union.values() for a, b in ranges)
    sentences = len({(c.doc_id, s) for c in cands for s in c.sentence_ids})
    return union, chars, sentences


def _span_found(span: Attribution, union: dict) -> bool:
    ranges = [r for doc, rs in union.items() if doc is None or span.doc_id is None or doc == span.doc_id for r in rs]
    overlap = sum(max(0, min(b, span.end_char) - max(a, span.start_char)) for a, b in ranges)
    return overlap >= FOUND_SHARE * (span.end_char - span.start_char)


@dataclass
class Offered:
    """What one system offered for one claim at one budget, and whether it holds the gold support."""

    chars: int
    sentences: int
    hit: bool
    spans_found: list[bool]


def score_offer(gold_sets: list[list[Attribution]], cands: list[Candidate]) -> Offered:
    union, chars, sentences = _offered(cands)
    hit = any(all(_span_found(s, union) for s in gold) for gold in gold_sets)
    return Offered(chars, sentences, hit, [_span_found(s, union) for s in gold_sets[0]])


def _offer_summary(rows: list[Offered], source_chars: float) -> dict:
    n = len(rows)
    spans = [f for r in rows for f in r.spans_found]
    tokens = sum(r.chars for r in rows) / n / CHARS_PER_TOKEN
    return {
        "hit": sum(r.hit for r in rows) / n,
        "span_recall": (sum(spans) / len(spans)) if spans else None,
        "tokens_per_claim": round(tokens, 1),
        "share_of_source": round(tokens / (source_chars / CHARS_PER_TOKEN), 4),
        "sentences_per_claim": round(sum(r.sentences for r in rows) / n, 2),
    }


class PlainBM25:
    """The baseline: word-level BM25 over the same sentences, one sentence per candidate."""

    def __init__(self, source: str, doc_id: str | None = None, sentences: list[Sentence] | None = None):
        self.doc_id = doc_id
        self.sentences = split_sentences(source) if sentences is None else sentences
        self.bm25 = BM25([_PLAIN_WORD.findall(s.text.lower()) for s in self.sentences])

    def within(self, claim: str, budget_chars: int) -> list[Candidate]:
        """Sentences in BM25 order while they fit in ``budget_chars`` (the same-tokens baseline)."""
        out = []
        for c in self.search(claim, len(self.sentences)):
            if c.end_char - c.start_char <= budget_chars:
                out.append(c)
                budget_chars -= c.end_char - c.start_char
        return out

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


def _ranked(found: list[Candidate], k: int) -> list[Candidate]:
    return sorted(found, key=lambda c: -c.score)[:k]


def evaluate(records: list[Record], format: str, k: int = 5, shares: tuple[float, ...] = BUDGET_SHARES) -> dict:
    """Search every claim that has gold spans; figures overall and by genre, ours and the baseline's."""
    ks = tuple(sorted({1, k, 10} if k < 10 else {1, k}))
    k_max = max(ks)
    claims = [(r, c, c.gold_sets()) for r in records for c in r.claims]
    claims = [(r, c, g) for r, c, g in claims if g]
    source_chars = (sum(sum(len(s.text) for s in r.sources) for r, _, _ in claims) / len(claims)) if claims else 0.0
    budgets = {share: max(1, round(share * source_chars / CHARS_PER_TOKEN)) for share in shares}
    ours: list[Scored] = []
    base: list[Scored] = []
    offered = {"ours": [], "plain_same_sentences": []}
    curve = {share: {"ours": [], "plain_same_sentences": [], "plain_same_tokens": []} for share in shares}
    seconds = base_seconds = 0.0
    indexes: dict = {}
    for record, claim, gold in claims:
        t0 = time.perf_counter()
        if record.id not in indexes:
            indexes = {record.id: [Index(s.text, s.doc_id) for s in record.sources]}
        ixs = indexes[record.id]
        query = query_for(record, claim.text, format)
        group = record.genre or "all"
        cands = _ranked([c for ix in ixs for c in ix.search(query, k_max)], k_max)
        mine = {share: offer(ixs, query, budget) for share, budget in budgets.items()}
        t1 = time.perf_counter()
        plains = [PlainBM25(ix.source, ix.doc_id, ix.sentences) for ix in ixs]
        plain = _ranked([c for p in plains for c in p.search(query, k_max)], k_max)
        base_seconds += time.perf_counter() - t1
        seconds += t1 - t0
        ours.append(score_claim(gold, cands, ks, group))
        base.append(score_claim(gold, plain, ks, group))
        at_k = score_offer(gold, cands[:k])
        offered["ours"].append(at_k)
        offered["plain_same_sentences"].append(score_offer(gold, _ranked([c for p in plains for c in p.search(query, at_k.sentences)], at_k.sentences)))
        for share, budget in budgets.items():
            got = score_offer(gold, mine[share])
            curve[share]["ours"].append(got)
            n = got.sentences
            same_n = _ranked([c for p in plains for c in p.search(query, n)], n) if n else []
            curve[share]["plain_same_sentences"].append(score_offer(gold, same_n))
            same_t = [c for p in plains for c in p.within(query, got.chars)] if len(plains) == 1 else _ranked(
                [c for p in plains for c in p.within(query, got.chars)], len(plains[0].sentences))
            curve[share]["plain_same_tokens"].append(score_offer(gold, _trim_to(same_t, got.chars)))
    groups = sorted({r.group for r in ours})
    report = {
        "k": k,
        "found_rule": f"a top-k candidate covers >= {FOUND_SHARE:.0%} of the gold span's characters",
        "overall": _summary(ours, ks),
        "baseline_overall": _summary(base, ks),
        "by_group": {g: _summary([r for r in ours if r.group == g], ks) for g in groups} if len(groups) > 1 else {},
        "baseline_by_group": {g: _summary([r for r in base if r.group == g], ks) for g in groups} if len(groups) > 1 else {},
        "seconds": round(seconds, 3),
        "baseline_seconds": round(base_seconds, 3),
        "source_tokens_per_claim": round(source_chars / CHARS_PER_TOKEN, 1),
    }
    report["ratio_to_baseline"] = _ratios(report["overall"], report["baseline_overall"])
    if claims:
        report["offered"] = {name: _offer_summary(rows, source_chars) for name, rows in offered.items()}
        report["budget"] = [
            {"share": share, "budget_tokens": budgets[share], **{name: _offer_summary(rows, source_chars) for name, rows in curve[share].items()}}
            for share in shares
        ]
        for row in report["budget"]:
            row["ratio_same_sentences"] = _ratio(row["ours"]["hit"], row["plain_same_sentences"]["hit"])
            row["ratio_same_tokens"] = _ratio(row["ours"]["hit"], row["plain_same_tokens"]["hit"])
        report["headline"] = next((row for row in report["budget"] if row["share"] == HEADLINE_SHARE), None)
    return report


def _trim_to(cands: list[Candidate], chars: int) -> list[Candidate]:
    """Merged several-source baseline offers, cut back to the budget in their order."""
    out = []
    for c in cands:
        if c.end_char - c.start_char <= chars:
            out.append(c)
            chars -= c.end_char - c.start_char
    return out


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 4) if a is not None and b else None
