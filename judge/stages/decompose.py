"""Decomposition: an answer into claims, each with the verified span(s) of the answer it came from.

The LLM decomposer returns self-contained claims with a quote of the answer each came from; every claim,
whatever made it, passes the boundary of :mod:`judge.stages.claims` (a located quote, the answer's words,
no question or instruction, short answers read with the question). The ``sentences`` decomposer (one claim
per sentence) needs no model, and is the fallback when the LLM call fails or none of its claims is kept.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from judge.llm import LLM, LLMCallError, ModelConfig
from judge.llm.activity import task
from judge.prompts import Prompt
from judge.results import Decomposition
from judge.search import Index
from judge.stages.claims import ANSWER_DOC, Admitted, AnswerClaim, admit_proposed, admit_sentences
from judge.text import split_sentences


class DecomposedClaim(BaseModel):
    text: str = Field(min_length=1, max_length=1000)
    quote: str = Field(max_length=2000)


class Decomposed(BaseModel):
    claims: list[DecomposedClaim] = Field(max_length=40)


def sentence_pieces(answer: str) -> list[tuple[int, int]]:
    return [(s.start, s.end) for s in split_sentences(answer)]


def whole_piece(answer: str) -> list[tuple[int, int]]:
    text = answer.strip()
    if not text:
        return []
    start = answer.find(text)
    return [(start, start + len(text))]


def sentence_claims(answer: str, question: str = "") -> Admitted:
    """One claim per sentence of the answer, through the boundary (questions and instructions dropped, short
    answers read with the question)."""
    return admit_sentences(answer, question, sentence_pieces(answer))


def _fallback(answer: str, question: str, cfg: ModelConfig, prompt: Prompt, reason: str, dropped=()) -> tuple[Admitted, Decomposition]:
    admitted = sentence_claims(answer, question)
    how = Decomposition(method="sentences", model=cfg.label, fallback_reason=reason, prompt_hash=prompt.hash, dropped=[*dropped, *admitted.dropped])
    return admitted, how


async def decompose(
    llm: LLM, cfg: ModelConfig | None, prompt: Prompt, question: str, answer: str, language: str, method: str = "llm"
) -> tuple[list[AnswerClaim], Decomposition, list]:
    """Claims admitted at the boundary (judge.stages.claims), how they were made (with what was dropped),
    and the call records."""
    if method == "whole":
        admitted = admit_sentences(answer, question, whole_piece(answer))
        return admitted.claims, Decomposition(method="whole", dropped=admitted.dropped), []
    if cfg is None or method == "sentences":
        admitted = sentence_claims(answer, question)
        return admitted.claims, Decomposition(method="sentences", dropped=admitted.dropped), []
    messages = prompt.render(question=question, answer=answer, language=language)
    try:
        with task("splitting the answer into claims"):  # the progress line's word for this call
            result, record = await llm.structured(cfg, messages, Decomposed, prompt_hash=prompt.hash)
    except LLMCallError as e:
        admitted, how = _fallback(answer, question, cfg, prompt, f"LLM decomposer failed: {e.cause}")
        return admitted.claims, how, [e.record] if e.record else []
    proposed = [(c.text, c.quote) for c in result.claims if c.text.strip()]
    if not proposed and answer.strip():
        admitted, how = _fallback(answer, question, cfg, prompt, "LLM decomposer returned no claims")
        return admitted.claims, how, [record]
    admitted = admit_proposed(answer, question, proposed, Index(answer, ANSWER_DOC))
    if not admitted.claims and answer.strip():
        fallen, how = _fallback(answer, question, cfg, prompt, "no claim the LLM decomposer wrote is the answer's", admitted.dropped)
        return fallen.claims, how, [record]
    return admitted.claims, Decomposition(method="llm", model=cfg.label, prompt_hash=prompt.hash, dropped=admitted.dropped), [record]
