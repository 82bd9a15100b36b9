"""The learned no-model judge's features: the one place a claim and its evidence become numbers.

The fitting code (``bench/fit_no_model_judge.py``) and the judge at run time both call :func:`claim_features`,
so the weights in ``judge/data/no_model_judge.json`` always meet the features they were fitted on. They are
the claim's :class:`judge.stages.alignment.Alignment` with the one span it is judged against
(``Alignment.features()``: aligned and unaligned words, names and numbers, differing slots, negation in the
aligned clause), and what the alignment cannot see: the checks' corrections in the source, how much of the
claim any offered candidate holds, what the whole source never writes, a short answer read with its
question, the search score of the span, and the script.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

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


def claim_features(
    text: str, candidates: Sequence[Candidate], checks: ClaimChecks, question: str | None, sources: tuple[str, ...],
    language: str | None = None,
) -> tuple[dict[str, float], SupportFeatures]:
    """The claim's feature vector by name, and the support features it was read from (the judge's reasons)."""
    f = support_features(text, list(candidates), checks, question, sources, language)
    return vector(f, candidates[f.span].score if candidates else None, _hebrew(text)), f
