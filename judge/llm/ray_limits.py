"""A cluster-wide limit per model: one named Ray actor holds the model's rpm/tpm budget and adaptive
concurrency (the local engine's :class:`~judge.llm.limits.ModelLimiter`, one rule in one place), so a hundred
workers together never send more than the provider allows; workers reach it through :class:`RayModelLimiter`.

A slot is a **lease** with an owner (one attempt of one batch) and an expiry (docs/runs.md): the driver frees
the leases of an attempt Ray reports lost (``release_owner``), a lease granted to an owner already declared dead
is freed at once, and one held longer than a live attempt can hold it expires.
"""

from __future__ import annotations

import os
import uuid

from judge.llm.config import ModelConfig
from judge.llm.limits import ModelLimiter, limit_key

ACTOR_CONCURRENCY = 10_000  # parked acquire() calls; the limiter itself decides how many proceed
LEASE_MARGIN_S = 30.0  # a lease lives this long beyond the port's hard limit on one attempt
KILL_AT_LEASE_TEST_ENV = "JUDGE_RAY_KILL_AT_LEASE"  # tests: "PATH:N": the first worker to be granted its N-th lease creates PATH, then SIGKILLs itself
_PROCESS_OWNER = f"process-{uuid.uuid4().hex[:12]}"  # owner of leases taken without a named owner (one per process)


def lease_seconds(cfg: ModelConfig) -> float:
    """How long a live attempt can hold a slot: the port cuts one attempt at timeout x (validation retries + 1)
    + 10 s (judge.llm.port); past that plus a margin, the lease's owner is gone."""
    return cfg.timeout * (cfg.validation_retries + 1) + 10.0 + LEASE_MARGIN_S


def _actor_class():
    import ray

    @ray.remote(num_cpus=0)
    class ModelLimitActor:
        def __init__(self, max_concurrency: int, rpm: int | None, tpm: int | None, lease_s: float = 600.0):
            self.limiter = ModelLimiter(max_concurrency, rpm, tpm)
            self.lease_s = lease_s
            self.leases: dict[int, tuple[str, float]] = {}  # lease -> (owner, expiry on the monotonic clock)
            self.dead: set[str] = set()  # owners the driver declared lost
            self.next_lease = 0
            self.started = self.expired = self.reclaimed = 0
            self.sweeper = None

        def _sweep_soon(self) -> None:
            import asyncio

            if self.sweeper is None or self.sweeper.done():
                self.sweeper = asyncio.get_running_loop().create_task(self._sweep())

        async def _sweep(self) -> None:
            """While leases are held, free those past their expiry (checked every second)."""
            import asyncio
            import time

            while self.leases:
                await asyncio.sleep(1.0)
                now = time.monotonic()
                for lease in [k for k, (_, until) in self.leases.items() if until <= now]:
                    self.leases.pop(lease, None)
                    self.expired += 1
                    await self.limiter.release()

        async def acquire(self, owner: str = _PROCESS_OWNER, estimated_tokens: int = 0) -> int | None:
            """Wait for a slot (and the pace); the lease, or None when ``owner`` was declared lost meanwhile."""
            import time

            await self.limiter.acquire(estimated_tokens)
            if owner in self.dead:  # its worker died while this call was parked here: nobody will free it
                await self.limiter.release()
                self.reclaimed += 1
                return None
            self.next_lease += 1
            self.leases[self.next_lease] = (owner, time.monotonic() + self.lease_s)
            self.started += 1
            self._sweep_soon()
            return self.next_lease

        async def finish(self, lease: int | None, outcome: str = "error") -> None:
            """The attempt holding ``lease`` ended: free its slot (once; an expired or reclaimed lease is
            already free) and count its outcome."""
            if lease is None or self.leases.pop(lease, None) is None:
                if outcome == "rate_limited":
                    await self.limiter.rate_limited()
                return
            await self.limiter.finish(outcome)

        async def release(self, owner: str = _PROCESS_OWNER) -> None:
            """Free one slot of ``owner`` (the limiter's plain interface, without a lease)."""
            lease = next((k for k, (o, _) in self.leases.items() if o == owner), None)
            if lease is not None:
                self.leases.pop(lease)
                await self.limiter.release()

        async def release_owner(self, owner: str) -> int:
            """``owner`` is lost (its worker died): free every slot it holds, and any it is granted later."""
            self.dead.add(owner)
            mine = [k for k, (o, _) in self.leases.items() if o == owner]
            for lease in mine:
                self.leases.pop(lease)
                await self.limiter.release()
            self.reclaimed += len(mine)
            return len(mine)

        async def rate_limited(self) -> None:
            await self.limiter.rate_limited()

        async def succeeded(self) -> None:
            await self.limiter.succeeded()

        async def stats(self) -> dict:
            return {"limit": self.limiter.limit, "peak": self.limiter.peak, "started": self.started, "in_flight": self.limiter.in_flight,
                    "held": len(self.leases), "expired": self.expired, "reclaimed": self.reclaimed}

    return ModelLimitActor


