"""What a call cost: config price overrides first, local models free, else litellm's local price map; an
unknown price is ``None``, and the models met without one are said once at the end (:func:`unpriced`).
"""

from __future__ import annotations

import logging
from functools import lru_cache

from judge.llm.config import ModelConfig

log = logging.getLogger("judge.llm")
_unpriced: set[str] = set()
PRICE_HINT = "set price: {input_per_million: USD, output_per_million: USD} in the model's config (docs/configs.md)"


def unpriced(model_ids) -> list[str]:
    """Those of ``model_ids`` called in this process with no price known."""
    return sorted(m for m in set(model_ids) if m in _unpriced)


MAX_CALL_TOKENS = 10_000_000  # tokens one request may be said to use: beyond any context window there is


def reported_tokens(value, kind: str, model: str) -> int:
    """A reported token count made safe to add up and price: negative (which would refund the budget) as 0,
    beyond MAX_CALL_TOKENS as MAX_CALL_TOKENS (it spends the budget), not a number as 0; one warning per model."""
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
        if cfg.model not in _unpriced:
            _unpriced.add(cfg.model)
            log.debug("no price known for %s", cfg.model)  # said once per run, with the others, at its end
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
