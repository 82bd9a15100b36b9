"""Evidence: one claim read against its offered candidates and its record, built once and carried to every
reader (DESIGN, "Alignment first": the checks' verdict inputs, triage, the no-model judge).

An :class:`Evidence` holds the claim's :class:`judge.stages.support.SupportFeatures` (its alignment with the
ONE span it is judged against, the checks' counts, and what the whole source says: words it never writes, a
correction, a short answer's passage) and the fitted judge's named numbers (:meth:`Evidence.features`, in
:data:`FEATURES` order: the alignment's, then what the alignment cannot see). ``judge.judges.base.evidence_of``
builds it once per claim and input (question, sources, language) and keeps it on the claim, so triage and the
no-model judge read the same value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from judge.models import Candidate
from judge.results import ClaimChecks
from judge.stages.alignment import FEATURES as ALIGNMENT
from judge.stages.support import SupportFeatures, support_features

# Counts read as min(count, cap) / cap: a long claim is no more wrong per word past a few.
_CAPS = {"unaligned": 8, "longest_unaligned_run": 5, "tail_unaligned_run": 5, "names": 5, "names_unaligned": 5, "numbers": 5,
         "numbers_unaligned": 5, "displaced": 3, "slots_name": 2, "slots_number": 2, "slots_date": 2, "slots_percent": 2,
         "span_sentences": 3, "connectives_unaligned": 2}
OWN = ("offered_coverage", "conflicts", "numbers_mismatched", "heading", "absent_share", "absent_key", "absent_run",
       "short", "short_question_coverage", "short_answer_missing", "span_score", "no_candidate", "hebrew")
# The order of the weights file; a feature added here (or to the alignment's) means refitting the weights.
FEATURES: tuple[str, ...] = (*(f"align_{n}" for n in ALIGNMENT), *OWN)


def _hebrew(text: str) -> bool:
    """Most of the claim's letters are Hebrew (its words take prefixes; the weights may read it otherwise)."""
    letters = [ch for ch in text if ch.isalpha()]
    return bool(letters) and sum("\u0590" <= ch <= "\u05ff" for ch in letters) * 2 > len(letters)


def vector(f: SupportFeatures, span_score: float | None, hebrew: bool = False) -> dict[str, float]:
    """The named features of one claim: :meth:`SupportFeatures.features` (the alignment's numbers and those
    read beyond the judged span), counts bounded, and what it leaves out (a number stated otherwise, the
    span's score, the script)."""
    raw = f.features()
    out = {}
    for n in ALIGNMENT:
        v = raw[n]
        out[f"align_{n}"] = math.log1p(v) / math.log(40) if n == "words" else min(v, _CAPS[n]) / _CAPS[n] if n in _CAPS else v
    out |= {
        "offered_coverage": raw["offered_coverage"],
        "conflicts": float(raw["conflicts"] > 0),
        "numbers_mismatched": float(f.mismatches > 0),
        "heading": raw["heading"],
        "absent_share": raw["absent_share"],
        "absent_key": float(raw["absent_key"] > 0),
        "absent_run": min(raw["absent_run"], 5) / 5,
        "short": raw["short"],
        "short_question_coverage": raw["question_coverage"] if f.short else 0.0,
        "short_answer_missing": float(f.short and not f.answer_in_source),
        "span_score": span_score or 0.0,
        "no_candidate": float(span_score is None),
        "hebrew": float(hebrew),
    }
    return out


@dataclass(frozen=True)
class Evidence:
    """One claim's reading against its candidates and record (see the module docstring)."""

    support: SupportFeatures
    vector: dict[str, float]

    @property
    def span(self) -> int:
        """The index of the candidate the claim is judged against."""
        return self.support.span

    def features(self) -> dict[str, float]:
        """The fitted judge's numbers, by name (:data:`FEATURES`)."""
        return self.vector


def read_evidence(
    text: str, candidates: Sequence[Candidate], checks: ClaimChecks, question: str | None, sources: tuple[str, ...],
    language: str | None = None,
) -> Evidence:
    """The claim's Evidence: its support features read with the record's question and sources, and their vector."""
    f = support_features(text, list(candidates), checks, question, sources, language)
    return Evidence(f, vector(f, candidates[f.span].score if candidates else None, _hebrew(text)))


def claim_features(
    text: str, candidates: Sequence[Candidate], checks: ClaimChecks, question: str | None, sources: tuple[str, ...],
    language: str | None = None,
) -> tuple[dict[str, float], SupportFeatures]:
    """(the feature vector by name, the support features) of one claim: what the fitting code reads."""
    e = read_evidence(text, candidates, checks, question, sources, language)
    return e.vector, e.support
