"""Deterministic checks of a claim against its candidate spans and its whole source.

Numbers, dates and percentages of the claim that appear in no candidate (:mod:`judge.stages.numbers`); of
those, the ones a candidate states *differently in the same slot of the same entity*
(:func:`judge.stages.slots.aligned_mismatches`); names of the claim no candidate holds in any fuller or
shorter form (:mod:`judge.stages.names`); and the conflicts the whole source holds
(:mod:`judge.stages.conflicts`).
"""

from __future__ import annotations

from judge.models import Candidate
from judge.results import ClaimChecks
from judge.stages.conflicts import find_conflicts
from judge.stages.names import name_present, names_in
from judge.stages.numbers import numbers_in
from judge.stages.slots import aligned_mismatches, present


def check_claim(claim: str, candidates: list[Candidate], sources: dict[str | None, str] | None = None) -> ClaimChecks:
    """The checks of ``claim`` against its candidates; with ``sources`` (doc_id -> text), also the conflicts
    the whole source holds (see :mod:`judge.stages.conflicts`), the best candidate's own sentences aside."""
    all_numbers = {n for c in candidates for n in numbers_in(c.text)}
    numbers = numbers_in(claim)
    missing = [n for n in numbers if not present(n, all_numbers)]
    parts = [p.excerpt for c in candidates for p in c.parts]
    mismatched = aligned_mismatches(claim, parts, context=" \n".join(parts)) if numbers else []
    names = names_in(claim)
    texts = [(c.text, names_in(c.text)) for c in candidates] if names else []
    names_missing = [n for n in names if not any(name_present(n, t, found) for t, found in texts)]
    conflicts = []
    if sources:
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
