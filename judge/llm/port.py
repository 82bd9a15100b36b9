"""The LLM port: every model call of the project goes through :meth:`LLM.structured`: cache look-up -> budget
-> per-model concurrency and pacing -> transport retries (tenacity) around one instructor call through
``litellm.acompletion`` -> cost -> cache. Every request instructor makes (re-asks included) is counted into the
record of the call in progress (a context variable: each concurrent call is its own task).
"""

from __future__ import annotations

import asyncio
import contextvars
import email.utils
import json
import math
import time
from functools import lru_cache
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from judge.llm.cache import CallCache, cache_key
from judge.llm.config import ModelConfig
from judge.llm.cost import call_cost, reported_tokens
from judge.llm.errors import BudgetExceeded, LLMCallError, LLMError
from judge.llm.families import family_of
from judge.llm.limits import ModelLimiter, limit_key
from judge.redact import redact, redact_messages, redact_value
from judge.results import CallRecord, Usage  # the typed results own them; the port fills them

T = TypeVar("T", bound=BaseModel)

MAX_RETRY_AFTER = 60.0  # a server asking for more than this is waited on only this long
_MODES = {"tools": "TOOLS", "json": "JSON", "json_schema": "JSON_SCHEMA", "md_json": "MD_JSON"}


class _Retryable(Exception):
    def __init__(self, cause: BaseException, retry_after: float | None):
        self.cause = cause
        self.retry_after = retry_after


