"""A number the evidence states otherwise in the same slot of the same entity: the rule the checks and the
conflicts share.

A mismatch is called only when all of these hold:

- the claim states a slot of its own: three content words besides the numbers, or two that a number does
  not open. A short answer ("13 חברי כנסת", "15 horas") has its slot in its question, and any other
  figure of the same unit in the source would look like a contradiction;
- the candidate's number is of the same kind (percentage, year, decade, day, time, other), in the same
  month for a day, and, for a plain number, counts the same unit (``78 קילומטרים`` meets ``87 ק"מ``;
  ``Route 495`` never meets a ``3.45-mile`` length; "1500 pieces" is a count, no year); neither stands in a
  list or a range ("1958, 1962 and 1970", "6-7 March"), which the missing-number check compares as a set;
- it has, within six tokens of its own sentence, one of the claim number's slot words written in lower
  case: the nearest such word on either side of the claim's number, or one of its three neighbours (names,
  months and the unit aside), so "Sir John *sold* it in 1929" never meets "Sir John *gave* it in 1943",
  nor the "2019 Selman A. Waksman *Award*" the year it was "first *awarded*";
- the entity is the same: the text holds what the claim says before the number (its lead: all of it up to
  three words, all but 40% of the rest beyond two; for a candidate, whose words reword the claim's, one
  word of it anywhere in the candidates), and, when the claim has names, one of them;
- its text holds at least two of the claim's words, and more than any mention of the claim's own value in
  the same slot does; a text that states both values is the claim's benefit of the doubt.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from functools import lru_cache

from judge.results import NumberMismatch
from judge.stages.names import name_present, names_in
from judge.stages.numbers import (
    MULTIPLIERS,
    PERCENT_WORDS,
    capitalised_at,
    is_context_word,
    is_month,
    mentions,
    unit_forms,
)
from judge.text import words
from judge.text.normalize import normalized
from judge.text.memo import SPAN_CACHE_CHARS, text_memo
from judge.text.tokens import STOPWORDS, word_spans

SLOT_MIN_WORDS = 3  # content words (numbers aside) a claim needs to state a number's slot by itself


def present(value: str, values: set[str]) -> bool:
    """``value`` is among ``values``, with or without its percent sign."""
    return value in values or value.rstrip("%") in values or f"{value.rstrip('%')}%" in values


@text_memo(max_chars=SPAN_CACHE_CHARS)
def _claim_words(claim: str) -> tuple[frozenset[str], ...]:
    """The claim's content words (numbers, months and percent words aside), each as its forms (kept: a claim
    is compared with every sentence of its source that looks like it)."""
    found = dict.fromkeys(w for w in words(normalized(claim).text) if is_context_word(w) and not is_month(w) and w not in PERCENT_WORDS)
    return tuple(unit_forms(w) for w in found)


@text_memo(max_chars=SPAN_CACHE_CHARS)
def states_a_slot(claim: str) -> bool:
    """Whether ``claim`` says by itself what its numbers measure (see the module docstring)."""
    n = len(_claim_words(claim))
    if n >= SLOT_MIN_WORDS:
        return True
    first = next(iter(words(normalized(claim).text)), "")
    return n == 2 and not first[:1].isdigit()


def aligned_mismatches(
    claim: str, evidence_texts: list[str], min_shared: int = 2, margin_if_present: int = 1, context: str | None = None
) -> list[NumberMismatch]:
    """Numbers of the claim that the evidence states differently in the same slot of the same entity (the
    rules are the module docstring's).

    Each claim number is aligned with the evidence number of the same kind, month and unit that has one of
    its slot words around it, stands in a text that holds the claim's lead and one of its names, and whose
    text (give a candidate's parts as separate texts) holds the most of the claim's words. It is a mismatch
    when that number has another value and its text holds at least ``min_shared`` of them; when the
    evidence also states the claim's own value in the same slot, the other must hold ``margin_if_present``
    more than any mention of that value does. ``context``: the candidates together, where a reworded lead
    is looked for loosely (None: each text must hold the lead itself, as a sentence of the source must)."""
    claim_mentions = mentions(claim)
    if not claim_mentions or not states_a_slot(claim):
        return []
    claim_words = _claim_words(claim)
    claim_values = {m.value for m in claim_mentions}
    evidence = [(m, t) for t in evidence_texts for m in mentions(t) if not m.listed]
    named: dict[str, bool] = {}  # names_held per evidence text, once per call (not once per pair of numbers)
    out: dict[str, NumberMismatch] = {}
    for c in claim_mentions:
        if c.listed or (c.word and c.value == "1"):
            continue
        slot = tuple(f for f in _slot_words(claim, c.start, c.end) + c.common if not _is_unit(f, c.unit))
        lead = lead_words(claim, c.start)
        same, other, other_shared = -1, None, -1
        stating = {text for e, text in evidence if present(e.value, {c.value}) or present(c.value, {e.value})}
        for e, text in evidence:
            if e.kind != c.kind or e.unit != c.unit or (c.month and e.month and c.month != e.month):
                continue
            in_slot = any(forms & e.common_bag for forms in slot)
            if present(e.value, {c.value}) or present(c.value, {e.value}):
                # the claim's own value in the claim's slot: the benefit of the doubt (in another slot it is
                # another fact: "ב־1881 עלה לארץ" does not say he published in 1881)
                if in_slot:
                    same = max(same, sum(bool(forms & (e.bag | _text_forms(text))) for forms in claim_words))
                continue
            if not in_slot or e.value in claim_values or text in stating:
                continue  # another slot ("ב־1881 עלה לארץ" for "פרסם ... ב־1881"), or a text that states both
            shared = sum(bool(forms & (e.bag | _text_forms(text))) for forms in claim_words)
            if (
                shared > other_shared
                and not (e.word and e.value == "1")
                and same_frame(claim, c, text, e)
                and (holds_lead(lead, text) if context is None else holds_lead(lead, context, loosely=True))
                and (named[text] if text in named else named.setdefault(text, names_held(claim, text)))
            ):
                other, other_shared = e, shared
        margin = margin_if_present if same >= 0 else 1
        if other is not None and other_shared >= min_shared and other_shared >= same + margin and c.value not in out:
            out[c.value] = NumberMismatch(claim=c.value, candidate=other.value)
    return list(out.values())


@text_memo()
def _words_at(text: str) -> tuple[tuple[int, int, str], ...]:
    return tuple(word_spans(normalized(text).text))


def _after(text: str, m) -> str:
    """The word right after a number, its unit, a multiplier, a percent word and other numbers skipped."""
    return next((w for s, _, w in _words_at(text) if s >= m.end and not w[0].isdigit() and not _is_unit(unit_forms(w), m.unit)
                 and w not in MULTIPLIERS and w not in PERCENT_WORDS), "")


def same_frame(claim: str, c, text: str, e) -> bool:
    """The two numbers count the same way: the small words right after them (their unit aside) are not two
    different ones ("with 28 minutes to go" and "62 minutes into the match" are the same moment, counted from
    either end)."""
    a, b = _after(claim, c), _after(text, e)
    return not (a in STOPWORDS and b in STOPWORDS and a != b)


# Words of discourse, not of what a number is about: "Additionally, the passage states that ... 2019".
META_WORDS = frozenset(
    """
    additionally also first second third finally moreover furthermore however passage text article summary
    document mentions mentioned mention discusses discuss describes describe states stated provides provide
    information details detail according notes note reports reported explains highlights
    """.split()
)
LEAD_SLACK = 0.4  # of a claim's lead words beyond the first two, this share may be missing from the evidence


class _Words:
    """A text normalised once, its word spans, and the forms of its lead words in the order they first appear:
    a claim with hundreds of numbers is compared with hundreds of sentences, and normalising it again, and
    walking every word before each number, for each pair was cubic (a bullet-list answer over a 20 KB
    catalogue took 49 s, issue 36 item 16)."""

    def __init__(self, text: str):
        self.normal = normalized(text)
        self.spans = word_spans(self.normal.text)
        self.ends = [e for _, e, _ in self.spans]
        self.begins = [a for a, _, _ in self.spans]
        self.first: dict[str, int] = {}  # word -> where its first occurrence ends
        self.lead_ends: list[int] = []  # of the lead words (content words and numbers), at their first occurrence
        self.lead_forms: list[frozenset[str]] = []
        for _, e, w in self.spans:
            if w not in self.first:
                self.first[w] = e
                if _leads(w):
                    self.lead_ends.append(e)
                    self.lead_forms.append(unit_forms(w))


def _leads(w: str) -> bool:
    return (is_context_word(w) or w[0].isdigit()) and w not in META_WORDS


@text_memo()  # claims and sources (_slot_words)
def _words_of(text: str) -> _Words:
    return _Words(text)


def lead_words(text: str, start: int) -> list[frozenset[str]]:
    """The content words and numbers of ``text`` (normalised) before offset ``start`` (words of discourse
    aside), as forms: what a number or a name there is about ("רשת זכתה באפיק 13" before 7.77). The words of
    ``norm[:start]`` in the order they first appear: the whole words before ``start``, then the part before
    it of a word it cuts."""
    view = _words_of(text)
    lead = view.lead_forms[: bisect_right(view.lead_ends, start)]
    k = bisect_right(view.ends, start)
    if k < len(view.spans) and view.spans[k][0] < start:  # a word cut by start: its part before start
        seen = set()
        for w in words(view.normal.text[view.spans[k][0]:start]):
            if view.first.get(w, start + 1) > start and w not in seen and _leads(w):
                seen.add(w)
                lead.append(unit_forms(w))
    return lead


@text_memo()
def _text_forms(text: str) -> frozenset[str]:
    return frozenset(f for w in words(normalized(text).text) for f in unit_forms(w))


def holds_lead(lead: list[frozenset[str]], text: str, loosely: bool = False) -> bool:
    """``text`` holds the claim's ``lead``: all of it when it is three words or fewer (the subject and its
    verb: "רשת זכתה באפיק" is not "קשת זכתה באפיק"), and all but :data:`LEAD_SLACK` of the words beyond the
    first two when it is longer; ``loosely``: one word of it (candidates reword what they support: "עלות
    הפרויקט מוערכת" for "השקעה בפרויקט נאמדת"). An empty lead is held by any text."""
    if not lead:
        return True
    theirs = _text_forms(text)
    missing = sum(not (forms & theirs) for forms in lead)
    if loosely:
        return missing < len(lead)
    return missing <= max(0, int(LEAD_SLACK * (len(lead) - 2)))


def names_held(claim: str, text: str) -> bool:
    """``text`` names at least one of the claim's names (in a fuller or shorter form), or the claim names
    none: a text that names none of them is about another entity ("Sorenstam received a sponsor's
    exemption into the 2003 ..." is not about Lincicome's)."""
    names = _names_in(claim)
    if not names:
        return True
    found = names_in(text)
    return any(name_present(n, text, found) for n in names)


_names_in = text_memo()(names_in)  # a claim's names, found once (it is compared with every sentence like it)


def _is_unit(forms: frozenset[str], unit: str | None) -> bool:
    """The word is the number's unit: compared as the unit already, no slot word ("2 horas", "68 horas")."""
    return unit is not None and (unit in forms or f"unit:{unit}" in forms)


@text_memo()  # keyed by a source: bounded by its characters, never by a count of 100 KB texts
def _slot_words(text: str, start: int, end: int) -> tuple[frozenset[str], ...]:
    """The nearest content word written in lower case on each side of [start, end) of ``text``'s
    normalised form (names, months, percent words and numbers skipped), as forms."""
    view = _words_of(text)
    nt, spans = view.normal, view.spans

    def plain(at: int, w: str) -> bool:
        return is_context_word(w) and not is_month(w) and w not in PERCENT_WORDS and not capitalised_at(text, int(nt.starts[at]))

    k = bisect_right(view.ends, start)  # the words ending at or before start: the first k (ends ascend)
    before = next((spans[x][2] for x in range(k - 1, -1, -1) if plain(spans[x][0], spans[x][2])), None)  # no copy of the words before
    j = bisect_left(view.begins, end)  # the words starting at or after end
    after = next((spans[x][2] for x in range(j, len(spans)) if plain(spans[x][0], spans[x][2])), None)
    return tuple(unit_forms(w) for w in (before, after) if w)
