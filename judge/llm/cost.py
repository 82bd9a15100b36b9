"""What a call cost: config price overrides first, local models free, else litellm's local price map.

An unknown price gives ``None`` (and one warning per model), never a crash.
"""

from __future__ import annotations

import logging

from judge.llm.config import ModelConfig

log = logging.getLogger("judge.llm")
_warned: set[str] = set()


def call_cost(cfg: ModelConfig, prompt_tokens: int, completion_tokens: int) -> float | None:
    if cfg.price is not None:
        return (prompt_tokens * cfg.price.input_per_million + completion_tokens * cfg.price.output_per_million) / 1e6
    if cfg.is_local:
        return 0.0
    from judge.llm.litellm_setup import litellm

    try:
        prompt_cost, completion_cost = litellm().cost_per_token(
            model=cfg.model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
        return float(prompt_cost) + float(completion_cost)
    except Exception:
        if cfg.model not in _warned:
            _warned.add(cfg.model)
            log.warning("no price known for %s: its cost is reported as null (set price: in its config)", cfg.model)
        return None
