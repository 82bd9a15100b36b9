"""Decomposition: an answer into claims, each with the verified span(s) of the answer it came from.

The LLM decomposer returns self-contained claims with a verbatim quote of the answer each came from; the
quote is located in the answer deterministically (exact, normalised, then the span search), so every
answer span is a real slice of the answer even when a small model misquotes. The ``sentences`` decomposer
(one claim per sentence) needs no model, and is the fallback when the LLM call fails.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from judge.llm import LLM, LLMCallError, ModelConfig
from judge.models import Span
from judge.prompts import Prompt
from judge.results import Decomposition
from judge.search import Index
from judge.text import split_sentences

ANSWER_DOC = "answer"


class DecomposedClaim(BaseModel):
    text: str = Field(min_length=1, max_length=1000)
    quote: str = Field(max_length=2000)


class Decomposed(BaseModel):
    claims: list[DecomposedClaim] = Field(max_length=40)


def sentence_claims(answer: str) -> list[tuple[str, list[Span]]]:
    return [
        (s.text, [Span(doc_id=ANSWER_DOC, start_char=s.start, end_char=s.end, excerpt=s.text)])
        for s in split_sentences(answer)
    ]


def locate_in_answer(answer: str, quote: str, claim: str, index: Index | None = None) -> list[Span]:
    """Where ``quote`` (else the claim) sits in the answer, as verified spans; [] if nowhere."""
    for needle in (quote.strip(), claim.strip()):
        if not needle:
            continue
        at = answer.find(needle)
        if at >= 0:
            return [Span(doc_id=ANSWER_DOC, start_char=at, end_char=at + len(needle), excerpt=needle)]
    index = index or Index(answer, ANSWER_DOC)
    for needle in (quote, claim):
        hits = index.search(needle, k=1) if needle.strip() else []
        if hits and hits[0].score >= 0.5:
            return [Span(doc_id=ANSWER_DOC, start_char=p.start_char, end_char=p.end_char, excerpt=p.excerpt) for p in hits[0].parts]
    return []


def whole_claim(answer: str) -> list[tuple[str, list[Span]]]:
    text = answer.strip()
    if not text:
        return []
    start = answer.find(text)
    return [(text, [Span(doc_id=ANSWER_DOC, start_char=start, end_char=start + len(text), excerpt=text)])]


async def decompose(
    llm: LLM, cfg: ModelConfig | None, prompt: Prompt, question: str, answer: str, language: str, method: str = "llm"
) -> tuple[list[tuple[str, list[Span]]], Decomposition, list]:
    """Claims with their answer spans, how they were made, and the call records."""
    if method == "whole":
        return whole_claim(answer), Decomposition(method="whole"), []
    if cfg is None or method == "sentences":
        return sentence_claims(answer), Decomposition(method="sentences"), []
    messages = prompt.render(question=question, answer=answer, language=language)
    try:
        result, record = await llm.structured(cfg, messages, Decomposed, prompt_hash=prompt.hash)
    except LLMCallError as e:
        how = Decomposition(method="sentences", model=cfg.label, fallback_reason=f"LLM decomposer failed: {e.cause}", prompt_hash=prompt.hash)
        return sentence_claims(answer), how, [e.record] if e.record else []
    claims = [(c.text.strip(), c.quote) for c in result.claims if c.text.strip()]
    if not claims and answer.strip():
        how = Decomposition(method="sentences", model=cfg.label, fallback_reason="LLM decomposer returned no claims", prompt_hash=prompt.hash)
        return sentence_claims(answer), how, [record]
    index = Index(answer, ANSWER_DOC)
    out = [(text, locate_in_answer(answer, quote, text, index)) for text, quote in claims]
    return out, Decomposition(method="llm", model=cfg.label, prompt_hash=prompt.hash), [record]
