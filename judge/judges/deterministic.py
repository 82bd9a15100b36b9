"""The deterministic judge: a label from the claim's evidence features with no model call, learned from
human-labelled sets, that says ``unsure`` where its confidence is low. It sits in a panel like any model judge
(config: ``judges: [deterministic]``).

Small gradient-boosted trees over the claim's Evidence (:mod:`judge.stages.evidence`) give the probability that the
claim is supported (``judge/data/no_model_judge.json``, written by ``bench/fit_no_model_judge.py``,
fitted and measured leave-one-dataset-out; walked here in pure Python). Per language profile: p at or above
``supported_from`` is supported, unless the checks find a contradiction (the calibrated rule of
:mod:`judge.stages.support`): a correction or retraction in the source is contradicted, any other the two
disagree on is unsure; below it, such a contradiction is
contradicted; else p at or above ``unsure_from`` is unsure; else the rule names the kind of failure
(partially supported or unsupported). The rule's thresholds (calibrated per
language, ``judge/data/deterministic.yaml``) may be overridden by a config:
``adjudicate.deterministic.profiles: {he: {...}, default: {...}}``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from judge.judges.base import ClaimToJudge, JudgeContext, context_inputs, evidence_of, spans_of
from judge.stages.evidence import FEATURES
from judge.results import JudgeVerdict
from judge.stages.support import RuleParams, SupportFeatures, decide, load_params
from judge.text.language import HEBREW, LANGUAGES
from judge.verdicts import CONTRADICTED, DETERMINISTIC, PARTIALLY_SUPPORTED, SUPPORTED, UNSUPPORTED, UNSURE

MODEL_FILE = Path(__file__).resolve().parent.parent / "data" / "no_model_judge.json"


class Profile(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    supported_from: float = Field(ge=0, le=1.01)
    unsure_from: float = Field(ge=0, le=1.01)
    mode: Literal["learned", "rule"] = "learned"  # rule: the calibrated rule alone measured better on this language


class Thresholds(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    default: Profile
    he: Profile
    free_from: float = Field(ge=0, le=1.01)  # triage settles a verbatim claim for free only from this p


class NoModelWeights(BaseModel):
    """What ``judge/data/no_model_judge.json`` holds (read through the input boundary like any input)."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    features: list[str]
    kind: str = Field(pattern="^gbt$")
    base: float
    trees: list[dict]
    thresholds: Thresholds
    heldout: dict = {}  # the fit's leave-one-dataset-out figures (bench/fit_no_model_judge.py), shown in reports

    def free_note(self) -> str | None:
        """One line on the free verdicts' held-out precision and share, as measured when the weights were fitted."""
        free = {k: v for k, v in (self.heldout.get("free") or {}).items() if v.get("precision") is not None}
        if not free:
            return None
        low = min(free, key=lambda k: free[k]["precision"])
        shares = [v["share"] for v in free.values()]
        return (f"Held out when the no-model judge was fitted, triage's free verdicts were right {free[low]['precision']:.3f} of the "
                f"time or more on each of {len(free)} labelled sets (lowest: {low}), settling {min(shares):.1%}-{max(shares):.1%} "
                "of their claims (bench/README.md).")

    def model_post_init(self, _context) -> None:
        if tuple(self.features) != FEATURES:
            raise ValueError("the weights were fitted on other features: rerun bench/fit_no_model_judge.py --write")

    def profile(self, language: str | None) -> Profile:
        return self.thresholds.he if language == HEBREW else self.thresholds.default


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


# What a claim kept whole by its span must not have: an unaligned content word, a name or number away from its
# slot or filled otherwise, a denial changed, a connective the span lacks, a correction, a word no source writes,
# a short answer's reading with its question, no span at all.
_KEPT_ZERO = ("align_unaligned", "align_displaced", "align_slots_name", "align_slots_number", "align_slots_date",
              "align_slots_percent", "align_negation_dropped", "align_negation_withheld", "align_negation_added",
              "align_connectives_unaligned", "conflicts", "numbers_mismatched", "absent_key", "short", "no_candidate")


def kept_in_order(x: dict[str, float]) -> bool:
    """Every content word of the claim has its partner in ONE sentence of its span, in the span's order, and
    nothing the alignment or the checks read differs: the claim is its span with words left out ("Lima is the
    capital of Peru." of "Lima is the capital and largest city of Peru."). Such a claim is never called
    partially supported, whatever the fitted score: partial means a detail the source does not state, and
    there is none (bench/README, "A claim its span keeps whole")."""
    return (x["align_aligned_share"] >= 1.0 and x["align_order"] >= 1.0 and x["align_span_sentences"] <= 1 / 3 + 1e-9
            and all(x[n] == 0 for n in _KEPT_ZERO))


def never_supported(f: SupportFeatures) -> str | None:
    """What keeps a claim from "supported" whatever the trees say (fixed, as the design's alignment rules: the
    labelled sets hold too few of these cases to teach them): a name or number no source writes, a denial
    the aligned clause lacks, or one it holds that the claim drops or states as settled; a short answer no
    passage of the source holds (issue 45.7: "read with its question: no passage ..." ended supported). A name
    slot the span fills otherwise is not vetoed: on the labelled sets at hand it cost WiCE 0.017 and
    DialSummEval 0.013 (the name detector's false slots, issue 45.6), bench/README. A verdict whose reason is one of these is never ``supported``."""
    if f.absent_key:
        return f"the source never writes {', '.join(f.absent_key[:4])}"
    if f.added_negation:
        return "the claim denies what its span does not"
    if f.dropped_negation or f.withheld_negation:
        return "the span denies, or does not confirm, what the claim states"
    if f.short and not f.answer_in_source:
        return "read with its question: no passage of the source holds the answer's words"
    return None


