"""Deterministic checks of a claim against its candidate spans: numbers and names that the evidence lacks.

Numbers, dates and percentages in the claim that appear in no candidate, or that differ from the number of
the same kind (percentage, year, other) in the best candidate; names (capitalised Latin terms, quoted
terms, Hebrew acronyms in gershayim) that appear in no candidate. Compared on normalised text, so
``12%``/``12 %``, ``1,450``/``1450`` and ``ש"ח``/``ש״ח`` agree.
"""

from __future__ import annotations

import re

from judge.models import Candidate
from judge.results import ClaimChecks, NumberMismatch
from judge.text import normalize

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:/]\d+)*(?:\s?%)?")
_LATIN_NAME = re.compile(r"\b[A-Z][\w'&-]*(?:\s+(?:of|de|da|do|von|van|the|al|bin)?\s*[A-Z][\w'&-]*)*")
_QUOTED = re.compile(r"[\"“„«]([^\"“”„«»\n]{2,60})[\"”“»]")
_GERSHAYIM = re.compile(r"[\u05d0-\u05ea]+[\"\u05f4][\u05d0-\u05ea]+")
_CAPITALISED_STOPWORDS = frozenset(
    "The A An In On At By For From With And But Or Of To It Its This That These Those He She They We I "
    "His Her Their Our As If When While After Before According Also However Then There Here "
    "O A Os As Um Uma Em No Na De Da Do Para Com Por Segundo Ele Ela".split()
)


def _canon_number(text: str) -> str:
    text = text.replace(" ", "")
    return re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)


def _kind(number: str) -> str:
    if number.endswith("%"):
        return "percent"
    if re.fullmatch(r"(1[0-9]|20|21)\d\d", number):
        return "year"
    if ":" in number:
        return "time"
    return "number"


def numbers_in(text: str) -> list[str]:
    return list(dict.fromkeys(_canon_number(m.group()) for m in _NUMBER.finditer(normalize(text).text)))


def names_in(text: str) -> list[str]:
    found: list[str] = []
    for m in _LATIN_NAME.finditer(text):
        words = [w for w in m.group().split() if w not in _CAPITALISED_STOPWORDS]
        name = " ".join(words).strip()
        if len(name) > 1 and name[0].isupper():
            found.append(name)
    found.extend(m.group(1).strip() for m in _QUOTED.finditer(text))
    found.extend(m.group() for m in _GERSHAYIM.finditer(text))
    return list(dict.fromkeys(found))


def check_claim(claim: str, candidates: list[Candidate]) -> ClaimChecks:
    texts = [normalize(c.text).text for c in candidates]
    candidate_numbers = [set(numbers_in(c.text)) for c in candidates]
    all_numbers = set().union(*candidate_numbers) if candidate_numbers else set()
    numbers = numbers_in(claim)
    missing = [n for n in numbers if n not in all_numbers and n.rstrip("%") not in all_numbers]
    mismatched: list[NumberMismatch] = []
    if candidates:
        best = candidate_numbers[0]
        for n in numbers:
            if n in best or n.rstrip("%") in best:
                continue
            others = sorted(m for m in best if _kind(m) == _kind(n) and m not in numbers)
            if others:
                mismatched.append(NumberMismatch(claim=n, candidate=others[0]))
    names = names_in(claim)
    names_missing = [n for n in names if not any(normalize(n).text in t for t in texts)]
    return ClaimChecks(
        numbers=numbers, numbers_missing=missing, numbers_mismatched=mismatched, names=names, names_missing=names_missing
    )
