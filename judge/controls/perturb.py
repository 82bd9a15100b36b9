"""Contradicted controls: a verified claim with one fact the source states changed: a number, year or month
swapped for another of the same kind found in the data, a name for one of the same shape the record never
mentions, or a negation inserted or removed."""

from __future__ import annotations

import random
import re

from judge.controls.data import ControlData
from judge.controls.lexicon import NEGATION, month_pattern
from judge.controls.reword import match_case
from judge.controls.shapes import magnitude, name_shape, number_matches, number_shape
from judge.stages.names import names_in
from judge.stages.numbers import canon_number


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
            flags = re.IGNORECASE if language in ("English", "Portuguese", "Spanish") else 0
            out, n = re.subn(pattern, replacement, text, count=1, flags=flags)
            if n and out != text:
                return out, f"negation {'removed' if direction == 'remove' else 'inserted'}"
    return None
