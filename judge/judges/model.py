"""A judge that is a model: it reads the claim and its candidate passages (ids, text, a little context) and
answers with a label and the ids of the passages it relies on. The ids are a JSON-schema enum built from
the offered set, so even a small model cannot cite a passage it was not shown, and every evidence span in
the result is a verified slice of a source. A call that still fails after retries is a ``judge_error``
verdict, never a crash."""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import BaseModel, Field, create_model, model_validator

from judge.judges.base import ClaimToJudge, JudgeContext, spans_of
from judge.judges.calls import call_groups
from judge.llm import LLM, LLMCallError, ModelConfig, family_of
from judge.prompts import Prompt
from judge.results import JudgeVerdict
from judge.verdicts import JUDGE_ERROR, Label

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


class ModelJudge:
    """One model of the config as a judge (one call per answer when ``batch``, cut by judge.judges.calls when
    the answer is long; else one per claim)."""

    def __init__(self, llm: LLM, cfg: ModelConfig, prompt: Prompt, *, batch: bool, context_chars: int, full_context: bool = False,
                 call_tokens: int = 6000, call_claims: int = 32):
        self.llm, self.cfg, self.prompt = llm, cfg, prompt
        self.name = cfg.label
        self.batch, self.context_chars, self.full_context = batch, context_chars, full_context
        self.call_tokens, self.call_claims = call_tokens, call_claims  # a batch is cut into calls of this size

    async def judge(self, claims: list[ClaimToJudge], context: JudgeContext) -> dict[str, JudgeVerdict]:
        views = {c.cid: {"id": c.cid, "text": c.text, "passages": passages(c, context.texts, self.context_chars)} for c in claims}
        if self.batch:
            sizes = [len(c.text) + sum(len(p["before"]) + len(p["text"]) + len(p["after"]) for p in views[c.cid]["passages"]) for c in claims]
            cuts = call_groups(sizes, [c.control for c in claims], self.call_tokens, self.call_claims)
            groups = [[claims[i] for i in cut] for cut in cuts]
        else:
            groups = [[c] for c in claims]
        verdicts: dict[str, JudgeVerdict] = {}
        for group in groups:
            shown = [views[c.cid] for c in group]
            ids = [c.id for claim in group for c in claim.candidates]
            is_batch = self.batch and len(group) > 1
            model = batch_verdict_model([c.cid for c in group], ids) if is_batch else single_verdict_model(ids)
            messages = self.prompt.render(
                question=context.question, language=context.language, claims=shown, batch=is_batch,
                full_sources=context.sources if self.full_context else None,
            )
            try:
                result, record = await self.llm.structured(self.cfg, messages, model, prompt_hash=self.prompt.hash, sample=context.sample)
            except LLMCallError as e:
                context.calls.extend([e.record] if e.record else [])
                for c in group:
                    verdicts[c.cid] = self._error(e.cause)
                continue
            context.calls.append(record)
            answers = {v.claim_id: v for v in result.verdicts} if is_batch else {group[0].cid: result}
            for c in group:
                verdicts[c.cid] = self._verdict(c, answers[c.cid])
        return verdicts

    def _verdict(self, claim: ClaimToJudge, answer) -> JudgeVerdict:
        own = {c.id: c for c in claim.candidates}
        cited = [i for i in dict.fromkeys(answer.evidence) if i in own]  # a batch enum spans all claims: keep this claim's
        return JudgeVerdict(
            judge=self.cfg.label,
            model=self.cfg.model,
            family=family_of(self.cfg),
            label=answer.label,
            evidence_ids=cited,
            evidence=[s for i in cited for s in spans_of(own[i])],
            rationale=answer.rationale.strip(),
            how="model",
            prompt_hash=self.prompt.hash,
        )

    def _error(self, cause: str) -> JudgeVerdict:
        return JudgeVerdict(
            judge=self.cfg.label, model=self.cfg.model, family=family_of(self.cfg), label=JUDGE_ERROR, how="error",
            prompt_hash=self.prompt.hash, error=cause,
        )
