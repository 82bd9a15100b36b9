"""The deterministic judge: a label from the best candidate's score and the checks, with no model. It sits
in a panel like any model judge (config: ``judges: [deterministic]``)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from judge.judges.base import ClaimToJudge, JudgeContext, spans_of
from judge.results import JudgeVerdict
from judge.verdicts import DETERMINISTIC


class DeterministicThresholds(BaseModel):
    supported_min_score: float = Field(0.8, ge=0, le=1)
    partial_min_score: float = Field(0.5, ge=0, le=1)


def deterministic_verdict(claim: ClaimToJudge, thresholds: DeterministicThresholds, name: str = DETERMINISTIC) -> JudgeVerdict:
    """Unsupported below the partial threshold; contradicted when a number differs from the best
    candidate's; supported at or above the supported threshold with every check passed; else partial."""
    best = claim.candidates[0] if claim.candidates else None
    score = best.score if best else 0.0
    checks = claim.checks
    if best is None or score < thresholds.partial_min_score:
        label, why = "unsupported", f"best candidate score {score:.2f} < {thresholds.partial_min_score}"
    elif checks.numbers_mismatched:
        m = checks.numbers_mismatched[0]
        label, why = "contradicted", f"the claim says {m.claim} where the best candidate says {m.candidate}"
    elif score >= thresholds.supported_min_score and checks.passed:
        label, why = "supported", f"best candidate score {score:.2f} >= {thresholds.supported_min_score}, checks passed"
    else:
        missing = checks.numbers_missing + checks.names_missing
        why = f"best candidate score {score:.2f}" + (f"; not in the evidence: {', '.join(missing)}" if missing else "")
        label = "partially_supported"
    evidence = [best] if best is not None and label != "unsupported" else []
    return JudgeVerdict(
        judge=name,
        model=DETERMINISTIC,
        family=DETERMINISTIC,
        label=label,
        evidence_ids=[c.id for c in evidence],
        evidence=[s for c in evidence for s in spans_of(c)],
        rationale=why,
        how=DETERMINISTIC,
    )


class DeterministicJudge:
    def __init__(self, thresholds: DeterministicThresholds, name: str = DETERMINISTIC):
        self.name = name
        self.thresholds = thresholds

    async def judge(self, claims: list[ClaimToJudge], context: JudgeContext) -> dict[str, JudgeVerdict]:
        return {c.cid: deterministic_verdict(c, self.thresholds, self.name) for c in claims}
