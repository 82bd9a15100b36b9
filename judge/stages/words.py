"""A text read once for alignment: its words with their forms, sentence, clause, kind and value, and the forms
of each sentence. Kept by text (:mod:`judge.text.memo`): a claim's candidates and a record's sources are read
by every check of every claim, each normalised once (:func:`judge.text.normalize.normalized`).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

import numpy as np

from judge.stages.names import name_tokens, names_in
from judge.stages.numbers import ORDINALS, canon_number, number_spans, number_values
from judge.text.memo import SPAN_CACHE_CHARS, text_memo
from judge.text.normalize import normalized
from judge.text.sentences import sentences_of
from judge.text.tokens import STOPWORDS, word_forms, word_spans


@dataclass(frozen=True)
class Token:
    """A word of a normalised text: its forms, its place, what it is."""

    text: str
    forms: frozenset[str]
    start: int  # in the normalised text
    sentence: int  # which sentence (or part) of the text it stands in
    clause: int  # which clause: sentences cut at commas, semicolons, colons, brackets and dashes
    content: bool
    name: bool
    number: str | None  # its value, for a number (digits, a number word, an ordinal)


@text_memo()
def sentence_bounds(text: str) -> tuple[tuple[int, int], ...]:
    """The original [start, end) of each sentence of ``text`` (a two-part span's parts are sentences apart)."""
    return tuple((x.start, x.end) for x in sentences_of(text)) or ((0, len(text)),)


_CLAUSE_BREAKS = frozenset(",;:()[]\u2014\u2013.!?\u2026")  # between two words, they start a new clause


@text_memo(max_chars=SPAN_CACHE_CHARS)
def tokens(text: str) -> tuple[Token, ...]:
    """The words of ``text`` (normalised once, kept by text), with their forms, sentence, kind and value."""
    nt = normalized(text)
    norm = nt.text
    numbers = number_values(text)
    inside = {x for a, b, _, spelled in number_spans(norm) if spelled for x in range(a + 1, b)}  # "five" of "twenty-five"
    name_words = {f for n in names_in(text) for t in name_tokens(n) for f in word_forms(t)}
    starts = [a for a, _ in sentence_bounds(text)]
    out, clause, last = [], 0, 0
    spans = word_spans(norm)
    origin = nt.starts[[s for s, _, _ in spans]].tolist() if spans else []  # each word's original offset, at once
    for (start, end, w), at in zip(spans, origin):
        between = norm[last:start]
        clause += not _CLAUSE_BREAKS.isdisjoint(between) or " - " in between
        last = end
        forms = frozenset(word_forms(w))
        value = numbers.get(start)
        if value is None and w[:1].isdigit():
            value = canon_number(w).lstrip("0") or "0"
        if w in ORDINALS:
            forms |= {ORDINALS[w]}  # "first" meets "1st" (whose "1" is a number of its own)
        ch = text[at]  # a name's token is capitalised, or of a script without case (a Hebrew acronym, a quoted name)
        name = bool(name_words) and not w[:1].isdigit() and w.removesuffix("'s") in name_words and (ch.isupper() or not ch.isascii())
        content = ((len(w) > 1 and w not in STOPWORDS) or value is not None) and start not in inside
        out.append(Token(w, forms, start, max(0, bisect_right(starts, at) - 1), clause, content, name, value))
    return tuple(out)


@text_memo()
def sentence_forms(text: str) -> tuple[frozenset[str], ...]:
    """The forms of each sentence's words (:func:`sentence_bounds`), from one normalisation of the text."""
    nt = normalized(text)
    starts = [a for a, _ in sentence_bounds(text)]
    out: list[set[str]] = [set() for _ in starts]
    spans = word_spans(nt.text)
    # each word's sentence, found for all the words at once (a source has tens of thousands)
    at = np.searchsorted(starts, nt.starts[[s for s, _, _ in spans]], side="right") - 1 if spans else []
    for k, (_, _, w) in zip(np.maximum(at, 0).tolist(), spans):
        out[k].update(word_forms(w))
    return tuple(frozenset(x) for x in out)


@text_memo(max_chars=SPAN_CACHE_CHARS)  # keyed by a candidate's text: spans, bounded as tokens are
def forms_of(text: str) -> frozenset[str]:
    """Every form of every word of ``text`` (no sentences: the spans a claim is not judged against are read
    only this far)."""
    return frozenset(f for _, _, w in word_spans(normalized(text).text) for f in word_forms(w))
