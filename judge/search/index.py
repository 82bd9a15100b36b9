"""Deterministic support-span search over one source.

A claim is looked for in four ways, from strictest to loosest: verbatim in the original text (``exact``),
verbatim after normalisation (``normalized``) or after also folding accents (``folded``), each on word
boundaries only (:mod:`judge.text.bounds`: "Midwest" is not found in "Midwestern"), near-verbatim
inside one sentence (``fuzzy``, rapidfuzz alignment), and by shared content words (``ngram``: one sentence,
``pair``: two sentences that together cover more of the claim than either alone). Lexical scores combine
IDF-weighted recall of the claim's content words (the FlashRAG-style recall rule) with BM25 over words and
Hebrew prefix-stripped words. Candidates are never longer than two sentences, so a judge reads little and
recall cannot be bought with long windows. Every candidate slices the original source exactly.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from rapidfuzz import fuzz

from judge.models import Candidate, Span
from judge.search.bm25 import BM25
from judge.text import content_words, normalize, word_forms
from judge.text.bounds import find_word, snap_to_words
from judge.text.memo import text_memo
from judge.text.normalize import NormalizedText, normalized
from judge.text.sentences import Sentence, sentences_of
from judge.text.tokens import word_spans

_EDGE_PUNCT = " .,;:!?\"'()[]-\u2026"
COVERAGE_WEIGHT = 0.75  # the rest of a lexical score is BM25 relative to the best sentence
LEXICAL_CEILING = 0.95  # lexical and fuzzy scores stay below verbatim ones (exact 1.0, normalized 0.99, folded 0.98)
FUZZY_CEILING = 0.97
TOP_SENTENCES = 20  # sentences considered for pairs
FUZZY_SENTENCES = 3  # sentences aligned with the claim character by character
PAIR_PENALTY = 0.01  # on a tie, one sentence beats a pair
REDUNDANCY_PENALTY = 1.0  # a candidate loses this much for repeating only sentences already chosen
FUZZY_MIN_RATIO = 85.0
FUZZY_MIN_CHARS = 12
# A longer claim is not aligned character by character: partial_ratio_alignment costs about needle length
# squared per window, so a 4,000-character claim over a repetitive 8,000-character source took a second a call
# and a record half a minute (dot leaders, ruled lines); exact, normalised and n-gram matching still see it.
FUZZY_MAX_CHARS = 400
INDEX_CACHE_CHARS = 200_000  # the sources whose readings are kept: ~60 bytes a character, ~12 MB when full
CHARS_PER_TOKEN = 4  # the budget's token estimate, as the evaluation and the scripted server count
# The budgeted offer, tuned on one half of WiCE test (claim ids by sha1 parity) and reported on the other.
REPEAT_DECAY = 0.3
OFFER_BM25_WEIGHT = 0.5
NEAR_BONUS = 0.1
NEAR_DECAY = 0.6
NEAR_SPAN = 3
OFFER_POOL = 40  # sentences considered by their own score, before neighbours join
# A sentence worth less than this is not offered, even with budget left: a neighbour that holds none of the
# claim's words (worth NEAR_BONUS) unless it is a pronoun's antecedent (worth 3x that). The budget is then a
# ceiling, spent where the search is unsure (WiCE test at 0.2x: 19.4 -> 12.3 sentences, 0.198x -> 0.161x of
# the source's tokens, hit 0.924 -> 0.915; tuning half flat from 0.11 to 0.14).
OFFER_STOP_BELOW = 0.12
OFFER_MISFITS = 8  # stop after this many consecutive sentences too long for what is left of the budget
# The sentence before a chosen one that opens with a pronoun holds its antecedent: its nearness bonus is
# raised by this much (tuning half 0.901 -> 0.913 hit at 0.2x, flat from 0.2 to 1.0; held out 0.923 -> 0.929).
PRONOUN_BONUS = 0.2
_FIRST_WORD = re.compile(r"\W*(\w+)")
_ANAPHORA = frozenset((  # normalised (case-folded) openings; English, Hebrew, Portuguese
    "he", "she", "it", "they", "his", "her", "its", "their", "him", "them", "this", "these", "those", "there",
    "such", "both", "הוא", "היא", "הם", "הן", "זה", "זו", "זאת", "אלה", "אלו", "ele", "ela", "eles", "elas",
))


@dataclass
class _Query:
    """One claim's content words with their IDF weights, and the BM25 scores of the sentences."""

    weights: list[float]
    total: float
    bm25: dict[int, float]
    best_bm25: float
    covers: dict[int, set[int]]  # sentence -> indices of the claim words it contains

    def score(self, covered: set[int], bm25: float) -> float:
        coverage = sum(self.weights[w] for w in covered) / self.total
        return LEXICAL_CEILING * (COVERAGE_WEIGHT * coverage + (1 - COVERAGE_WEIGHT) * bm25 / self.best_bm25)


