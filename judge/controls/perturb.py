"""Contradicted controls: a claim aligned to its source with one fact that source states changed: a name,
number or date taken from elsewhere in the same source put in its slot (the recombination errors that fool
judges on summaries), a number, year or month swapped for another of the same kind found in the data, a name
for one of the same shape the record never mentions, or a negation inserted or removed."""

from __future__ import annotations

import random
import re

from judge.controls.data import ControlData
from judge.controls.lexicon import NEGATION, month_pattern
from judge.controls.reword import match_case
from judge.controls.shapes import magnitude, name_shape, number_matches, number_shape
from judge.stages.names import names_in
from judge.stages.numbers import canon_number
from judge.text.language import CASE_INSENSITIVE


def recombine(text: str, span: str, record_id: str, data: ControlData, rng: random.Random) -> tuple[str, str] | None:
    """A number, name or month of the claim that its aligned sentence ``span`` states, replaced by another of
    the same shape that the record's sources state elsewhere (and the sentence does not): the source's own
    words, put in the wrong slot."""
    sources = data.records[record_id].sources
    options: list[tuple[int, int, str, str]] = []  # (start, end, old, new)
    in_span = {canon_number(m.group()) for m in number_matches(span)}
    elsewhere = [m.group() for src in sources for m in number_matches(src.text)]
    present = {canon_number(m.group()) for m in number_matches(text)}
    for m in number_matches(text):
        if canon_number(m.group()) not in in_span:
            continue
        shape = number_shape(m.group())
        pool = sorted({n for n in elsewhere if number_shape(n) == shape and canon_number(n) not in in_span | present})
        options += [(m.start(), m.end(), m.group(), n) for n in pool]
    names = [n for s in data.sentences(record_id) for n in names_in(s.text)]
    for old in names_in(text):
        shape = name_shape(old)
        if shape in (None, "acronym") or old not in span or text.find(old) <= 0:
            continue
        old_words = set(old.split())
        pool = sorted({n for n in names if name_shape(n) == shape and n not in span and n not in text and not old_words & set(n.split())})
        at = text.find(old)
        options += [(at, at + len(old), old, n) for n in pool]
    pattern = month_pattern(data.language(record_id))
    if pattern is not None:
        months = {m.group(1) for src in sources for m in pattern.finditer(src.text)}
        for m in pattern.finditer(text):
            if m.group(1) not in span:
                continue
            pool = sorted(x for x in months if x.lower() not in span.lower() and x.lower() != m.group(1).lower())
            options += [(m.start(1), m.end(1), m.group(1), match_case(x, m.group(1))) for x in pool]
    if not options:
        return None
    start, end, old, new = rng.choice(options)
    return text[:start] + new + text[end:], f"{old} -> {new} (stated elsewhere in the source)"


def swap_number(text: str, record_id: str, data: ControlData, rng: random.Random) -> tuple[str, str] | None:
    """One number replaced by a different one of the same kind (percent, year, time, number) from the data,
    of a similar size where the data has one (same record first)."""
    found = number_matches(text)
    if not found:
        return None
    present = {canon_number(m.group()).rstrip("%") for m in found}
    m = rng.choice(found)
    canon = canon_number(m.group())
    own = {canon_number(n.group()) for src in data.records[record_id].sources for n in number_matches(src.text)}
    pool = [n for n in data.numbers.get(number_shape(m.group()), []) if canon_number(n).rstrip("%") not in present]
    if not pool:
        return None
    size = magnitude(canon)
    pool.sort(key=lambda n: (abs(magnitude(n) - size) > 1, canon_number(n) not in own, abs(magnitude(n) - size), n))
    new = rng.choice(pool[:3]).rstrip("%").replace(" ", "")
    suffix = m.group()[len(m.group().rstrip("% ")) :]  # keep the original's "%" or " %"
    surface = new + suffix
    return text[: m.start()] + surface + text[m.end() :], f"{m.group()} -> {surface}"


def swap_month(text: str, language: str, data: ControlData, rng: random.Random) -> tuple[str, str] | None:
    pattern = month_pattern(language)
    found = list(pattern.finditer(text)) if pattern else []
    if not found:
        return None
    m = rng.choice(found)
    old = m.group(1)
    in_text = {x.group(1).lower() for x in found}
    pool = [x for x in data.months.get(language, []) if x.lower() not in in_text]
    if not pool:
        return None
    new = match_case(rng.choice(pool), old)
    return text[: m.start(1)] + new + text[m.end(1) :], f"{old} -> {new}"


def swap_name(text: str, record_id: str, data: ControlData, rng: random.Random) -> tuple[str, str] | None:
    """A name replaced by one of the same shape that appears in another record and nowhere in this one."""
    own_text = " ".join(s.text for s in data.records[record_id].sources)
    names = [n for n in names_in(text) if name_shape(n) not in (None, "acronym") and text.find(n) > 0]  # an acronym may be a unit
    if not names:
        return None
    old = rng.choice(names)
    pool = [n for n in data.names if name_shape(n) == name_shape(old) and n not in own_text and old not in n]
    if not pool:
        return None
    new = rng.choice(pool)
    at = text.find(old)
    return text[:at] + new + text[at + len(old) :], f"{old} -> {new}"


def flip_negation(text: str, language: str) -> tuple[str, str] | None:
    """The first negation rule of the language that applies: a negation removed, else one inserted."""
    rules = NEGATION.get(language, {})
    for direction in ("remove", "insert"):
        for pattern, replacement in rules.get(direction, ()):
            flags = re.IGNORECASE if language in CASE_INSENSITIVE else 0
            out, n = re.subn(pattern, replacement, text, count=1, flags=flags)
            if n and out != text:
                return out, f"negation {'removed' if direction == 'remove' else 'inserted'}"
    return None
