"""Issue 36, items 13-14: a provider's numbers cannot defeat the budget or the retry limit. Negative or
absurd token counts are counted as 0 or bounded (with one warning), so max_cost_usd still stops the run;
Retry-After never outlives max_retry_seconds. Against the scripted server: litellm and instructor run for real."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from judge.llm import LLM, LLMCallError, Price
from judge.llm.cost import MAX_CALL_TOKENS, reported_tokens
from judge.testing.server import Reply
from tests.test_llm_port import MESSAGES, Verdict, _until_budget, cfg_for



@pytest.mark.parametrize("tokens", [-1_000_000, -1])
def test_negative_usage_never_refunds_the_budget(scripted_server, caplog, tokens):
    server = scripted_server(lambda req, n: Reply(body={"label": "supported", "rationale": "x"}, prompt_tokens=tokens, completion_tokens=1000))
    cfg = cfg_for(server, model=f"openai/scripted-neg{-tokens}", price=Price(input_per_million=200.0, output_per_million=10.0), max_tokens=1000)
    llm = LLM(max_cost_usd=0.015)
    with caplog.at_level(logging.WARNING, logger="judge.llm"):
        done = _until_budget(llm, cfg)
    # the first call spends 1000 * 10 / 1e6 = 0.01 (its negative prompt tokens count 0, never a refund); a second's
    # ceiling (10 prompt characters * 200 / 1e6 + 1000 * 10 / 1e6 = 0.012) would pass 0.015: never sent
    assert done == 1
    assert llm.totals.cost_usd >= 0.01 and llm.totals.prompt_tokens == 0
    assert sum("below zero" in r.getMessage() for r in caplog.records) == 1  # one warning per model, not per call


def test_absurd_usage_is_bounded_and_spends_the_budget(scripted_server):
    server = scripted_server(lambda req, n: Reply(body={"label": "supported", "rationale": "x"}, prompt_tokens=10**30, completion_tokens=1))
    cfg = cfg_for(server, price=Price(input_per_million=1.0, output_per_million=1.0))
    llm = LLM(max_cost_usd=0.01)
    assert _until_budget(llm, cfg) == 1
    assert llm.totals.prompt_tokens == MAX_CALL_TOKENS and llm.totals.cost_usd == pytest.approx(MAX_CALL_TOKENS / 1e6 + 1e-6)


@pytest.mark.parametrize("value,expected", [(12, 12), (-5, 0), (10**30, MAX_CALL_TOKENS), ("7", 7), (float("nan"), 0),
                                            (float("inf"), 0), ("9" * 5000, 0), (None, 0), ("abc", 0), (3.9, 3)])
def test_reported_tokens_is_the_one_rule(value, expected):
    assert reported_tokens(value, "prompt tokens", f"m{value!r}"[:30]) == expected


@pytest.mark.parametrize("retry_after", [1e9, 10.0])
def test_retry_after_never_outlives_max_retry_seconds(scripted_server, retry_after):
    server = scripted_server([Reply(status=429, retry_after=retry_after)])
    cfg = cfg_for(server, max_attempts=10, max_retry_seconds=1.0)
    started = time.perf_counter()
    with pytest.raises(LLMCallError):
        asyncio.run(LLM().structured(cfg, MESSAGES, Verdict))
    assert time.perf_counter() - started < 3.0  # not 60 s (the cap on one wait), not 10 s: the call gives up at once
    assert server.stats.requests == 1


def test_a_short_retry_after_is_still_honoured(scripted_server):
    server = scripted_server([Reply(status=429, retry_after=0.3), Reply(body={"label": "supported", "rationale": "x"})])
    cfg = cfg_for(server, max_attempts=3, max_retry_seconds=5.0)
    started = time.perf_counter()
    result, rec = asyncio.run(LLM().structured(cfg, MESSAGES, Verdict))
    assert result.label == "supported" and rec.attempts == 2 and time.perf_counter() - started >= 0.3