@dataclass
class _Pooled:
    score: float
    method: str
    parts: list[tuple[int, int]]  # original offsets
    sentence_ids: tuple[int, ...]


@text_memo()
def _normalized(text: str, fold_accents: bool = False) -> str:
    """Claims are normalised several times per search; cache the string."""
    return normalize(text, fold_accents).text


@dataclass(frozen=True)
class _Reading:
    """What an :class:`Index` reads of its source: the same for every record that shares the source."""

    sentences: list[Sentence]
    norm: NormalizedText
    norm_ranges: list[tuple[int, int]]  # each sentence's [start, end) in the normalised text
    bm25: BM25


@text_memo(max_chars=INDEX_CACHE_CHARS)
def _reading(source: str) -> _Reading:
    """Kept by text: records often share a source (a dialogue under several summaries, a page under several
    claims), and building the reading was a sixth of a no-model run. Shared, so never written to (the BM25
    postings it fills on demand are a function of the counts)."""
    sentences = list(sentences_of(source))  # split once with the checks' views of the source
    norm = normalized(source)  # the one normalisation of the source, shared with the checks' readings
    bounds = np.array([(s.start, s.end) for s in sentences], dtype=np.int64).reshape(-1, 2)
    nstarts = np.searchsorted(norm.starts, bounds[:, 0]).tolist()
    nends = np.searchsorted(norm.starts, bounds[:, 1]).tolist()
    ranges = list(zip(nstarts, nends))
    return _Reading(sentences, norm, ranges, BM25(_sentence_terms(norm.text, ranges)))


def _sentence_terms(text: str, ranges: list[tuple[int, int]]) -> list[list[str]]:
    """The forms of each sentence's words, from one tokenisation of the whole text (a long source's is kept
    for the checks' views, judge.text.tokens.word_spans): sentences are cut at spaces, which no word holds,
    so the words of the whole text that start in a sentence are the sentence's own."""
    spans, k, out = word_spans(text), 0, []
    for a, b in ranges:
        while k < len(spans) and spans[k][0] < a:
            k += 1
        terms: list[str] = []
        while k < len(spans) and spans[k][0] < b:
            terms.extend(word_forms(spans[k][2]))
            k += 1
        out.append(terms)
    return out


@text_memo(max_chars=50_000)  # the sources of the records at work (4 at a time, by default)
def _folded(source: str) -> NormalizedText:
    return normalize(source, fold_accents=True)


