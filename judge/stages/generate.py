"""Generation: a model under test answers a record's question from its source(s)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from judge.llm import LLM, LLMCallError, ModelConfig
from judge.llm.activity import task
from judge.models import Record
from judge.prompts import Prompt
from judge.text.control import end_of_turn


class GeneratedAnswer(BaseModel):
    answer: str = Field(min_length=1, max_length=6000)


async def generate(llm: LLM, cfg: ModelConfig, prompt: Prompt, record: Record, language: str) -> tuple[str, str | None, list]:
    """(answer text, error or None, call records). A failed call gives an empty answer and the error; an
    answer cut at max_tokens is kept, and its call record says ``truncated``. An answer that writes a chat
    template's turn marker (``<|im_end|>``, ``<end_of_turn>``) ended there: the rest, a conversation the model
    made up, is no part of it (and a max_tokens reached after it cut nothing of the answer)."""
    messages = prompt.render(sources=record.sources, question=record.question, language=language)
    try:
        with task("answering"):  # the progress line's word for this call (not "judging")
            result, call = await llm.structured(cfg, messages, GeneratedAnswer, prompt_hash=prompt.hash, keep_truncated=True)
    except LLMCallError as e:
        return "", f"generation failed: {e.cause}", [e.record] if e.record else []
    answer, ended = end_of_turn(result.answer)
    if ended:
        call = call.model_copy(update={"truncated": False})
        if not answer.strip():
            return "", "generation failed: the answer was only a chat template's turn marker", [call]
    return answer.strip(), None, [call]