def create_limit_actors(models) -> dict:
    """On the driver: one actor per distinct model endpoint of the run, owned by the driver (they end with
    it). The handles travel to the workers, whose ports build :class:`RayModelLimiter` from them."""
    cls = _actor_class()
    actors = {}
    for cfg in models:
        key = limit_key(cfg)
        if key not in actors:
            actors[key] = cls.options(max_concurrency=ACTOR_CONCURRENCY).remote(cfg.max_concurrency, cfg.rpm, cfg.tpm, lease_seconds(cfg))
    return actors


def release_owner(actors: dict, owner: str) -> None:
    """On the driver, when Ray reports the attempt ``owner`` lost: every slot it held, in every model's actor,
    is freed (and any it is granted later). Not waited for."""
    for actor in actors.values():
        actor.release_owner.remote(owner)


class RayModelLimiter:
    """The :class:`ModelLimiter` interface, served by the model's cluster-wide actor, for one owner."""

    def __init__(self, actor, owner: str = _PROCESS_OWNER):
        self._actor = actor
        self.owner = owner

    async def acquire(self, estimated_tokens: int = 0) -> int | None:
        lease = await self._actor.acquire.remote(self.owner, estimated_tokens)
        _kill_at_lease_for_tests()
        return lease

    async def finish(self, outcome: str, lease=None) -> None:
        self._actor.finish.remote(lease, outcome)  # one message, not waited for: the request's one round trip was acquire

    async def release(self) -> None:
        await self._actor.release.remote(self.owner)

    async def rate_limited(self) -> None:
        await self._actor.rate_limited.remote()

    async def succeeded(self) -> None:
        await self._actor.succeeded.remote()

    async def stats(self) -> dict:
        return await self._actor.stats.remote()


def limiter_factory(actors: dict, owner: str = _PROCESS_OWNER):
    """For ``LLM(limiter_factory=...)`` in a worker: the cluster-wide limiter of each model (leases held by
    ``owner``), or the process-local one for a model the driver made no actor for."""

    def make(cfg: ModelConfig):
        actor = actors.get(limit_key(cfg))
        return RayModelLimiter(actor, owner) if actor is not None else ModelLimiter(cfg.max_concurrency, cfg.rpm, cfg.tpm)

    return make


_leases_here = 0
before_kill = []  # tests: callables run before the kill (the call sender drains, so calls already made are counted)


def _kill_at_lease_for_tests() -> None:
    import signal

    global _leases_here
    spec = os.environ.get(KILL_AT_LEASE_TEST_ENV)
    if not spec:
        return
    path, _, n = spec.rpartition(":")
    _leases_here += 1
    if _leases_here != int(n):
        return
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.close(fd)
    for hook in before_kill:
        hook()
    os.kill(os.getpid(), signal.SIGKILL)
