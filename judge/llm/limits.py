"""Per-model concurrency and pacing: a semaphore whose size adapts (a 429 halves it, ``GROW_AFTER`` successes
add a slot back), plus rpm and tpm pacing.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque

GROW_AFTER = 5


def limit_key(cfg) -> str:
    """One limit per provider endpoint and model, as the provider counts it."""
    return f"{cfg.model}@{cfg.api_base or ''}"


class ModelLimiter:
    def __init__(self, max_concurrency: int, rpm: int | None = None, tpm: int | None = None):
        self.max_concurrency = max_concurrency
        self.limit = max_concurrency
        self.rpm = rpm
        self.tpm = tpm
        self.in_flight = 0
        self.peak = 0
        self._cond = asyncio.Condition()
        self._next_start = 0.0
        self._tokens: deque[tuple[float, int]] = deque()
        self._successes = 0

    async def acquire(self, estimated_tokens: int = 0) -> None:
        async with self._cond:
            try:
                await self._cond.wait_for(lambda: self.in_flight < self.limit)
            except asyncio.CancelledError:
                self._cond.notify(1)  # a wake-up this waiter may have taken goes to the next one
                raise
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            await self._pace(estimated_tokens)
        except BaseException:
            await self.release()
            raise

    async def _pace(self, estimated_tokens: int) -> None:
        if self.rpm:
            now = time.monotonic()
            start = max(now, self._next_start)
            self._next_start = start + 60.0 / self.rpm
            if start > now:
                await asyncio.sleep(start - now)
        if self.tpm:
            while True:
                now = time.monotonic()
                while self._tokens and now - self._tokens[0][0] >= 60.0:
                    self._tokens.popleft()
                used = sum(n for _, n in self._tokens)
                if not self._tokens or used + estimated_tokens <= self.tpm:
                    break
                await asyncio.sleep(max(0.01, 60.0 - (now - self._tokens[0][0])))
            self._tokens.append((time.monotonic(), estimated_tokens))

    async def release(self) -> None:
        async with self._cond:
            self.in_flight -= 1
            self._cond.notify(1)  # one slot freed, one waiter woken (notify_all woke every queued call)

    async def rate_limited(self) -> None:
        async with self._cond:
            self.limit = max(1, self.limit // 2)
            self._successes = 0

    async def succeeded(self) -> None:
        async with self._cond:
            self._successes += 1
            if self.limit < self.max_concurrency and self._successes >= GROW_AFTER:
                self.limit += 1
                self._successes = 0
                self._cond.notify(1)

    async def finish(self, outcome: str, lease=None) -> None:
        """The end of one attempt: ``outcome`` "ok", "rate_limited" (the limit halves before the slot is freed)
        or "error"; ``lease``: what :meth:`acquire` returned (used by the cluster-wide limiter only)."""
        if outcome == "rate_limited":
            await self.rate_limited()
        await self.release()
        if outcome == "ok":
            await self.succeeded()