class DeterministicThresholds(BaseModel):
    """``adjudicate.deterministic``: profiles (by language, ``default`` for the rest) of the rule behind the
    judge's contradicted, partially supported and unsupported labels; a profile names only what it changes."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    profiles: dict[str, dict] = {}

    def for_language(self, language: str | None) -> RuleParams:
        shipped = load_params().for_language(language)
        override = self.profiles.get(language or "", self.profiles.get("default"))
        return RuleParams.model_validate({**shipped.model_dump(), **override}) if override else shipped

    def model_post_init(self, _context) -> None:
        for lang, values in self.profiles.items():  # refuse a bad override when the config is read, not mid-run
            if lang != "default" and lang not in LANGUAGES:
                raise ValueError(f"adjudicate.deterministic.profiles.{lang}: not a language code: write one of "
                                 f"{', '.join(LANGUAGES)} or default")
            try:
                RuleParams.model_validate({**RuleParams().model_dump(), **values})
            except ValueError as e:
                raise ValueError(f"adjudicate.deterministic.profiles.{lang}: {e}") from None


def claim_probability(
    claim: ClaimToJudge, question: str | None, sources: tuple[str, ...], weights: NoModelWeights | None = None, language: str | None = None
):
    """(P(supported), the support features) of one claim, read with the record's question and sources; 0 with
    no candidate (nothing to cite is never supported, whatever the trees would make of an empty alignment)."""
    p, f, _ = claim_reading(claim, question, sources, weights, language)
    return p, f


def claim_reading(
    claim: ClaimToJudge, question: str | None, sources: tuple[str, ...], weights: NoModelWeights | None = None, language: str | None = None
) -> tuple[float, SupportFeatures, dict[str, float]]:
    """(P(supported), the support features, the named feature vector) of one claim: its Evidence (built once
    per claim and input, :func:`judge.judges.base.evidence_of`) through the trees."""
    e = evidence_of(claim, question, sources, language)
    return (probability(weights or load_weights(), e.vector) if claim.candidates else 0.0), e.support, e.vector


def deterministic_verdict(
    claim: ClaimToJudge, params: RuleParams, name: str = DETERMINISTIC, context: JudgeContext | None = None,
    weights: NoModelWeights | None = None,
) -> JudgeVerdict:
    """The learned judge on one claim (see the module docstring); its evidence is the span it was judged
    against unless the label is unsupported or unsure."""
    weights = weights or load_weights()
    question, sources, language = context_inputs(context)
    p, f, x = claim_reading(claim, question, sources, weights, language)
    profile = weights.profile(context.language if context else None)
    rule, why = decide(f, params)
    if rule == CONTRADICTED and claim.checks.conflicts:
        why += f": {claim.checks.conflicts[0].detail}"
    elif rule == CONTRADICTED and claim.checks.numbers_mismatched:
        m = claim.checks.numbers_mismatched[0]
        why += f": the claim says {m.claim} where the evidence says {m.candidate}"
    label, why = no_model_label(p, f, x, rule, why, profile)
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


def no_model_label(p: float, f: SupportFeatures, x: dict[str, float], rule: str, why: str, profile: Profile) -> tuple[str, str]:
    """(label, why) of the no-model judge from the fitted score ``p``, the support features and named vector of
    the claim, and the rule's label and reason: the one decision path (the judge and bench/ call it)."""
    if profile.mode == "rule" or (rule == CONTRADICTED and f.conflicts):  # the source itself corrects or retracts it
        label = rule
    elif p >= profile.supported_from and rule == CONTRADICTED:  # the two disagree: a model judge decides, or not verified
        label, why = UNSURE, f"{why}, but the no-model judge's fitted score is {p:.2f} (supported from {profile.supported_from:.2f}): the two disagree"
    elif p >= profile.supported_from and (veto := never_supported(f)):
        label, why = (PARTIALLY_SUPPORTED if rule == SUPPORTED else rule), f"{veto} (the no-model judge's fitted score {p:.2f})"
    elif p >= profile.supported_from:
        label, why = SUPPORTED, f"{why} (the no-model judge's fitted score {p:.2f}; supported from {profile.supported_from:.2f})"
    elif rule == CONTRADICTED:
        label = CONTRADICTED
    elif rule == SUPPORTED and kept_in_order(x):  # nothing added, nothing changed: no detail to call partial
        label, why = SUPPORTED, f"{why}; every word of the claim is in one sentence of its span, in its order (the fitted score {p:.2f} is overruled)"
    elif p >= profile.unsure_from:
        label, why = UNSURE, f"{why} (the no-model judge's fitted score {p:.2f}, too close to call: unsure from {profile.unsure_from:.2f})"
    else:
        label = PARTIALLY_SUPPORTED if rule == SUPPORTED else rule
        why = f"{why} (the no-model judge's fitted score {p:.2f})"
    return label, why


class DeterministicJudge:
    def __init__(self, thresholds: DeterministicThresholds, name: str = DETERMINISTIC):
        self.name = name
        self.thresholds = thresholds

    async def judge(self, claims: list[ClaimToJudge], context: JudgeContext) -> dict[str, JudgeVerdict]:
        params = self.thresholds.for_language(context.language)
        return {c.cid: deterministic_verdict(c, params, self.name, context) for c in claims}
