"""The alignment's reading of a number in its slot (:mod:`judge.stages.alignment` is the one matcher; this is its
part that compares a claim's numbers with a text's, also read by the Evidence's conflicts): a number the text
states otherwise in the same slot of the same entity."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from judge.results import NumberMismatch
from judge.stages.names import name_present, names_in
from judge.stages.numbers import MULTIPLIERS, PERCENT_WORDS, capitalised_at, is_context_word, is_month, mentions, unit_forms
from judge.text import words
from judge.text.memo import SPAN_CACHE_CHARS, text_memo
from judge.text.normalize import normalized
from judge.text.tokens import STOPWORDS, word_spans

SLOT_MIN_WORDS = 3  # content words (numbers aside) a claim needs to state a number's slot by itself
LEAD_SLACK = 0.4  # of a claim's lead words beyond the first two, this share may be missing from the evidence
# Words of discourse, not of what a number is about: "Additionally, the passage states that ... 2019".
META_WORDS = frozenset(
    """
    additionally also first second third finally moreover furthermore however passage text article summary
    document mentions mentioned mention discusses discuss describes describe states stated provides provide
    information details detail according notes note reports reported explains highlights
    """.split()
)


def present(value: str, values: set[str]) -> bool:
    """``value`` is among ``values``, with or without its percent sign."""
    return value in values or value.rstrip("%") in values or f"{value.rstrip('%')}%" in values


@text_memo(max_chars=SPAN_CACHE_CHARS)
def _slot_claim_words(claim: str) -> tuple[frozenset[str], ...]:
    """The claim's content words (numbers, months and percent words aside), each as its forms."""
    found = dict.fromkeys(w for w in words(normalized(claim).text) if is_context_word(w) and not is_month(w) and w not in PERCENT_WORDS)
    return tuple(unit_forms(w) for w in found)


def states_a_slot(claim: str) -> bool:
    """``claim`` says by itself what its numbers measure: three content words besides them, or two that a
    number does not open (a short answer, "13 חברי כנסת", has its slot in its question)."""
    n = len(_slot_claim_words(claim))
    return n >= SLOT_MIN_WORDS or (n == 2 and not next(iter(words(normalized(claim).text)), "")[:1].isdigit())


def aligned_mismatches(
    claim: str, evidence_texts: list[str], min_shared: int = 2, margin_if_present: int = 1, context: str | None = None
) -> list[NumberMismatch]:
    """Numbers of the claim that the evidence states otherwise in the same slot of the same entity.

    A claim number (one that states its slot, outside a list or a range) meets an evidence number of the same
    kind, month and unit with one of its slot words within six tokens (:func:`_slot_words`), that counts the
    same way (:func:`same_frame`), in a text that holds the claim's lead (:func:`holds_lead`; ``context``: the
    candidates together, where a reworded lead is looked for loosely) and one of its names; of those, the one
    whose text holds the most of the claim's words. Another value there is a mismatch when its text holds
    ``min_shared`` of them, and ``margin_if_present`` more than any mention of the claim's own value in that
    slot; a text that states both values is the claim's benefit of the doubt."""
    claim_mentions = mentions(claim)
    if not claim_mentions or not states_a_slot(claim):
        return []
    claim_words = _slot_claim_words(claim)
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
                if in_slot:  # the claim's own value in its slot (in another slot it is another fact)
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


def _after(text: str, m) -> str:
    """The word right after a number, its unit, a multiplier, a percent word and other numbers skipped."""
    return next((w for s, _, w in _words_of(text).spans if s >= m.end and not w[0].isdigit()
                 and not _is_unit(unit_forms(w), m.unit) and w not in MULTIPLIERS and w not in PERCENT_WORDS), "")


def same_frame(claim: str, c, text: str, e) -> bool:
    """The small words right after the two numbers (their unit aside) are not two different ones ("with 28
    minutes to go" and "62 minutes into the match" are the same moment, counted from either end)."""
    a, b = _after(claim, c), _after(text, e)
    return not (a in STOPWORDS and b in STOPWORDS and a != b)


class _Words:
    """A text normalised once, its word spans, and the forms of its lead words in the order they first appear
    (once per text: per pair of numbers it was cubic, issue 36 item 16)."""

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
    """The content words and numbers of ``text`` before offset ``start`` of its normal form (words of discourse
    aside), in the order they first appear, as forms: what a number or a name there is about."""
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
    """``text`` holds all of a lead of three words or fewer ("רשת זכתה באפיק" is not "קשת זכתה באפיק"), all
    but :data:`LEAD_SLACK` of a longer one's words beyond the first two; ``loosely``: one word of it."""
    if not lead:
        return True
    theirs = _text_forms(text)
    missing = sum(not (forms & theirs) for forms in lead)
    return missing < len(lead) if loosely else missing <= max(0, int(LEAD_SLACK * (len(lead) - 2)))


def names_held(claim: str, text: str) -> bool:
    """``text`` names one of the claim's names in some form, or the claim names none (a text naming none of
    them is about another entity)."""
    names = names_in(claim)
    found = names_in(text) if names else []
    return not names or any(name_present(n, text, found) for n in names)


def _is_unit(forms: frozenset[str], unit: str | None) -> bool:
    """The word is the number's unit: compared as the unit already, no slot word ("2 horas", "68 horas")."""
    return unit is not None and (unit in forms or f"unit:{unit}" in forms)


@text_memo()  # keyed by a source: bounded by its characters, never by a count of 100 KB texts
def _slot_words(text: str, start: int, end: int) -> tuple[frozenset[str], ...]:
    """The nearest content word in lower case on each side of [start, end) of ``text``'s normal form (names,
    months, percent words and numbers skipped), as forms."""
    view = _words_of(text)
    nt, spans = view.normal, view.spans

    def plain(at: int, w: str) -> bool:
        return is_context_word(w) and not is_month(w) and w not in PERCENT_WORDS and not capitalised_at(text, int(nt.starts[at]))

    k = bisect_right(view.ends, start)  # the words ending at or before start
    before = next((spans[x][2] for x in range(k - 1, -1, -1) if plain(spans[x][0], spans[x][2])), None)
    j = bisect_left(view.begins, end)  # the words starting at or after end
    after = next((spans[x][2] for x in range(j, len(spans)) if plain(spans[x][0], spans[x][2])), None)
    return tuple(unit_forms(w) for w in (before, after) if w)
