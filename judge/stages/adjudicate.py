"""Adjudication: each claim gets a verdict from every judge of the panel, and the panel's verdict.

A judge reads the claim and its candidate passages (ids, text, a little context) and answers with a label
and the ids of the passages it relies on; the ids are a JSON-schema enum built from the offered set, so
even a small model cannot cite a passage it was not shown, and every evidence span in the result is a
verified slice of a source. Before any model is asked, *triage* settles claims found verbatim (after
normalisation) in a source as supported. The ``deterministic`` judge labels from search scores and checks
alone and can sit in a panel like any model.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field, create_model, model_validator

from judge.llm import LLM, LLMCallError, ModelConfig, family_of
from judge.models import Candidate, Span
from judge.prompts import Prompt
from judge.results import ClaimChecks, JudgeVerdict, OfferedCandidate
from judge.verdicts import DETERMINISTIC, JUDGE_ERROR, NO_MODEL, SEVERITY, TRIAGE, Label, is_judged

VERBATIM_METHODS = ("exact", "normalized", "folded")


class DeterministicThresholds(BaseModel):
    supported_min_score: float = Field(0.8, ge=0, le=1)
    partial_min_score: float = Field(0.5, ge=0, le=1)


@dataclass
class ClaimToJudge:
    cid: str  # the id the judges see ("1", "2", ...)
    text: str
    candidates: list[OfferedCandidate]
    checks: ClaimChecks = field(default_factory=ClaimChecks)


def offer(candidates: list[Candidate], cid: str) -> list[OfferedCandidate]:
    return [OfferedCandidate(**c.model_dump(), id=f"{cid}.{j}") for j, c in enumerate(candidates, start=1)]


def spans_of(candidate: Candidate) -> list[Span]:
    return [p.model_copy() for p in candidate.parts]


SUB_SENTENCE_METHODS = ("exact", "normalized", "folded", "fuzzy")


def passages(claim: ClaimToJudge, sources: dict[str | None, str], context_chars: int) -> list[dict]:
    """What a judge sees of each candidate: id, text, and a little context either side.

    Context is given to sub-sentence spans (verbatim and fuzzy matches), whose sentence it completes; a
    candidate that is already one or two whole sentences stands alone, which keeps prompts short. A part
    already shown in an earlier passage of the same claim is referred to, not repeated."""
    out = []
    shown: dict[tuple, str] = {}
    for c in claim.candidates:
        text = sources.get(c.doc_id, sources.get(None, ""))
        first, last = c.parts[0], c.parts[-1]
        width = context_chars if c.method in SUB_SENTENCE_METHODS else 0
        before = text[max(0, first.start_char - width) : first.start_char]
        after = text[last.end_char : last.end_char + width]
        shown_text = [
            f"(the text of passage {shown[k]})" if (k := (p.doc_id, p.start_char, p.end_char)) in shown else p.excerpt
            for p in c.parts
        ]
        out.append(
            {
                "id": c.id,
                "before": ("…" if width and first.start_char > width else "") + before,
                "text": " … ".join(shown_text),
                "after": after + ("…" if width and last.end_char + width < len(text) else ""),
            }
        )
        for p in c.parts:
            shown.setdefault((p.doc_id, p.start_char, p.end_char), c.id)
    return out


def triage(claim: ClaimToJudge) -> JudgeVerdict | None:
    """Supported with no model call when the whole claim is found verbatim (after normalisation)."""
    if claim.candidates and claim.candidates[0].method in VERBATIM_METHODS:
        best = claim.candidates[0]
        return JudgeVerdict(
            judge=TRIAGE,
            model=NO_MODEL,
            family=NO_MODEL,
            label="supported",
            evidence_ids=[best.id],
            evidence=spans_of(best),
            rationale=f"the claim appears verbatim in the source ({best.method} match)",
            how=TRIAGE,
        )
    return None


def deterministic_verdict(claim: ClaimToJudge, thresholds: DeterministicThresholds, name: str = DETERMINISTIC) -> JudgeVerdict:
    """A label from the best candidate's score and the checks, with no model."""
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


def single_verdict_model(ids: list[str]) -> type[BaseModel]:
    evidence_type = list[Literal[tuple(ids)]] if ids else list[str]
    return create_model(
        "Verdict",
        label=(Label, ...),
        evidence=(evidence_type, Field(default_factory=list, max_length=len(ids))),
        rationale=(str, Field("", max_length=500)),
    )


