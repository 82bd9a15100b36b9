"""Triage, the pre-judge: a claim found verbatim (after normalisation) in a source is supported, and no
judge of the panel is asked about it. It settles a claim only where its precision is ~1 (DESIGN): not when
the source corrects the sentence or states it elsewhere with another figure or name (the checks'
conflicts), and not for fragments and lead-ins (``judge.stages.support.free_supported``)."""

from __future__ import annotations

from judge.judges.base import ClaimToJudge, spans_of
from judge.results import JudgeVerdict
from judge.stages.support import VERBATIM_METHODS, free_supported, support_features
from judge.verdicts import NO_MODEL, SUPPORTED, TRIAGE

__all__ = ["VERBATIM_METHODS", "settle", "triage"]


def triage(claim: ClaimToJudge) -> JudgeVerdict | None:
    """Supported with no model call when the claim is found verbatim and nothing in the source refutes it."""
    if not free_supported(support_features(claim.text, claim.candidates, claim.checks)):
        return None
    best = claim.candidates[0]
    return JudgeVerdict(
        judge=TRIAGE,
        model=NO_MODEL,
        family=NO_MODEL,
        label=SUPPORTED,
        evidence_ids=[best.id],
        evidence=spans_of(best),
        rationale=f"the claim appears verbatim in the source ({best.method} match) and the source holds no correction or conflicting duplicate of it",
        how=TRIAGE,
    )


def settle(claims: list[ClaimToJudge]) -> dict[str, JudgeVerdict]:
    """The claims triage settles, by claim id."""
    return {c.cid: v for c in claims if (v := triage(c)) is not None}
