"""Deterministic checks of a claim against the one span it is judged against, and its whole source.

Every check reads the claim's alignment with that span (:func:`judge.stages.alignment.judged`: the
candidate whose partners hold the most of the claim): numbers of the claim with no equal value in it,
numbers it states otherwise in the claim's slot, names it does not hold, or holds only where another name
fills the claim's slot. No other candidate rescues a number or a name. The conflicts are the whole
source's (:mod:`judge.stages.conflicts`: a correction, or a near-duplicate sentence that says it otherwise).
"""

from __future__ import annotations

from judge.models import Candidate
from judge.results import ClaimChecks, NumberMismatch
from judge.stages.alignment import judged
from judge.stages.conflicts import find_conflicts
from judge.stages.names import name_present, names_in
from judge.stages.numbers import numbers_in

NUMBER_SLOTS = ("number", "date", "percent")


def check_claim(claim: str, candidates: list[Candidate], sources: dict[str | None, str] | None = None) -> ClaimChecks:
    """The checks of ``claim`` against the span it is judged against; with ``sources`` (doc_id -> text),
    also the conflicts the whole source holds, that span's own sentences aside."""
    at, a = judged(claim, [c.text for c in candidates])
    numbers = numbers_in(claim)
    names = list(names_in(claim))
    missing, mismatched, names_missing = numbers, [], names
    if a is not None:
        held = {a.claim[i].number for i, _ in a.pairs if a.claim[i].number is not None}
        missing = [n for n in numbers if n not in held and n.rstrip("%") not in held and f"{n}%" not in held]
        mismatched = [NumberMismatch(claim=s.claim, candidate=s.span) for s in a.slots if s.kind in NUMBER_SLOTS]
        other = {s.claim for s in a.slots if s.kind == "name"}
        text = candidates[at].text
        found = names_in(text) if names else []
        names_missing = [n for n in names if not name_present(n, text, found) or _in(n, other)]
    conflicts = []
    if sources:
        own = [(p.doc_id, p.start_char, p.end_char) for p in candidates[at].parts] if candidates else []
        conflicts = find_conflicts(claim, sources, own)
    return ClaimChecks(
        numbers=numbers,
        numbers_missing=missing,
        numbers_mismatched=mismatched,
        names=names,
        names_missing=names_missing,
        conflicts=conflicts,
    )


def _in(name: str, slotted: set[str]) -> bool:
    """``name`` is one whose slot the span fills with another name (compared as the alignment writes it)."""
    low = name.lower()
    return any(s in low or low in s for s in slotted)