def retry_after_seconds(exc: BaseException) -> float | None:
    """Retry-After (seconds or an HTTP date) or retry-after-ms from the error's response headers."""
    headers = getattr(exc, "litellm_response_headers", None) or getattr(getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    try:
        ms = headers.get("retry-after-ms")
        value = headers.get("retry-after") if ms is None else ms
        if value is None:
            return None
        try:  # "1e9", "inf", 5,000 digits: waited at most the cap
            seconds = float(value) / (1.0 if ms is None else 1000.0) if len(str(value)) <= 40 else math.inf
            return max(0.0, seconds) if not math.isnan(seconds) else None
        except ValueError:
            if ms is not None:
                return None
            return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except Exception:
        return None


def is_transient(exc: BaseException) -> bool:
    """429, 5xx, timeouts and connection errors: worth another attempt."""
    from judge.llm.litellm_setup import litellm

    lm = litellm()
    if isinstance(exc, (asyncio.TimeoutError, lm.Timeout, lm.APIConnectionError)):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


def _masked(response_model: type[T], data: dict) -> T:
    """A model's answer with every configured key's fragment masked before it reaches the cache, the run or the
    next provider; where the mask no longer validates, each masked character becomes '*'."""
    masked = redact_value(data)
    if masked == data:
        return response_model.model_validate(data)
    try:
        return response_model.model_validate(masked)
    except ValueError:
        return response_model.model_validate_json(_star(json.dumps(data, ensure_ascii=False)))


def _star(text: str) -> str:
    from judge.redact import secret_spans

    out, at = [], 0
    for start, end in secret_spans(text):
        out.append(text[at:start] + "*" * (end - start))
        at = end
    return "".join(out) + text[at:]


class LLM:
    """The port. One instance per run: it owns the cache, the per-model limiters and the run totals."""

    def __init__(self, cache: CallCache | None = None, max_cost_usd: float | None = None, on_call=None, limiter_factory=None):
        self.cache = cache or CallCache(None, enabled=False)
        # cfg -> limiter; the Ray engine passes one that reaches a cluster-wide actor per model
        self.limiter_factory = limiter_factory
        self.max_cost_usd = max_cost_usd
        self.totals = Usage()
        self._held = 0.0  # the ceilings of the calls in flight: the budget counts them before they are paid
        self.on_call = on_call  # called with every CallRecord (e.g. to append it to the run's calls.jsonl)
        self._limiters: dict[str, ModelLimiter] = {}

    def limiter(self, cfg: ModelConfig) -> ModelLimiter:
        key = limit_key(cfg)
        if key not in self._limiters:
            make = self.limiter_factory or (lambda c: ModelLimiter(c.max_concurrency, c.rpm, c.tpm))
            self._limiters[key] = make(cfg)
        return self._limiters[key]

    @property
    def budget_left(self) -> bool:
        return self.max_cost_usd is None or self.totals.cost_usd < self.max_cost_usd

    def _account(self, record: CallRecord) -> None:
        self.totals.add_call(record)
        if self.on_call is not None:
            self.on_call(record)

    def key_for(self, cfg: ModelConfig, messages: list[dict], response_model: type[BaseModel], prompt_hash: str, sample: int = 0) -> str:
        extra = {"sample": sample} if sample else {}  # a re-ask is its own call: sample 0 keeps the keys of every cache made before
        if cfg.embedded_name:  # not a local server's (ollama, vLLM): the embedded runtime's own decoding
            from judge.llm.local import DECODING

            extra["decoding"] = DECODING  # what the embedded runtime does to the messages and the schema
        return cache_key(
            **extra,
            model=cfg.model,
            api_base=cfg.api_base,
            messages=messages,
            schema=_schema(response_model),
            mode=cfg.resolved_mode(),
            temperature=cfg.temperature,
            seed=cfg.seed,
            max_tokens=cfg.max_tokens,
            prompt_hash=prompt_hash,
        )

    async def structured(
        self, cfg: ModelConfig, messages: list[dict], response_model: type[T], *, prompt_hash: str = "", keep_truncated: bool = False,
        controls: int = 0,
        sample: int = 0,
    ) -> tuple[T, CallRecord]:
        """A validated ``response_model`` from ``cfg``'s model, and the record of the call.

        ``keep_truncated``: an answer cut at max_tokens is completed as partial JSON and kept (``record.truncated``).
        Raises BudgetExceeded before an uncached call once the budget is spent, LLMCallError (with the record)
        when the retries are spent. ``controls``: control claims the call carries; ``sample`` > 0: the same
        question again as a distinct call (own cache entry, seed moved), to see whether a verdict repeats."""
        cfg.watch_secrets()  # known in this process too (a Ray worker gets the config unpickled, never validated)
        messages = redact_messages(messages)  # no key, in any form, is sent to a provider in a prompt
        if sample and cfg.seed is not None:
            cfg = cfg.model_copy(update={"seed": cfg.seed + sample})
        key = self.key_for(cfg, messages, response_model, prompt_hash, sample)
        record = CallRecord(model=cfg.label, model_id=cfg.model, family=family_of(cfg), cache_key=key, prompt_hash=prompt_hash, controls=controls)
        hit = await self.cache.aget(key, lambda v: (_masked(response_model, v["result"]), bool(v.get("truncated"))))
        if hit is not None:  # an entry that is tampered, undecodable or stale is a miss: called again
            record.cached = True
            record.truncated = hit[1]
            self._account(record)
            return hit[0], record
        if cfg.api_key_env and not cfg.api_key():
            record.error = f"environment variable {cfg.api_key_env} (api_key_env of {cfg.label}) is not set"
            self._account(record)
            raise LLMCallError(cfg.label, record.error, 0, record)
        ceiling = self._ceiling(cfg, messages)
        if not self.budget_left or (self.max_cost_usd is not None and self.totals.cost_usd + self._held + ceiling > self.max_cost_usd):
            raise BudgetExceeded(f"max_cost_usd {self.max_cost_usd} reached (spent {self.totals.cost_usd:.4f}, "
                                 f"{self._held:.4f} held by calls in flight, this call up to {ceiling:.4f})")
        self._held += ceiling
        try:
            return await self._uncached(cfg, messages, response_model, record, key, keep_truncated)
        finally:
            self._held -= ceiling

    def _ceiling(self, cfg: ModelConfig, messages: list[dict]) -> float:
        """The most one attempt of this call can cost: every prompt character a token, and max_tokens written
        (0 where no price is known: such a call never counts against the budget, as after it)."""
        if self.max_cost_usd is None:
            return 0.0
        return call_cost(cfg, sum(len(str(m.get("content", ""))) for m in messages), cfg.max_tokens) or 0.0

    async def _uncached(self, cfg: ModelConfig, messages: list[dict], response_model: type[T], record: CallRecord, key: str,
                        keep_truncated: bool) -> tuple[T, CallRecord]:
        if cfg.embedded_name:
            from judge.llm.local import ensure_registered

            ensure_registered()
        started = time.perf_counter()
        from judge.llm.activity import calling, task_word

        try:
            if cfg.embedded_name:  # the embedded runtime says itself what it does (loading, then ...)
                result = await self._call_with_retries(cfg, messages, response_model, record, keep_truncated)
            else:
                with calling(f"{cfg.label}: {task_word('judging')}"):
                    result = await self._call_with_retries(cfg, messages, response_model, record, keep_truncated)
        except LLMCallError as e:
            record.error = e.cause
            e.record = record
            self._close(cfg, record, started)
            raise
        self._close(cfg, record, started)
        # the same object a cache hit gives, with any key the model echoed masked before it is cached or used
        result = _masked(response_model, result.model_dump())
        if self.cache.enabled:  # the write (a sqlite commit) runs in a thread, so other calls go on meanwhile
            entry = {
                "result": result.model_dump(mode="json"),
                "usage": {"prompt_tokens": record.prompt_tokens, "completion_tokens": record.completion_tokens},
                "cost_usd": record.cost_usd,
                "model": cfg.model,
                "truncated": record.truncated,
            }
            await asyncio.to_thread(self.cache.put, key, entry)
        return result, record

    def _close(self, cfg: ModelConfig, record: CallRecord, started: float) -> None:
        record.latency_s = round(time.perf_counter() - started, 4)
        record.cost_usd = call_cost(cfg, record.prompt_tokens, record.completion_tokens)
        self._account(record)

    async def _call_with_retries(
        self, cfg: ModelConfig, messages: list[dict], response_model: type[T], record: CallRecord, keep_truncated: bool = False
    ) -> T:
        import tenacity

        limiter = self.limiter(cfg)
        backoff = tenacity.wait_random_exponential(multiplier=0.5, max=30)

        def wait(state: tenacity.RetryCallState) -> float:
            """The server's Retry-After, or the backoff; never past max_retry_seconds from the first attempt (a
            Retry-After of 1e9 once waited 60 s with max_retry_seconds: 5)."""
            exc = state.outcome.exception() if state.outcome else None
            if isinstance(exc, _Retryable) and exc.retry_after is not None:
                asked = min(exc.retry_after, MAX_RETRY_AFTER)
            else:
                asked = backoff(state)
            left = cfg.max_retry_seconds - (state.seconds_since_start or 0.0)
            return max(0.0, min(asked, left))

        retrying = tenacity.AsyncRetrying(
            stop=(tenacity.stop_after_attempt(cfg.max_attempts) | tenacity.stop_after_delay(cfg.max_retry_seconds)
                  | tenacity.stop_before_delay(cfg.max_retry_seconds)),  # a wait that would end past the limit is not begun
            wait=wait,
            retry=tenacity.retry_if_exception_type(_Retryable),
            reraise=True,
        )
        estimate = sum(len(str(m.get("content", ""))) for m in messages) // 4 + cfg.max_tokens
        try:
            async for attempt in retrying:
                with attempt:
                    lease = await limiter.acquire(estimate)
                    outcome = "error"
                    try:
                        result = await self._one_attempt(cfg, messages, response_model, record, keep_truncated)
                        outcome = "ok"
                    except _Retryable as e:
                        if getattr(e.cause, "status_code", None) == 429:
                            outcome = "rate_limited"
                        raise
                    finally:  # the slot freed and the outcome told in one step (one message to a cluster-wide limiter)
                        await limiter.finish(outcome, lease)
                    return result
        except _Retryable as e:
            raise LLMCallError(cfg.label, _describe(e.cause), record.attempts) from e.cause
        raise AssertionError("unreachable")  # pragma: no cover

    async def _one_attempt(
        self, cfg: ModelConfig, messages: list[dict], response_model: type[T], record: CallRecord, keep_truncated: bool = False
    ) -> T:
        client = _client(cfg.resolved_mode())
        params: dict[str, Any] = dict(
            model=cfg.model,
            messages=messages,
            response_model=_response_schema(response_model),
            max_retries=cfg.validation_retries,
            temperature=cfg.temperature,
            max_tokens=cfg.max_tokens,
            timeout=cfg.timeout,
            num_retries=0,
        )
        if cfg.seed is not None:
            params["seed"] = cfg.seed
        if cfg.api_base:
            params["api_base"] = cfg.api_base
        key = cfg.api_key()
        if key:
            params["api_key"] = key
        elif cfg.is_local or cfg.api_base:
            params["api_key"] = "no-key"  # local and self-hosted servers take any key; litellm insists on one
        hard_limit = cfg.timeout * (cfg.validation_retries + 1) + 10.0
        counting = _RECORD.set(record)
        try:
            async with asyncio.timeout(hard_limit):  # no extra task per call, as wait_for would make
                return await client.chat.completions.create(**params)
        except Exception as e:
            cause = _unwrap(e)
            kept = _partial(cause, response_model) if keep_truncated else None
            if kept is not None:
                record.truncated = True
                return kept
            if is_transient(cause):
                raise _Retryable(cause, retry_after_seconds(cause)) from cause
            raise LLMCallError(cfg.label, _describe(cause), max(1, record.attempts)) from cause
        finally:
            _RECORD.reset(counting)


_RECORD: contextvars.ContextVar[CallRecord | None] = contextvars.ContextVar("judge_call_record", default=None)


async def _counted_acompletion(*args: Any, **kwargs: Any) -> Any:
    """``litellm.acompletion``, counting each request and its tokens into the call in progress (instructor's
    hooks cost about 2 ms of CPU a call: bench/README)."""
    from judge.llm.litellm_setup import litellm

    record = _RECORD.get()
    if record is not None:
        record.attempts += 1
    response = await litellm().acompletion(*args, **kwargs)
    if record is not None:
        usage = getattr(response, "usage", None)  # a provider's numbers: never negative, never unbounded (cost.reported_tokens)
        record.prompt_tokens += reported_tokens(getattr(usage, "prompt_tokens", 0), "prompt tokens", record.model)
        record.completion_tokens += reported_tokens(getattr(usage, "completion_tokens", 0), "completion tokens", record.model)
    return response


@lru_cache(maxsize=8)
def _client(mode: str):
    """One instructor client per mode, around the counting ``acompletion``."""
    from judge.llm.litellm_setup import instructor

    instr = instructor()
    return instr.from_litellm(_counted_acompletion, mode=getattr(instr.Mode, _MODES[mode]))


@lru_cache(maxsize=256)
def _response_schema(response_model: type[BaseModel]) -> type[BaseModel]:
    """The model wrapped as instructor's ResponseSchema once: instructor wraps it anew on every call, defeating
    its schema cache (about 2 ms of CPU a call); :meth:`LLM.structured` re-validates into ``response_model``."""
    from judge.llm.litellm_setup import instructor

    return instructor().openai_schema(response_model)


@lru_cache(maxsize=256)
def _schema(response_model: type[BaseModel]) -> dict:
    return response_model.model_json_schema()


def _unwrap(exc: BaseException) -> BaseException:
    """The API error inside instructor's retry wrapper, if there is one; our own error (the embedded
    provider's) where litellm wrapped it in an APIConnectionError."""
    seen = 0
    while seen < 5 and type(exc).__name__ in ("InstructorRetryException", "RetryError") and exc.__cause__ is not None:
        exc = exc.__cause__
        seen += 1
    if isinstance(exc.__context__, LLMError):
        return exc.__context__
    return exc


def _partial(exc: BaseException, response_model: type[T]) -> T | None:
    """The answer of a completion cut at max_tokens (instructor's IncompleteOutputException), its JSON
    closed where it stopped; None when it is not that error or the rest does not validate."""
    if type(exc).__name__ != "IncompleteOutputException":
        return None
    from pydantic_core import from_json

    try:
        message = exc.last_completion.choices[0].message
        calls = getattr(message, "tool_calls", None)
        text = calls[0].function.arguments if calls else message.content
        return response_model.model_validate(from_json(text or "", allow_partial="trailing-strings"))
    except (AttributeError, IndexError, TypeError, ValueError):
        return None


def _describe(exc: BaseException) -> str:
    """The one line an error is stored, logged and shown as; secrets are masked before it is cut short."""
    status = getattr(exc, "status_code", None)
    name = type(exc).__name__
    text = redact(str(exc).splitlines()[0]) if str(exc) else ""
    if isinstance(exc, ValidationError):
        return f"invalid answer after re-asking: {exc.error_count()} validation error(s)"
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON after re-asking: {exc.msg}"
    return f"{name}{f' {status}' if status else ''}: {text[:300]}"
