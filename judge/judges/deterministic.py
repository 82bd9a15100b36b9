"""The deterministic judge: a label from the claim's evidence features and the checks, with no model. It sits
in a panel like any model judge (config: ``judges: [deterministic]``).

The rule and its features are in :mod:`judge.stages.support`; its thresholds are calibrated per language
(``judge/data/deterministic.yaml``, written by ``bench/calibrate_deterministic.py``). A config may override
them: ``adjudicate.deterministic.profiles: {he: {...}, default: {...}}``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from judge.judges.base import ClaimToJudge, JudgeContext, spans_of
from judge.results import JudgeVerdict
from judge.stages.support import RuleParams, decide, load_params, support_features
from judge.verdicts import CONTRADICTED, DETERMINISTIC, UNSUPPORTED


class DeterministicThresholds(BaseModel):
    """``adjudicate.deterministic``: profiles (by language, ``default`` for the rest) that replace the
    calibrated ones; a profile names only the thresholds it changes."""

    model_config = ConfigDict(extra="forbid")

    profiles: dict[str, dict] = {}

    def for_language(self, language: str | None) -> RuleParams:
        shipped = load_params().for_language(language)
        override = self.profiles.get(language or "", self.profiles.get("default"))
        return RuleParams.model_validate({**shipped.model_dump(), **override}) if override else shipped

    def model_post_init(self, _context) -> None:
        for lang, values in self.profiles.items():  # refuse a bad override when the config is read, not mid-run
            try:
                RuleParams.model_validate({**RuleParams().model_dump(), **values})
            except ValueError as e:
                raise ValueError(f"adjudicate.deterministic.profiles.{lang}: {e}") from None


def deterministic_verdict(
    claim: ClaimToJudge, params: RuleParams, name: str = DETERMINISTIC, context: JudgeContext | None = None
) -> JudgeVerdict:
    """The calibrated rule on one claim, read with the record's question and sources when ``context`` gives
    them; its evidence is the span it was judged against unless the label is unsupported."""
    sources = tuple(s.text for s in context.sources) if context else ()
    features = support_features(
        claim.text, claim.candidates, claim.checks, context.question if context else None, sources, context.language if context else None
    )
    label, why = decide(features, params)
    if label == CONTRADICTED and claim.checks.conflicts:
        why += f": {claim.checks.conflicts[0].detail}"
    elif label == CONTRADICTED and claim.checks.numbers_mismatched:
        m = claim.checks.numbers_mismatched[0]
        why += f": the claim says {m.claim} where the evidence says {m.candidate}"
    best = claim.candidates[features.span] if claim.candidates else None  # the span the claim was judged against
    evidence = [best] if best is not None and label != UNSUPPORTED else []
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
        params = self.thresholds.for_language(context.language)
        return {c.cid: deterministic_verdict(c, params, self.name, context) for c in claims}
