"""The LLM port against a scripted OpenAI-compatible server: litellm and instructor run for real."""

import asyncio
import logging
import time
from typing import Literal

import pytest
from pydantic import BaseModel

from judge.llm import LLM, BudgetExceeded, CallCache, LLMCallError, ModelConfig, Price
from judge.testing.server import Reply

MESSAGES = [{"role": "system", "content": "You are a judge."}, {"role": "user", "content": "Is the claim supported?"}]
GOOD = Reply(body={"label": "supported", "rationale": "the source says so"})


class Verdict(BaseModel):
    label: Literal["supported", "unsupported"]
    rationale: str


class OtherVerdict(BaseModel):
    label: Literal["supported", "unsupported", "contradicted"]
    rationale: str


def cfg_for(server, **kw) -> ModelConfig:
    base = dict(model="openai/scripted", api_base=server.base_url, timeout=2.0, max_attempts=4, max_retry_seconds=20)
    base.update(kw)
    return ModelConfig(**base)


def run(coro):
    return asyncio.run(coro)


def test_second_identical_call_is_served_from_the_cache(scripted_server, tmp_path):
    server = scripted_server([GOOD])
    cfg = cfg_for(server)

    async def twice():
        llm = LLM(CallCache(tmp_path / "cache"))
        first = await llm.structured(cfg, MESSAGES, Verdict, prompt_hash="p1")
        second = await llm.structured(cfg, MESSAGES, Verdict, prompt_hash="p1")
        return llm, first, second

    llm, (r1, rec1), (r2, rec2) = run(twice())
    assert server.stats.requests == 1
    assert r1 == r2 and rec2.cached and not rec1.cached
    assert rec2.prompt_tokens == 0 and rec2.cost_usd == 0.0  # nothing spent again
    assert (llm.cache.hits, llm.cache.misses) == (1, 1)
    assert (llm.totals.calls, llm.totals.cache_hits) == (1, 1)
    # a new process (new LLM, same directory) is served from disk too
    again = LLM(CallCache(tmp_path / "cache"))
    _, rec3 = run(again.structured(cfg, MESSAGES, Verdict, prompt_hash="p1"))
    assert rec3.cached and server.stats.requests == 1


@pytest.mark.parametrize(
    "change",
    [
        {"model": "openai/scripted-2"},
        {"temperature": 0.5},
        {"seed": 7},
        {"max_tokens": 99},
        {"mode": "json_schema"},
        {"messages": [{"role": "user", "content": "Another question?"}]},
        {"schema": OtherVerdict},
        {"prompt_hash": "p2"},
        {"api_base": "other"},
    ],
)
def test_any_change_to_the_key_is_a_miss(scripted_server, tmp_path, change):
    server = scripted_server([GOOD])
    change = dict(change)
    messages = change.pop("messages", MESSAGES)
    schema = change.pop("schema", Verdict)
    prompt_hash = change.pop("prompt_hash", "p1")
    if change.get("api_base") == "other":
        other = scripted_server([GOOD])
        change["api_base"] = other.base_url

    async def both():
        llm = LLM(CallCache(tmp_path / "cache"))
        await llm.structured(cfg_for(server), MESSAGES, Verdict, prompt_hash="p1")
        _, rec = await llm.structured(cfg_for(server, **change), messages, schema, prompt_hash=prompt_hash)
        return llm, rec

    llm, rec = run(both())
    assert not rec.cached and llm.cache.misses == 2 and llm.cache.hits == 0


def test_refresh_and_no_cache(scripted_server, tmp_path):
    server = scripted_server([GOOD])
    cfg = cfg_for(server)
    run(LLM(CallCache(tmp_path / "c")).structured(cfg, MESSAGES, Verdict))
    _, rec = run(LLM(CallCache(tmp_path / "c", refresh=True)).structured(cfg, MESSAGES, Verdict))
    assert not rec.cached and server.stats.requests == 2
    _, rec = run(LLM(CallCache(tmp_path / "c", enabled=False)).structured(cfg, MESSAGES, Verdict))
    assert not rec.cached and server.stats.requests == 3
    _, rec = run(LLM(CallCache(tmp_path / "c")).structured(cfg, MESSAGES, Verdict))
    assert rec.cached and server.stats.requests == 3


def test_retries_recover_from_429_honouring_retry_after_then_500_then_timeout(scripted_server):
    server = scripted_server([Reply(status=429, retry_after=0.6), Reply(status=500), Reply(hang=2.0), GOOD])
    cfg = cfg_for(server, timeout=0.5, max_attempts=5)
    started = time.perf_counter()
    result, rec = run(LLM().structured(cfg, MESSAGES, Verdict))
    assert result.label == "supported"
    assert server.stats.requests == 4 and rec.attempts == 4
    assert time.perf_counter() - started >= 0.6 + 0.5  # waited the Retry-After, and the timeout
    assert rec.error is None


