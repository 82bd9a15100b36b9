"""The fixed question ``judge ping`` asks a model, to check that a config works end to end."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from judge.verdicts import SUPPORTED, UNSUPPORTED


class PingAnswer(BaseModel):
    label: Literal[SUPPORTED, UNSUPPORTED]
    rationale: str = Field(max_length=400)


PING_MESSAGES = [
    {"role": "system", "content": "You check whether a claim is supported by a source. Answer in JSON."},
    {
        "role": "user",
        "content": "<source>The Golden Gate Bridge opened in 1937.</source>\n"
        "<claim>The Golden Gate Bridge opened in 1937.</claim>\nIs the claim supported by the source?",
    },
]


def ping(model, cache_dir, *, use_cache: bool = True, refresh: bool = False) -> dict:
    """One small structured call through the port (raises LLMError when it fails): answer, call, cache."""
    import asyncio

    from judge.llm.cache import CallCache
    from judge.llm.port import LLM

    cache = CallCache(cache_dir, enabled=use_cache, refresh=refresh)
    try:
        answer, record = asyncio.run(LLM(cache).structured(model, PING_MESSAGES, PingAnswer, prompt_hash="ping-v1"))
    finally:
        cache.close()
    return {"answer": answer.model_dump(), "call": record.model_dump(), "cache": {"hits": cache.hits, "misses": cache.misses}}
