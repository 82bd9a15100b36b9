"""Triage, the pre-judge: a claim found verbatim (after normalisation) in a source is supported, and no
judge of the panel is asked about it. It settles a claim only where its precision is ~1 (DESIGN)."""

from __future__ import annotations

from judge.judges.base import ClaimToJudge, spans_of
from judge.results import JudgeVerdict
from judge.verdicts import NO_MODEL, SUPPORTED, TRIAGE

VERBATIM_METHODS = ("exact", "normalized", "folded")


def triage(claim: ClaimToJudge) -> JudgeVerdict | None:
    """Supported with no model call when the whole claim is found verbatim (after normalisation)."""
    if claim.candidates and claim.candidates[0].method in VERBATIM_METHODS:
        best = claim.candidates[0]
        return JudgeVerdict(
            judge=TRIAGE,
            model=NO_MODEL,
            family=NO_MODEL,
            label=SUPPORTED,
            evidence_ids=[best.id],
            evidence=spans_of(best),
            rationale=f"the claim appears verbatim in the source ({best.method} match)",
            how=TRIAGE,
        )
    return None


def settle(claims: list[ClaimToJudge]) -> dict[str, JudgeVerdict]:
    """The claims triage settles, by claim id."""
    return {c.cid: v for c in claims if (v := triage(c)) is not None}