def test_gives_up_cleanly_with_the_typed_error(scripted_server):
    server = scripted_server([Reply(status=503)])
    cfg = cfg_for(server, max_attempts=3)
    llm = LLM()
    with pytest.raises(LLMCallError) as info:
        run(llm.structured(cfg, MESSAGES, Verdict))
    assert server.stats.requests == 3
    assert info.value.attempts == 3 and "503" in info.value.cause
    assert info.value.record.error and llm.totals.errors == 1


def test_errors_are_never_cached(scripted_server, tmp_path):
    server = scripted_server([Reply(status=500), Reply(status=500), GOOD])
    cfg = cfg_for(server, max_attempts=2)
    with pytest.raises(LLMCallError):
        run(LLM(CallCache(tmp_path / "c")).structured(cfg, MESSAGES, Verdict))
    result, rec = run(LLM(CallCache(tmp_path / "c")).structured(cfg, MESSAGES, Verdict))
    assert not rec.cached and result.label == "supported" and server.stats.requests == 3


def test_invalid_json_is_re_asked_and_every_attempts_tokens_count(scripted_server):
    server = scripted_server([Reply(raw='{"label": "supp'), Reply(raw='{"label": "maybe", "rationale": "x"}'), GOOD])
    cfg = cfg_for(server, validation_retries=2)
    result, rec = run(LLM().structured(cfg, MESSAGES, Verdict))
    assert result.label == "supported"
    assert server.stats.requests == 3 and rec.attempts == 3
    # the second and third requests carry the validation error back to the model
    assert len(server.stats.bodies[1]["messages"]) > len(server.stats.bodies[0]["messages"])
    assert rec.prompt_tokens == server.stats.prompt_tokens and rec.completion_tokens == server.stats.completion_tokens
    assert rec.prompt_tokens > 0


def test_invalid_answers_past_the_re_ask_limit_are_a_typed_error(scripted_server):
    server = scripted_server([Reply(raw="not json at all")])
    cfg = cfg_for(server, validation_retries=1, mode="json_schema")
    with pytest.raises(LLMCallError) as info:
        run(LLM().structured(cfg, MESSAGES, Verdict))
    assert server.stats.requests == 2 and "invalid" in info.value.cause
    assert info.value.record.completion_tokens == server.stats.completion_tokens


def _until_budget(llm, cfg, calls: int = 20) -> int:
    """Calls made one after another until the run's budget refuses one: how many were sent."""
    async def go():
        done = 0
        for i in range(calls):
            try:
                await llm.structured(cfg, [{"role": "user", "content": f"question {i}"}], Verdict)
            except BudgetExceeded:
                return done
            done += 1
        return done

    return asyncio.run(go())


def test_cost_from_price_override_and_the_budget_stops_new_work(scripted_server):
    server = scripted_server(lambda req, n: Reply(body={"label": "supported", "rationale": f"call {n}"}, prompt_tokens=1000, completion_tokens=100))
    cfg = cfg_for(server, price=Price(input_per_million=10.0, output_per_million=20.0), max_tokens=100)
    llm = LLM(max_cost_usd=0.05)
    done = _until_budget(llm, cfg, calls=100)
    per_call = (1000 * 10.0 + 100 * 20.0) / 1e6  # 0.012
    # a call is sent only while what is spent plus its ceiling (each prompt character a token, max_tokens written:
    # 10 * 10 / 1e6 + 100 * 20 / 1e6 = 0.0021) stays within the budget: 4 calls spend 0.048, a 5th could pass 0.05
    assert done == 4
    assert server.stats.requests == 4
    assert llm.totals.cost_usd == pytest.approx(4 * per_call) and llm.totals.cost_usd <= 0.05


def test_unknown_price_is_null_said_once_at_the_end_and_known_prices_come_from_litellm(scripted_server, caplog):
    from judge.llm.cost import unpriced

    server = scripted_server([GOOD])
    with caplog.at_level(logging.WARNING, logger="judge.llm"):
        _, rec1 = run(LLM().structured(cfg_for(server, model="openai/no-such-model-xyz"), MESSAGES, Verdict))
        _, rec2 = run(LLM().structured(cfg_for(server, model="openai/no-such-model-xyz"), [{"role": "user", "content": "b"}], Verdict))
    assert rec1.cost_usd is None and rec2.cost_usd is None
    assert not any("no price known" in r.message for r in caplog.records)  # no line per model while the run goes: one at its end
    assert unpriced(["openai/no-such-model-xyz", "openai/gpt-4o-mini"]) == ["openai/no-such-model-xyz"]
    _, rec3 = run(LLM().structured(cfg_for(server, model="openai/gpt-4o-mini"), MESSAGES, Verdict))
    assert rec3.cost_usd is not None and rec3.cost_usd > 0


