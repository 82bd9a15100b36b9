"""Deterministic checks of a claim against its candidate spans: numbers and names that the evidence lacks.

Numbers, dates and percentages in the claim that appear in no candidate; of those, the ones a candidate
states *differently in the same place*: a mismatch is called only when the candidate's value is of the same
kind (percentage, year, day of a month, time, other) and sits in the same context (the same unit or month
right beside it, or a shared neighbouring content word), so "July 21, 1971" meets "July 20, 1969" and never
the "11" of "Apollo 11" in the same passage. Names (capitalised Latin terms, quoted terms, Hebrew acronyms in
gershayim) that appear in no candidate. Compared on normalised text, so ``12%``/``12 %``, ``1,450``/``1450``
and ``ש"ח``/``ש״ח`` agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from judge.models import Candidate
from judge.results import ClaimChecks, NumberMismatch
from judge.text import normalize, word_forms, words
from judge.text.tokens import STOPWORDS

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:/]\d+)*(?:\s?%)?")
_LATIN_NAME = re.compile(r"\b[A-Z][\w'&-]*(?:\s+(?:of|de|da|do|von|van|the|al|bin)?\s*[A-Z][\w'&-]*)*")
_QUOTED = re.compile(r"[\"“„«]([^\"“”„«»\n]{2,60})[\"”“»]")
_GERSHAYIM = re.compile(r"[\u05d0-\u05ea]+[\"\u05f4][\u05d0-\u05ea]+")
_CAPITALISED_STOPWORDS = frozenset(
    "The A An In On At By For From With And But Or Of To It Its This That These Those He She They We I "
    "His Her Their Our As If When While After Before According Also However Then There Here "
    "O A Os As Um Uma Em No Na De Da Do Para Com Por Segundo Ele Ela".split()
)
MONTHS = frozenset(
    """
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec
    janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro
    ינואר פברואר מרץ מרס אפריל מאי יוני יולי אוגוסט ספטמבר אוקטובר נובמבר דצמבר
    يناير فبراير مارس أبريل ابريل مايو يونيو يوليو أغسطس اغسطس سبتمبر أكتوبر اكتوبر نوفمبر ديسمبر
    """.split()
)
PERCENT_WORDS = frozenset("percent pct אחוז אחוזים אחוזי por cento porcento بالمئة بالمائة المئة".split())
CONTEXT_WORDS = 3  # content words either side of a number that make its context


@dataclass(frozen=True)
class NumberMention:
    """One number in a text, with what it measures: its kind and the words around it."""

    value: str  # canonical: no spaces, no thousands separators
    kind: str  # percent, year, day, time, number
    context: tuple[frozenset[str], ...]  # the content words around it (units and months included), each as its forms

    def shared(self, other: NumberMention) -> int:
        """How many of this mention's context words the other's context holds (in any form)."""
        theirs = frozenset().union(*other.context) if other.context else frozenset()
        return sum(bool(forms & theirs) for forms in self.context)


_THOUSANDS_COMMA = re.compile(r"(?<=\d),(?=\d{3}\b)")
_YEAR = re.compile(r"(1[0-9]|20|21)\d\d")


def _canon_number(text: str) -> str:
    text = text.replace(" ", "")
    return _THOUSANDS_COMMA.sub("", text)


def number_kind(number: str) -> str:
    """percent, year, time or number (day is told by context, in :func:`mentions`)."""
    if number.endswith("%"):
        return "percent"
    if _YEAR.fullmatch(number):
        return "year"
    if ":" in number:
        return "time"
    return "number"


_kind = number_kind  # the name judge.controls imports


def _is_month(word: str) -> bool:
    return any(f in MONTHS for f in word_forms(word))


def mentions(text: str) -> list[NumberMention]:
    """Every number of ``text`` with its kind and context, in order."""
    norm = normalize(text).text
    tokens = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", norm)]
    out = []
    for m in _NUMBER.finditer(norm):
        value = _canon_number(m.group())
        at = next((i for i, (s, e, _) in enumerate(tokens) if s <= m.start() < e), 0)
        before = [w for _, _, t in tokens[max(0, at - 6) : at] for w in words(t)]
        after = [w for _, _, t in tokens[at + 1 : at + 7] for w in words(t)]
        own = [w for w in words(tokens[at][2]) if not w[0].isdigit()] if tokens else []  # כ-78 -> כ; 5km -> km
        if not value.endswith("%") and after and any(f in PERCENT_WORDS for f in word_forms(after[0])):
            value += "%"  # "12 אחוזים", "12 percent": the unit written out
        kind = number_kind(value)
        near = (before[-1:] + after[:1]) if before or after else []
        if kind == "number" and any(_is_month(w) for w in near + own):
            kind = "day"
        ctx_before = [w for w in before if _is_context(w)][-CONTEXT_WORDS:]
        ctx_after = [w for w in after if _is_context(w)][:CONTEXT_WORDS]
        ctx = list(dict.fromkeys(ctx_before + ctx_after + [w for w in own if _is_context(w)]))
        context = tuple(frozenset(word_forms(w)) for w in ctx)
        out.append(NumberMention(value, kind, context))
    return out


def _is_context(word: str) -> bool:
    return len(word) > 1 and not word[0].isdigit() and word not in STOPWORDS


def numbers_in(text: str) -> list[str]:
    return list(dict.fromkeys(m.value for m in mentions(text)))


def names_in(text: str) -> list[str]:
    found: list[str] = []
    for m in _LATIN_NAME.finditer(text):
        words_ = [w for w in m.group().split() if w not in _CAPITALISED_STOPWORDS]
        name = " ".join(words_).strip()
        if len(name) > 1 and name[0].isupper():
            found.append(name)
    found.extend(m.group(1).strip() for m in _QUOTED.finditer(text))
    found.extend(m.group() for m in _GERSHAYIM.finditer(text))
    return list(dict.fromkeys(found))


def _present(value: str, values: set[str]) -> bool:
    """``value`` is among ``values``, with or without its percent sign."""
    return value in values or value.rstrip("%") in values or f"{value.rstrip('%')}%" in values


def aligned_mismatches(
    claim: str, evidence_texts: list[str], min_shared: int = 1, margin_if_present: int = 1
) -> list[NumberMismatch]:
    """Numbers of the claim that the evidence states differently in the same context.

    Each claim number is aligned with the evidence number of the same kind whose context (each text's own
    words; give a candidate's parts as separate texts) shares the most word forms with its own. It is a
    mismatch when that number has another value and shares at least ``min_shared`` words; when the
    evidence also states the claim's own value, the other must share ``margin_if_present`` words more than
    any mention of that value does (the benefit of the doubt goes to the claim)."""
    claim_mentions = mentions(claim)
    claim_values = {m.value for m in claim_mentions}
    evidence = [m for t in evidence_texts for m in mentions(t)]
    out: dict[str, NumberMismatch] = {}
    for c in claim_mentions:
        same, other, other_shared = -1, None, -1
        for e in evidence:
            if e.kind != c.kind:
                continue
            shared = c.shared(e)
            if _present(e.value, {c.value}) or _present(c.value, {e.value}):
                same = max(same, shared)
            elif e.value not in claim_values and shared > other_shared:
                other, other_shared = e, shared
        margin = margin_if_present if same >= 0 else 1
        if other is not None and other_shared >= min_shared and other_shared >= same + margin and c.value not in out:
            out[c.value] = NumberMismatch(claim=c.value, candidate=other.value)
    return list(out.values())


def check_claim(claim: str, candidates: list[Candidate], sources: dict[str | None, str] | None = None) -> ClaimChecks:
    """The checks of ``claim`` against its candidates; with ``sources`` (doc_id -> text), also the conflicts
    the whole source holds (see :mod:`judge.stages.conflicts`), the best candidate's own sentences aside."""
    texts = [normalize(c.text).text for c in candidates]
    all_numbers = {n for c in candidates for n in numbers_in(c.text)}
    numbers = numbers_in(claim)
    missing = [n for n in numbers if not _present(n, all_numbers)]
    parts = [p.excerpt for c in candidates for p in c.parts]
    mismatched = aligned_mismatches(claim, parts) if numbers else []
    names = names_in(claim)
    names_missing = [n for n in names if not any(normalize(n).text in t for t in texts)]
    conflicts = []
    if sources:
        from judge.stages.conflicts import (
            find_conflicts,  # conflicts builds on this module's number rules
        )

        own = [(p.doc_id, p.start_char, p.end_char) for p in candidates[0].parts] if candidates else []
        conflicts = find_conflicts(claim, sources, own)
    return ClaimChecks(
        numbers=numbers,
        numbers_missing=missing,
        numbers_mismatched=mismatched,
        names=names,
        names_missing=names_missing,
        conflicts=conflicts,
    )
