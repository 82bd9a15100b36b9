"""Generation: a model under test answers a record's question from its source(s)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from judge.llm import LLM, LLMCallError, ModelConfig
from judge.llm.activity import task
from judge.models import Record
from judge.prompts import Prompt


class GeneratedAnswer(BaseModel):
    answer: str = Field(min_length=1, max_length=6000)


async def generate(llm: LLM, cfg: ModelConfig, prompt: Prompt, record: Record, language: str) -> tuple[str, str | None, list]:
    """(answer text, error or None, call records). A failed call gives an empty answer and the error; an
    answer cut at max_tokens is kept, and its call record says ``truncated``."""
    messages = prompt.render(sources=record.sources, question=record.question, language=language)
    try:
        with task("answering"):  # the progress line's word for this call (not "judging")
            result, call = await llm.structured(cfg, messages, GeneratedAnswer, prompt_hash=prompt.hash, keep_truncated=True)
    except LLMCallError as e:
        return "", f"generation failed: {e.cause}", [e.record] if e.record else []
    return result.answer.strip(), None, [call]