def test_peak_concurrency_never_exceeds_the_limit(scripted_server):
    server = scripted_server(lambda req, n: Reply(body={"label": "supported", "rationale": str(n)}, latency=0.15))
    cfg = cfg_for(server, max_concurrency=3)
    llm = LLM()

    async def many():
        return await asyncio.gather(
            *(llm.structured(cfg, [{"role": "user", "content": f"q{i}"}], Verdict) for i in range(12))
        )

    results = run(many())
    assert len(results) == 12
    assert server.stats.peak_concurrency <= 3
    assert server.stats.peak_concurrency >= 2  # it did run calls side by side


def test_429s_shrink_the_models_concurrency_and_successes_grow_it_back(scripted_server):
    def script(req, n):
        if n < 4:
            return Reply(status=429, retry_after=0.05)
        return Reply(body={"label": "supported", "rationale": str(n)}, latency=0.02)

    server = scripted_server(script)
    cfg = cfg_for(server, max_concurrency=8, max_attempts=6)
    llm = LLM()

    async def go():
        await asyncio.gather(*(llm.structured(cfg, [{"role": "user", "content": f"q{i}"}], Verdict) for i in range(4)))
        shrunk = llm.limiter(cfg).limit
        await asyncio.gather(*(llm.structured(cfg, [{"role": "user", "content": f"r{i}"}], Verdict) for i in range(40)))
        return shrunk, llm.limiter(cfg).limit

    shrunk, grown = run(go())
    assert shrunk < 8
    assert grown > shrunk


def test_rpm_pacing_spaces_requests(scripted_server):
    server = scripted_server([GOOD])
    cfg = cfg_for(server, rpm=600, max_concurrency=8)  # one start per 0.1 s
    llm = LLM()
    started = time.perf_counter()

    async def go():
        await asyncio.gather(*(llm.structured(cfg, [{"role": "user", "content": f"q{i}"}], Verdict) for i in range(6)))

    run(go())
    assert time.perf_counter() - started >= 0.5


def test_unreadable_cache_directory_runs_on_without_the_cache(scripted_server, tmp_path, caplog):
    server = scripted_server([GOOD])
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    with caplog.at_level(logging.WARNING, logger="judge.llm"):
        cache = CallCache(blocker / "cache")
    assert not cache.enabled and cache.disabled_reason
    result, rec = run(LLM(cache).structured(cfg_for(server), MESSAGES, Verdict))
    assert result.label == "supported" and not rec.cached
    assert any("running without the cache" in r.message for r in caplog.records)


class _FullDisk:
    """A cache store (diskcache's interface) whose disk fills up: reads miss, every write fails."""

    def get(self, key):
        return None

    def set(self, key, value):
        time.sleep(0.05)  # long enough for the concurrent writes to overlap in their threads
        raise OSError(28, "No space left on device")

    def delete(self, key):
        pass

    def close(self):
        raise OSError(5, "Input/output error")


def test_cache_writes_failing_together_warn_once_and_every_call_still_answers(scripted_server, caplog):
    server = scripted_server([GOOD] * 6)
    cache = CallCache.over(_FullDisk())
    llm = LLM(cache)

    async def go():
        return await asyncio.gather(*(llm.structured(cfg_for(server), [{"role": "user", "content": f"claim {i}"}], Verdict) for i in range(6)))

    with caplog.at_level(logging.WARNING, logger="judge.llm"):
        results = run(go())
        cache.close()
    assert [r.label for r, _ in results] == ["supported"] * 6
    assert not cache.enabled and "No space left on device" in cache.disabled_reason
    assert sum("running without the cache" in r.message for r in caplog.records) == 1


def test_keys_come_from_the_named_environment_variable_and_never_reach_the_cache(scripted_server, tmp_path, monkeypatch):
    canary = "sk-canary-" + "7" * 24
    monkeypatch.setenv("JUDGE_TEST_KEY", canary)
    server = scripted_server([GOOD])
    cfg = cfg_for(server, api_key_env="JUDGE_TEST_KEY")
    run(LLM(CallCache(tmp_path / "c")).structured(cfg, MESSAGES, Verdict))
    assert canary not in cfg.model_dump_json()
    for path in (tmp_path / "c").rglob("*"):
        if path.is_file():
            assert canary.encode() not in path.read_bytes()
    with pytest.raises(ValueError, match="api_key_env"):
        ModelConfig(model="openai/x", api_key=canary)
