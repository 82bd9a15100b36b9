"""What a call cost: config price overrides first, local models free, else litellm's local price map.

An unknown price gives ``None`` (and one warning per model), never a crash.
"""

from __future__ import annotations

import logging
from functools import lru_cache

from judge.llm.config import ModelConfig

log = logging.getLogger("judge.llm")
_warned: set[str] = set()


MAX_CALL_TOKENS = 10_000_000  # tokens one request may be said to use: beyond any context window there is


def reported_tokens(value, kind: str, model: str) -> int:
    """A token count as a provider reported it, made safe to add up and to price: a negative count (which
    would refund the budget: -1,000,000 tokens a call gave "cost $-240" and a $0.01 budget never stopped the
    run) is counted as 0, a count beyond MAX_CALL_TOKENS (10**30 made a run unreadable) as MAX_CALL_TOKENS,
    so that it spends the budget rather than escaping it; anything not a number as 0. Each with one warning
    per model."""
    try:
        if value is None:
            return 0
        n = value if isinstance(value, int) and not isinstance(value, bool) else int(float(value))
    except (TypeError, ValueError, OverflowError):  # "abc", NaN, inf, 5,000 digits
        _warn(model, kind, f"{model} reported {kind} that are not a number ({str(value)[:40]!r}): counted as 0")
        return 0
    if n < 0:
        _warn(model, kind, f"{model} reported {kind} below zero ({n:,}): counted as 0, so that it cannot refund the budget")
        return 0
    if n > MAX_CALL_TOKENS:
        _warn(model, kind, f"{model} reported more {kind} than any request can use (about {len(str(min(n, 10**100)))} digits): counted as "
                           f"{MAX_CALL_TOKENS:,}, which spends the budget")
        return MAX_CALL_TOKENS
    return n


def _warn(model: str, kind: str, message: str) -> None:
    if (model, kind) not in _warned_usage:
        _warned_usage.add((model, kind))
        log.warning("%s", message)


_warned_usage: set[tuple[str, str]] = set()


def call_cost(cfg: ModelConfig, prompt_tokens: int, completion_tokens: int) -> float | None:
    if cfg.price is not None:
        return (prompt_tokens * cfg.price.input_per_million + completion_tokens * cfg.price.output_per_million) / 1e6
    if cfg.is_local:
        return 0.0
    rates = _rates(cfg.model)
    if rates is None:
        if cfg.model not in _warned:
            _warned.add(cfg.model)
            log.warning("no price known for %s: its cost is reported as null (set price: in its config)", cfg.model)
        return None
    return prompt_tokens * rates[0] + completion_tokens * rates[1]


@lru_cache(maxsize=256)
def _rates(model: str) -> tuple[float, float] | None:
    """USD per prompt token and per completion token from litellm's local price map (looked up once)."""
    from judge.llm.litellm_setup import litellm

    try:
        prompt, completion = litellm().cost_per_token(model=model, prompt_tokens=1_000_000, completion_tokens=1_000_000)
    except Exception:
        return None
    return float(prompt) / 1e6, float(completion) / 1e6
