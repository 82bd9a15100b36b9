"""The deterministic judge: a label from the claim's evidence features with no model call, learned from
human-labelled sets, that says ``unsure`` where its confidence is low. It sits in a panel like any model judge
(config: ``judges: [deterministic]``).

Small gradient-boosted trees over :func:`judge.judges.features.claim_features` give the probability that the
claim is supported (``judge/data/no_model_judge.json``, written by ``bench/fit_no_model_judge.py``,
fitted and measured leave-one-dataset-out; walked here in pure Python). Per language profile: p at or above
``supported_from`` is supported; else a contradiction the checks find (the calibrated rule of
:mod:`judge.stages.support`) is contradicted; else p at or above ``unsure_from`` is unsure; else the rule
names the kind of failure (partially supported or unsupported). The rule's thresholds (calibrated per
language, ``judge/data/deterministic.yaml``) may be overridden by a config:
``adjudicate.deterministic.profiles: {he: {...}, default: {...}}``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from judge.judges.base import ClaimToJudge, JudgeContext, spans_of
from judge.judges.features import FEATURES, claim_features
from judge.results import JudgeVerdict
from judge.stages.support import RuleParams, decide, load_params
from judge.verdicts import CONTRADICTED, DETERMINISTIC, PARTIALLY_SUPPORTED, SUPPORTED, UNSUPPORTED, UNSURE

MODEL_FILE = Path(__file__).resolve().parent.parent / "data" / "no_model_judge.json"


class Profile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    supported_from: float = Field(ge=0, le=1.01)
    unsure_from: float = Field(ge=0, le=1.01)


class Thresholds(BaseModel):
    model_config = ConfigDict(extra="forbid")

    default: Profile
    he: Profile
    free_from: float = Field(ge=0, le=1.01)  # triage settles a verbatim claim for free only from this p


class NoModelWeights(BaseModel):
    """What ``judge/data/no_model_judge.json`` holds (read through the input boundary like any input)."""

    model_config = ConfigDict(extra="ignore")

    features: list[str]
    kind: str = Field(pattern="^gbt$")
    base: float
    trees: list[dict]
    thresholds: Thresholds

    def model_post_init(self, _context) -> None:
        if tuple(self.features) != FEATURES:
            raise ValueError("the weights were fitted on other features: rerun bench/fit_no_model_judge.py --write")

    def profile(self, language: str | None) -> Profile:
        return self.thresholds.he if language == "he" else self.thresholds.default


@lru_cache(maxsize=4)
def load_weights(path: str | None = None) -> NoModelWeights:
    """The shipped weights (or those at ``path``)."""
    from judge.boundary import parse_json  # the input boundary: depth and value limits

    file = Path(path) if path else MODEL_FILE
    return NoModelWeights.model_validate(parse_json(file.read_bytes(), str(file)))


def _walk(tree: dict, x: dict[str, float]) -> float:
    while "v" not in tree:
        tree = tree["l"] if x[tree["f"]] <= tree["t"] else tree["r"]
    return tree["v"]


def probability(weights: NoModelWeights, x: dict[str, float]) -> float:
    """P(supported) of a claim's named features: the trees' sum through a logistic."""
    z = weights.base + sum(_walk(t, x) for t in weights.trees)
    return 1 / (1 + math.exp(-max(-50.0, min(50.0, z))))


class DeterministicThresholds(BaseModel):
    """``adjudicate.deterministic``: profiles (by language, ``default`` for the rest) of the rule behind the
    judge's contradicted, partially supported and unsupported labels; a profile names only what it changes."""

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


def claim_probability(
    claim: ClaimToJudge, question: str | None, sources: tuple[str, ...], weights: NoModelWeights | None = None, language: str | None = None
):
    """(P(supported), the support features) of one claim, read with the record's question and sources."""
    x, f = claim_features(claim.text, claim.candidates, claim.checks, question, sources, language)
    return probability(weights or load_weights(), x), f


def deterministic_verdict(
    claim: ClaimToJudge, params: RuleParams, name: str = DETERMINISTIC, context: JudgeContext | None = None,
    weights: NoModelWeights | None = None,
) -> JudgeVerdict:
    """The learned judge on one claim (see the module docstring); its evidence is the span it was judged
    against unless the label is unsupported or unsure."""
    weights = weights or load_weights()
    sources = tuple(s.text for s in context.sources) if context else ()
    p, f = claim_probability(claim, context.question if context else None, sources, weights, context.language if context else None)
    profile = weights.profile(context.language if context else None)
    rule, why = decide(f, params)
    if p >= profile.supported_from:
        label, why = SUPPORTED, f"the learned judge gives {p:.2f} (supported from {profile.supported_from:.2f}); {why}"
    elif rule == CONTRADICTED:
        label = CONTRADICTED
        if claim.checks.conflicts:
            why += f": {claim.checks.conflicts[0].detail}"
        elif claim.checks.numbers_mismatched:
            m = claim.checks.numbers_mismatched[0]
            why += f": the claim says {m.claim} where the evidence says {m.candidate}"
    elif p >= profile.unsure_from:
        label, why = UNSURE, f"the learned judge gives {p:.2f}, too close to call (unsure from {profile.unsure_from:.2f}); {why}"
    else:
        label = PARTIALLY_SUPPORTED if rule == SUPPORTED else rule
        why = f"the learned judge gives {p:.2f}; {why}"
    best = claim.candidates[f.span] if claim.candidates else None  # the span the claim was judged against
    evidence = [best] if best is not None and label not in (UNSUPPORTED, UNSURE) else []
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
