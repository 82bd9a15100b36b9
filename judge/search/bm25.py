"""Okapi BM25 over a small in-memory collection (the sentences of one source).

Written here rather than taken from a package because the collections are tiny (one source at a time,
built hundreds of times per run, often for a single claim), the terms come from our own Hebrew-aware
tokeniser, and both the scores and the IDF weights are needed by the coverage scorer. Building is only
counting (done in C by ``Counter``); a term's postings are gathered the first time a query asks for it.
"""

from __future__ import annotations

import math
from collections import Counter


class BM25:
    def __init__(self, docs: list[list[str]], k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        self.counts = [Counter(d) for d in docs]
        self.n = len(docs)
        lengths = [len(d) for d in docs]
        avg = (sum(lengths) / self.n) if self.n else 1.0
        self._norms = [k1 * (1 - b + b * n / (avg or 1.0)) for n in lengths]
        self._postings: dict[str, list[tuple[int, int]]] = {}

    def postings(self, term: str) -> list[tuple[int, int]]:
        """(document, term frequency) for every document holding ``term``."""
        hit = self._postings.get(term)
        if hit is None:
            hit = [(i, c[term]) for i, c in enumerate(self.counts) if term in c]
            self._postings[term] = hit
        return hit

    def idf(self, term: str) -> float:
        """Always positive (the +1 inside the log), highest for terms the source lacks."""
        df = len(self.postings(term))
        return math.log((self.n - df + 0.5) / (df + 0.5) + 1.0)

    def scores(self, query: list[str]) -> dict[int, float]:
        """BM25 score of every document that shares a term with the query (others score 0)."""
        out: dict[int, float] = {}
        k1 = self.k1
        for term in query:
            postings = self.postings(term)
            if not postings:
                continue
            idf = self.idf(term)
            for i, tf in postings:
                out[i] = out.get(i, 0.0) + idf * tf * (k1 + 1) / (tf + self._norms[i])
        return out
