"""Decomposition: an answer into claims, each with the verified span(s) of the answer it came from.

The LLM decomposer returns self-contained claims with a quote of the answer each came from; every claim,
whatever made it, passes the boundary of :mod:`judge.stages.claims` (a located quote, the answer's words,
no question or instruction, short answers read with the question). The ``sentences`` decomposer (one claim
per sentence) needs no model, and is the fallback when the LLM call fails or none of its claims is kept.

A claim is bounded: a sentence (or a whole answer) longer than :data:`MAX_CLAIM_CHARS` is no claim a judge
can read, and every reading of a claim (its words, numbers, alignment, checks) costs memory in its length
(~300 bytes a character: a 5 MB one-sentence answer peaked at 1.4 GB). Such a piece is set aside before any
of that, as a dropped claim whose reason gives its length and its offsets in the answer (the answer itself is
kept whole, so nothing is lost); the LLM decomposer's claims are bounded by its schema (1,000 characters).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from judge.llm import LLM, LLMCallError, ModelConfig
from judge.llm.activity import task
from judge.prompts import Prompt
from judge.results import Decomposition, DroppedClaim
from judge.search import Index
from judge.stages.claims import ANSWER_DOC, Admitted, AnswerClaim, admit_proposed, admit_sentences
from judge.text import split_sentences


MAX_CLAIM_CHARS = 10_000
"""The longest piece of an answer (a sentence, or the whole answer) judged as one claim: over three times the
longest sentence of any answer or source in the shared data (2,912 characters), and small enough that one
claim's readings stay within a few megabytes."""
TOO_LONG = "too long to be one claim"
PREVIEW_CHARS = 200  # of a piece too long to judge, what the dropped claim shows (its offsets say where it all is)


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
    answers read with the question); a sentence too long to be one claim set aside (:func:`bounded_admit`)."""
    return bounded_admit(answer, question, sentence_pieces(answer))


def too_long(answer: str, start: int, end: int) -> DroppedClaim:
    """The dropped claim of a piece longer than :data:`MAX_CLAIM_CHARS`: its start shown, its length and its
    offsets in the answer in the reason (``answer[start:end]`` is the whole piece)."""
    preview = answer[start : start + PREVIEW_CHARS].rstrip() + " \u2026"
    reason = f"{TOO_LONG}: {end - start:,} characters at answer[{start}:{end}], more than {MAX_CLAIM_CHARS:,}; not judged"
    return DroppedClaim(text=preview, quote="", reason=reason)


def bounded_admit(answer: str, question: str, pieces: list[tuple[int, int]]) -> Admitted:
    """:func:`judge.stages.claims.admit_sentences` with every piece longer than :data:`MAX_CLAIM_CHARS` set
    aside unread (:func:`too_long`). The boundary reads such a piece only through its first
    ``MAX_CLAIM_CHARS`` characters, in its place, so that the other pieces are read as they would be beside
    it (whether the answer is one piece; whether a short piece comes first); whatever it makes of that stand-in
    is replaced by the piece's own dropped claim."""
    long = [(s, e) for s, e in pieces if e - s > MAX_CLAIM_CHARS]
    if not long:
        return admit_sentences(answer, question, pieces)
    stand_ins = [(s, s + MAX_CLAIM_CHARS) if e - s > MAX_CLAIM_CHARS else (s, e) for s, e in pieces]
    admitted = admit_sentences(answer, question, stand_ins)
    claims = [c for c in admitted.claims if not any(s <= sp.start_char < e for sp in c.spans for s, e in long)]
    dropped = list(admitted.dropped)
    for s, _ in long:  # the stand-in dropped (a question, an instruction ...): its text ends where the stand-in does
        cut = s + MAX_CLAIM_CHARS
        mine = next((d for d in dropped if len(d.text) > MAX_CLAIM_CHARS // 2 and answer.startswith(d.text, cut - len(d.text))), None)
        if mine is not None:
            dropped.remove(mine)
    return Admitted(claims=claims, dropped=[*dropped, *(too_long(answer, s, e) for s, e in long)])


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
        admitted = bounded_admit(answer, question, whole_piece(answer))
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