def batch_verdict_model(claim_ids: list[str], ids: list[str]) -> type[BaseModel]:
    item = create_model(
        "ClaimVerdict",
        claim_id=(Literal[tuple(claim_ids)], ...),
        label=(Label, ...),
        evidence=((list[Literal[tuple(ids)]] if ids else list[str]), Field(default_factory=list, max_length=max(len(ids), 0))),
        rationale=(str, Field("", max_length=500)),
    )
    expected = set(claim_ids)

    def one_per_claim(self):
        got = Counter(v.claim_id for v in self.verdicts)
        missing = sorted(expected - set(got))
        repeated = sorted(c for c, n in got.items() if n > 1)
        if missing or repeated:
            raise ValueError(f"give exactly one verdict per claim; missing claim ids {missing}, repeated {repeated}")
        return self

    return create_model(
        "Verdicts",
        verdicts=(list[item], Field(min_length=len(claim_ids), max_length=len(claim_ids))),
        __validators__={"one_per_claim": model_validator(mode="after")(one_per_claim)},
    )


async def judge_with_model(
    llm: LLM,
    cfg: ModelConfig,
    prompt: Prompt,
    question: str,
    language: str,
    claims: list[ClaimToJudge],
    sources: dict[str | None, str],
    *,
    batch: bool,
    context_chars: int,
    full_sources: list | None = None,
) -> tuple[dict[str, JudgeVerdict], list]:
    """Verdicts of one model judge for ``claims`` (one call per answer when ``batch``), and the call records."""
    groups = [claims] if batch else [[c] for c in claims]
    verdicts: dict[str, JudgeVerdict] = {}
    records = []
    for group in groups:
        shown = [{"id": c.cid, "text": c.text, "passages": passages(c, sources, context_chars)} for c in group]
        ids = [c.id for claim in group for c in claim.candidates]
        is_batch = batch and len(group) > 1
        model = batch_verdict_model([c.cid for c in group], ids) if is_batch else single_verdict_model(ids)
        messages = prompt.render(
            question=question, language=language, claims=shown, batch=is_batch, full_sources=full_sources
        )
        try:
            result, record = await llm.structured(cfg, messages, model, prompt_hash=prompt.hash)
        except LLMCallError as e:
            records.extend([e.record] if e.record else [])
            for c in group:
                verdicts[c.cid] = _error_verdict(cfg, prompt, e.cause)
            continue
        records.append(record)
        answers = {v.claim_id: v for v in result.verdicts} if is_batch else {group[0].cid: result}
        for c in group:
            verdicts[c.cid] = _model_verdict(cfg, prompt, c, answers[c.cid])
    return verdicts, records


def _model_verdict(cfg: ModelConfig, prompt: Prompt, claim: ClaimToJudge, answer) -> JudgeVerdict:
    own = {c.id: c for c in claim.candidates}
    cited = [i for i in dict.fromkeys(answer.evidence) if i in own]  # a batch enum spans all claims: keep this claim's
    return JudgeVerdict(
        judge=cfg.label,
        model=cfg.model,
        family=family_of(cfg),
        label=answer.label,
        evidence_ids=cited,
        evidence=[s for i in cited for s in spans_of(own[i])],
        rationale=answer.rationale.strip(),
        how="model",
        prompt_hash=prompt.hash,
    )


def _error_verdict(cfg: ModelConfig, prompt: Prompt, cause: str) -> JudgeVerdict:
    return JudgeVerdict(
        judge=cfg.label, model=cfg.model, family=family_of(cfg), label=JUDGE_ERROR, how="error", prompt_hash=prompt.hash, error=cause
    )


def panel_verdict(verdicts: list[JudgeVerdict]) -> tuple[str, list[Span]]:
    """Majority of the judges that answered; a tie goes to the most cautious label; all failed: judge_error.

    The evidence is every span cited by a judge that agrees with the panel's label."""
    answered = [v for v in verdicts if is_judged(v.label)]
    if not answered:
        return JUDGE_ERROR, []
    counts = Counter(v.label for v in answered)
    top = max(counts.values())
    label = max((lbl for lbl, n in counts.items() if n == top), key=lambda lbl: SEVERITY[lbl])
    seen, evidence = set(), []
    for v in answered:
        if v.label != label:
            continue
        for s in v.evidence:
            key = (s.doc_id, s.start_char, s.end_char)
            if key not in seen:
                seen.add(key)
                evidence.append(s)
    return label, evidence