class Index:
    """The sentences, normalised text and term statistics of one source, built once for all its claims."""

    def __init__(self, source: str, doc_id: str | None = None):
        self.source = source
        self.doc_id = doc_id
        reading = _reading(source)
        self.sentences = reading.sentences
        self.norm = reading.norm
        self._norm_ranges = reading.norm_ranges
        self.bm25 = reading.bm25

    @property
    def folded(self) -> NormalizedText:
        """Accent-folded normalisation, built only when a claim needs the Portuguese fallback (once per source)."""
        return _folded(self.source)

    # -- the search ---------------------------------------------------------------------------------------
    def search(self, claim: str, k: int = 5) -> list[Candidate]:
        """The top ``k`` candidate support spans for ``claim``, best first."""
        if k <= 0 or not claim.strip() or not self.sentences:
            return []
        query = self._query(claim)
        pool = self._verbatim(claim, query)
        if query is not None:
            singles = {i: query.score(covered, query.bm25.get(i, 0.0)) for i, covered in query.covers.items()}
            top = sorted(singles, key=lambda i: (-singles[i], i))[:TOP_SENTENCES]
            pool.extend(_Pooled(singles[i], "ngram", [self._sentence_span(i)], (i,)) for i in top)
            pool.extend(self._pairs(query, top, singles))
            pool.extend(self._fuzzy(claim, top[:FUZZY_SENTENCES]))
        return [self._candidate(p) for p in self._select(pool, k)]

    def offer(self, claim: str, budget_tokens: int) -> list[Candidate]:
        """Whole sentences (a verbatim span first, when there is one) within ``budget_tokens``, best first."""
        return [c for c, _ in self.offer_ranked(claim, budget_tokens)]

    def offer_ranked(self, claim: str, budget_tokens: int) -> list[tuple[Candidate, float]]:
        """``offer`` with each pick's greedy value, so several sources' offers can be merged."""
        budget = budget_tokens * CHARS_PER_TOKEN
        if budget <= 0 or not claim.strip() or not self.sentences:
            return []
        query = self._query(claim)
        out: list[tuple[Candidate, float]] = []
        taken: set[int] = set()
        for p in self._verbatim(claim, query):
            length = p.parts[0][1] - p.parts[0][0]
            if length <= budget:
                out.append((self._candidate(p), 2.0))
                taken.update(p.sentence_ids)
                budget = (budget - length) // 2
        if query is None:
            return out
        misfits = 0
        for i, value in self._greedy_sentences(query, taken):
            if value < OFFER_STOP_BELOW:
                break
            start, end = self._sentence_span(i)
            if end - start > budget and not out:
                window = self._window(i, claim, budget)  # the budget is smaller than the best sentence
                if window is not None:
                    start, end = window
            if end - start > budget:
                misfits += 1
                if misfits >= OFFER_MISFITS:
                    break
                continue
            misfits = 0
            budget -= end - start
            single = query.score(query.covers.get(i, set()), query.bm25.get(i, 0.0))
            out.append((self._candidate(_Pooled(single, "ngram", [(start, end)], (i,))), value))
        return out

    def _window(self, i: int, claim: str, budget: int) -> tuple[int, int] | None:
        """The part of sentence ``i``, at most ``budget`` characters, holding the most of the claim's words."""
        wanted = {f for w in content_words(_normalized(claim)) for f in word_forms(w)}
        a, b = self._norm_ranges[i]
        spans = word_spans(self.norm.text[a:b])
        hits = [any(f in wanted for f in word_forms(w)) for _, _, w in spans]
        best, best_count, count, left = None, 0, 0, 0
        for right, (_, end, _) in enumerate(spans):
            count += hits[right]
            while left < right and end - spans[left][0] > budget:
                count -= hits[left]
                left += 1
            if count > best_count and end - spans[left][0] <= budget:
                best, best_count = (spans[left][0], end), count
        if best is None:
            return None
        start, end = self.norm.to_original(a + best[0], a + best[1])
        return (start, end) if end - start <= budget else None

    def _greedy_sentences(self, query: _Query, taken: set[int]):
        """Sentences in greedy order of marginal coverage + BM25 + nearness to those already chosen.

        A sentence's coverage gain is kept up to date incrementally: when a claim word is covered once more,
        only the sentences holding that word lose part of their gain.
        """
        weights, covers, n = query.weights, query.covers, len(self.sentences)
        singles = {i: query.score(c, query.bm25.get(i, 0.0)) for i, c in covers.items()}
        pool = set(sorted(singles, key=lambda i: (-singles[i], i))[:OFFER_POOL]) - taken
        holders: dict[int, list[int]] = {}
        for i, words_in in covers.items():
            for w in words_in:
                holders.setdefault(w, []).append(i)
        bm_scale = OFFER_BM25_WEIGHT / query.best_bm25
        base = {i: sum(weights[w] for w in c) / query.total + bm_scale * query.bm25.get(i, 0.0) for i, c in covers.items()}
        near: dict[int, float] = {}
        chosen: set[int] = set()
        heap: list[tuple[float, int]] = []

        def value(i: int) -> float:
            return base.get(i, 0.0) + NEAR_BONUS * near.get(i, 0.0)

        def cover(i: int) -> None:
            chosen.add(i)
            for w in covers.get(i, ()):
                loss = weights[w] * (1 - REPEAT_DECAY) / query.total
                for j in holders[w]:
                    base[j] -= loss  # the word now counts REPEAT_DECAY times as much as before
                weights[w] *= REPEAT_DECAY
            antecedent = self._opens_with_pronoun(i)
            for d in range(1, NEAR_SPAN + 1):
                for j in (i - d, i + d):
                    bonus = NEAR_DECAY ** (d - 1) + (PRONOUN_BONUS / NEAR_BONUS if j == i - 1 and antecedent else 0.0)
                    if 0 <= j < n and j not in chosen and bonus > near.get(j, 0.0):
                        near[j] = bonus
                        heapq.heappush(heap, (-value(j), j))

        weights = list(weights)
        for i in taken:
            cover(i)
        for i in pool - chosen:
            heapq.heappush(heap, (-value(i), i))
        # Lazy greedy: values only fall between pushes (a rise pushes a fresh entry), so a popped entry whose
        # value is still current is the best one.
        while heap:
            negative, i = heapq.heappop(heap)
            if i in chosen:
                continue
            current = value(i)
            if current < -negative - 1e-12:
                heapq.heappush(heap, (-current, i))
                continue
            cover(i)
            yield i, current

    def _opens_with_pronoun(self, i: int) -> bool:
        """Sentence ``i`` opens with a pronoun or demonstrative, so its subject is in a sentence before."""
        a, b = self._norm_ranges[i]
        first = _FIRST_WORD.match(self.norm.text, a, b)
        return first is not None and first.group(1) in _ANAPHORA

    def _verbatim(self, claim: str, query: _Query | None) -> list[_Pooled]:
        stripped = claim.strip(_EDGE_PUNCT)
        if len(stripped) < 2:
            return []
        at = find_word(self.source, stripped)  # on word boundaries: "Midwest" is not in "Midwestern"
        if at >= 0:
            return [self._pooled_span(1.0, "exact", at, at + len(stripped))]
        # Folding accents can only help when every content word of the claim occurs somewhere.
        folding_may_help = query is not None and len(set().union(*query.covers.values())) == len(query.weights)
        for method, score in (("normalized", 0.99), ("folded", 0.98)):
            if method == "folded" and not folding_may_help:
                break
            normed = self.norm if method == "normalized" else self.folded
            needle = _normalized(stripped, method == "folded").strip()
            at = find_word(normed.text, needle)
            if at >= 0:
                start, end = normed.to_original(at, at + len(needle))
                return [self._pooled_span(score, method, start, end)]
        return []

    def _query(self, claim: str) -> _Query | None:
        claim_words = list(dict.fromkeys(content_words(_normalized(claim))))
        if not claim_words:
            return None
        weights, covers = [], {}
        for wi, w in enumerate(claim_words):
            forms = word_forms(w)
            weights.append(self.bm25.idf(forms[-1]))
            for form in forms:
                for sid, _ in self.bm25.postings(form):
                    covers.setdefault(sid, set()).add(wi)
        bm = self.bm25.scores([f for w in claim_words for f in word_forms(w)])
        return _Query(weights, sum(weights), bm, max(bm.values(), default=0.0) or 1.0, covers)

    def _pairs(self, query: _Query, top: list[int], singles: dict[int, float]) -> list[_Pooled]:
        """Two sentences that together cover more of the claim than the better of them alone."""
        out = []
        for i, j in combinations(sorted(top), 2):
            bm = max(query.bm25.get(i, 0.0), query.bm25.get(j, 0.0))
            score = query.score(query.covers[i] | query.covers[j], bm) - PAIR_PENALTY
            if score <= max(singles[i], singles[j]):
                continue
            if j == i + 1:
                parts = [(self.sentences[i].start, self.sentences[j].end)]
            else:
                parts = [self._sentence_span(i), self._sentence_span(j)]
            out.append(_Pooled(score, "pair", parts, (i, j)))
        return out

    def _fuzzy(self, claim: str, sentence_ids: list[int]) -> list[_Pooled]:
        needle = _normalized(claim).strip(_EDGE_PUNCT)
        if not FUZZY_MIN_CHARS <= len(needle) <= FUZZY_MAX_CHARS:
            return []
        out = []
        for i in sentence_ids:
            a, b = self._norm_ranges[i]
            hay = self.norm.text[a:b]
            if len(hay) <= len(needle):
                continue  # the whole sentence is already a candidate
            al = fuzz.partial_ratio_alignment(needle, hay, score_cutoff=FUZZY_MIN_RATIO)
            if al is None or al.dest_end <= al.dest_start:
                continue
            start, end = self.norm.to_original(a + al.dest_start, a + al.dest_end)
            start, end = self._trim(start, end)
            if end > start:
                out.append(self._pooled_span(FUZZY_CEILING * al.score / 100.0, "fuzzy", start, end))
        return out

    # -- selection and output -----------------------------------------------------------------------------
    def _select(self, pool: list[_Pooled], k: int) -> list[_Pooled]:
        """Greedy top-k: best score first, discounting candidates that repeat sentences already chosen.

        Lazy: a candidate's discounted value never exceeds its score, so each round scans the pool in score
        order only until no remaining score can beat the best value found.
        """
        pool = sorted(pool, key=lambda p: (-p.score, p.parts[0][0]))
        chosen: list[_Pooled] = []
        seen_spans: set[tuple] = set()
        seen_sentences: set[int] = set()
        while pool and len(chosen) < k:
            best_at, best_value = -1, float("-inf")
            for at, p in enumerate(pool):
                if p.score <= best_value:
                    break
                repeat = sum(s in seen_sentences for s in p.sentence_ids) / max(1, len(p.sentence_ids))
                value = p.score - REDUNDANCY_PENALTY * repeat
                if value > best_value:
                    best_at, best_value = at, value
            best = pool.pop(best_at)
            key = tuple(best.parts)
            if key in seen_spans:
                continue
            seen_spans.add(key)
            seen_sentences.update(best.sentence_ids)
            chosen.append(best)
        return chosen

    def _sentence_span(self, i: int) -> tuple[int, int]:
        s = self.sentences[i]
        return s.start, s.end

    def _sentences_of(self, start: int, end: int) -> tuple[int, ...]:
        return tuple(i for i, s in enumerate(self.sentences) if s.start < end and start < s.end)

    def _pooled_span(self, score: float, method: str, start: int, end: int) -> _Pooled:
        return _Pooled(score, method, [(start, end)], self._sentences_of(start, end))

    def _trim(self, start: int, end: int) -> tuple[int, int]:
        while start < end and self.source[start].isspace():
            start += 1
        while end > start and self.source[end - 1].isspace():
            end -= 1
        return start, end

    def _candidate(self, p: _Pooled) -> Candidate:
        """The one place a span leaves the search: on the source's token boundaries, never inside a word or a
        number (a fuzzy alignment may stop at "202" of "2021"), and slicing the source exactly."""
        snapped = [snap_to_words(self.source, s, e) for s, e in p.parts]
        parts = [Span(doc_id=self.doc_id, start_char=s, end_char=e, excerpt=self.source[s:e]) for s, e in snapped]
        first = parts[0]
        return Candidate(
            doc_id=self.doc_id,
            start_char=first.start_char,
            end_char=first.end_char,
            excerpt=first.excerpt,
            score=round(min(1.0, max(0.0, p.score)), 6),
            method=p.method,
            sentence_ids=list(p.sentence_ids),
            parts=parts,
        )


def search(claim: str, source: str, k: int = 5) -> list[Candidate]:
    """Top-``k`` support spans of ``claim`` in ``source`` (builds a one-off :class:`Index`)."""
    return Index(source).search(claim, k)


def offer(indexes: list[Index], claim: str, budget_tokens: int) -> list[Candidate]:
    """The budgeted offer over several sources: each source's picks merged by value, within one budget."""
    if len(indexes) == 1:
        return indexes[0].offer(claim, budget_tokens)
    ranked = sorted((pair for ix in indexes for pair in ix.offer_ranked(claim, budget_tokens)), key=lambda p: -p[1])
    out, left = [], budget_tokens * CHARS_PER_TOKEN
    for cand, _ in ranked:
        length = sum(p.end_char - p.start_char for p in cand.parts)
        if length <= left:
            out.append(cand)
            left -= length
    return out
