"""A judge that is a model: it reads the claim and its candidate passages (ids, text, a little context) and
answers with a label and the ids of the passages it relies on. The ids are a JSON-schema enum built from
the offered set, so even a small model cannot cite a passage it was not shown, and every evidence span in
the result is a verified slice of a source. A call that still fails after retries is a ``judge_error``
verdict, never a crash."""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from typing import Literal

from pydantic import BaseModel, Field, create_model, model_validator

from judge.judges.base import ClaimToJudge, JudgeContext, spans_of
from judge.judges.calls import call_groups
from judge.llm import LLM, LLMCallError, ModelConfig, family_of
from judge.llm.grammar import EMBEDDED_RATIONALE_CHARS
from judge.prompts import Prompt
from judge.results import JudgeVerdict
from judge.text import split_sentences
from judge.text.bounds import inside_word
from judge.text.memo import text_memo
from judge.verdicts import JUDGE_ERROR, Label

SUB_SENTENCE_METHODS = ("exact", "normalized", "folded", "fuzzy")


@text_memo()
def _sentences(text: str) -> tuple[tuple[int, int], ...]:
    return tuple((x.start, x.end) for x in split_sentences(text))


def _touching(sentences, start: int, end: int) -> list[int]:
    """The sentences (in order, non-overlapping) that overlap [start, end)."""
    i = max(0, bisect_right(sentences, (start, len(sentences) and sentences[-1][1] + 1)) - 1)
    out = []
    while i < len(sentences) and sentences[i][0] < end:
        if start < sentences[i][1]:
            out.append(i)
        i += 1
    return out


def passages(claim: ClaimToJudge, sources: dict[str | None, str], context_chars: int) -> list[dict]:
    """What a judge sees of each candidate: id, text, and for a sub-sentence span (verbatim and fuzzy
    matches, shown marked) the rest of its sentence, at most ``context_chars`` either side unless another
    candidate offers that sentence whole, cut on token boundaries; a candidate of whole sentences stands alone.

    Each source sentence is shown once per claim: a part whose sentences an earlier passage of the claim
    showed is referred to ("(as in passage 1.1)"), and a part that overlaps one shows only its other sentences."""
    out = []
    shown: dict[tuple, str] = {}  # (doc_id, sentence index) -> the passage that showed it
    offered: dict[tuple, int] = {}  # (doc_id, sentence index) -> how many candidates of the claim touch it
    for c in claim.candidates:
        sentences = _sentences(sources.get(c.doc_id, sources.get(None, "")))
        for i in {i for p in c.parts for i in _touching(sentences, p.start_char, p.end_char)}:
            offered[(c.doc_id, i)] = offered.get((c.doc_id, i), 0) + 1
    for c in claim.candidates:
        text = sources.get(c.doc_id, sources.get(None, ""))
        sentences = _sentences(text)
        before = after = ""
        pieces: list[str] = []
        for p in c.parts:
            ids = _touching(sentences, p.start_char, p.end_char)
            if c.method in SUB_SENTENCE_METHODS and len(c.parts) == 1:
                if ids and all((c.doc_id, i) in shown for i in ids):
                    pieces.append(_refer(shown[(c.doc_id, ids[0])]))
                    break
                lo = sentences[ids[0]][0] if ids else p.start_char
                hi = sentences[ids[-1]][1] if ids else p.end_char
                whole = any(offered.get((c.doc_id, i), 0) > 1 for i in ids)
                width = max(hi - lo, 0) if whole else context_chars
                before, after = _context(text, lo, p.start_char, p.end_char, hi, width)
                pieces.append(p.excerpt)
                continue
            for run_ids, seen in _runs(ids, lambda i: shown.get((c.doc_id, i))):
                if seen is not None:
                    pieces.append(_refer(seen))
                else:
                    a = max(p.start_char, sentences[run_ids[0]][0])
                    b = min(p.end_char, sentences[run_ids[-1]][1])
                    pieces.append(text[a:b])
            if not ids:
                pieces.append(p.excerpt)
        for p in c.parts:
            for i in _touching(sentences, p.start_char, p.end_char):
                shown.setdefault((c.doc_id, i), c.id)
        out.append({"id": c.id, "before": before, "text": " … ".join(dict.fromkeys(pieces)), "after": after})
    return out


def _refer(passage_id: str) -> str:
    return f"(as in passage {passage_id})"


def _runs(ids: list[int], seen_by):
    """Consecutive sentence ids grouped by the passage that already showed them (None: not shown yet)."""
    runs: list[tuple[list[int], str | None]] = []
    for i in ids:
        who = seen_by(i)
        if runs and runs[-1][1] == who and runs[-1][0][-1] == i - 1:
            runs[-1][0].append(i)
        else:
            runs.append(([i], who))
    return runs


def _context(text: str, lo: int, start: int, end: int, hi: int, width: int) -> tuple[str, str]:
    """The rest of the sentence [lo, hi) either side of the span [start, end), at most ``width`` characters a
    side, cut on token boundaries; "…" where it is cut short."""
    if width <= 0:
        return "", ""
    a = max(lo, start - width)
    b = min(hi, end + width)
    while a < start and inside_word(text, a):
        a += 1
    while b > end and inside_word(text, b):
        b -= 1
    return ("…" if a > lo else "") + text[a:start], text[end:b] + ("…" if b < hi else "")


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


def whole_words(text: str, cap: int | None) -> str:
    """A rationale the embedded runtime's grammar stopped at ``cap`` characters (llm.grammar) ends on its last
    whole word with "…", never mid-word; a shorter one, or one that ends a sentence, is left as written."""
    if cap is None or len(text) < cap or text[-1:] in ".!?。؟":
        return text
    cut = text.rstrip()
    at = max(cut.rfind(" "), cut.rfind("\u00a0"))
    if at > cap // 2:  # a word was cut: back to the space before it (a text without spaces is kept as written)
        cut = cut[:at]
    return cut.rstrip(" ,;:-–—") + "…"


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
            cuts = call_groups(sizes, self.call_tokens, self.call_claims)
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
                result, record = await self.llm.structured(self.cfg, messages, model, prompt_hash=self.prompt.hash,
                                                            controls=sum(c.control for c in group), sample=context.sample)
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
            rationale=whole_words(answer.rationale.strip(), EMBEDDED_RATIONALE_CHARS if self.cfg.embedded_name else None),
            how="model",
            prompt_hash=self.prompt.hash,
        )

    def _error(self, cause: str) -> JudgeVerdict:
        return JudgeVerdict(
            judge=self.cfg.label, model=self.cfg.model, family=family_of(self.cfg), label=JUDGE_ERROR, how="error",
            prompt_hash=self.prompt.hash, error=cause,
        )
