"""The learned no-model judge's features: the one place a claim and its evidence become numbers.

The fitting code (``bench/fit_no_model_judge.py``) and the judge at run time both call :func:`claim_features`,
so the weights in ``judge/data/no_model_judge.json`` always meet the features they were fitted on. Today it
reads :func:`judge.stages.support.support_features` (coverage of the claim's content words by its offered
evidence, runs of uncovered words, the checks' numbers, names and conflicts, what the whole source never
writes, negation, a short answer read with its question) and the best candidate's search score.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from judge.models import Candidate
from judge.results import ClaimChecks
from judge.stages.support import SupportFeatures, support_features

# The order of the weights file; a name is added here and to :func:`vector`, and the weights refitted.
FEATURES: tuple[str, ...] = (
    "verbatim", "coverage", "max_run", "tail_run", "uncovered", "numbers_missing", "numbers_mismatched",
    "names_missing", "conflicts", "added_connective", "log_words", "heading", "absent_share", "absent_key",
    "absent_run", "added_negation", "dropped_negation", "short", "short_question_coverage",
    "short_answer_missing", "best_score", "no_candidate", "hebrew",
)


def _hebrew(text: str) -> bool:
    """Most of the claim's letters are Hebrew (its words take prefixes; the weights may read it otherwise)."""
    letters = [ch for ch in text if ch.isalpha()]
    return bool(letters) and sum("\u0590" <= ch <= "\u05ff" for ch in letters) * 2 > len(letters)


def vector(f: SupportFeatures, best_score: float | None, hebrew: bool = False) -> dict[str, float]:
    """The named features of one claim (bounded counts: a long claim is no more wrong per word)."""
    return {
        "verbatim": float(f.verbatim),
        "coverage": f.coverage,
        "max_run": min(f.max_run, 5) / 5,
        "tail_run": min(f.tail_run, 5) / 5,
        "uncovered": min(len(f.uncovered), 8) / 8,
        "numbers_missing": float(f.numbers_missing > 0),
        "numbers_mismatched": float(f.mismatches > 0),
        "names_missing": float(f.names_missing > 0),
        "conflicts": float(f.conflicts > 0),
        "added_connective": float(bool(f.added_connectives)),
        "log_words": math.log1p(f.words) / math.log(40),
        "heading": float(f.heading),
        "absent_share": f.absent_share,
        "absent_key": float(bool(f.absent_key)),
        "absent_run": min(f.absent_run, 5) / 5,
        "added_negation": float(f.added_negation),
        "dropped_negation": float(f.dropped_negation),
        "short": float(f.short),
        "short_question_coverage": f.question_coverage if f.short else 0.0,
        "short_answer_missing": float(f.short and not f.answer_in_source),
        "best_score": best_score or 0.0,
        "no_candidate": float(best_score is None),
        "hebrew": float(hebrew),
    }


def claim_features(
    text: str, candidates: Sequence[Candidate], checks: ClaimChecks, question: str | None, sources: tuple[str, ...]
) -> tuple[dict[str, float], SupportFeatures]:
    """The claim's feature vector by name, and the support features it was read from (the judge's reasons)."""
    f = support_features(text, list(candidates), checks, question, sources)
    return vector(f, candidates[0].score if candidates else None, _hebrew(text)), f
