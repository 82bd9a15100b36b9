"""A cluster-wide limit per model: one named Ray actor holds the model's rpm/tpm budget and adaptive
concurrency, so a hundred workers together never send more than the provider allows.

The actor wraps the same :class:`~judge.llm.limits.ModelLimiter` the local engine uses (one rule, one place);
it is an async actor, so waiting callers park inside it without blocking each other. Workers reach it
through :class:`RayModelLimiter`, which has the limiter's async interface, and the port takes it through
its ``limiter_factory``. Needs the ``ray`` extra; imported only by the Ray engine.
"""

from __future__ import annotations

from judge.llm.config import ModelConfig
from judge.llm.limits import ModelLimiter, limit_key

ACTOR_CONCURRENCY = 10_000  # parked acquire() calls; the limiter itself decides how many proceed


def _actor_class():
    import ray

    @ray.remote(num_cpus=0)
    class ModelLimitActor:
        def __init__(self, max_concurrency: int, rpm: int | None, tpm: int | None):
            self.limiter = ModelLimiter(max_concurrency, rpm, tpm)
            self.started = 0

        async def acquire(self, estimated_tokens: int = 0) -> None:
            await self.limiter.acquire(estimated_tokens)
            self.started += 1

        async def release(self) -> None:
            await self.limiter.release()

        async def rate_limited(self) -> None:
            await self.limiter.rate_limited()

        async def succeeded(self) -> None:
            await self.limiter.succeeded()

        async def stats(self) -> dict:
            return {"limit": self.limiter.limit, "peak": self.limiter.peak, "started": self.started}

    return ModelLimitActor


def create_limit_actors(models) -> dict:
    """On the driver: one actor per distinct model endpoint of the run, owned by the driver (they end with
    it). The handles travel to the workers, whose ports build :class:`RayModelLimiter` from them."""
    cls = _actor_class()
    actors = {}
    for cfg in models:
        key = limit_key(cfg)
        if key not in actors:
            actors[key] = cls.options(max_concurrency=ACTOR_CONCURRENCY).remote(cfg.max_concurrency, cfg.rpm, cfg.tpm)
    return actors


class RayModelLimiter:
    """The :class:`ModelLimiter` interface, served by the model's cluster-wide actor."""

    def __init__(self, actor):
        self._actor = actor

    async def acquire(self, estimated_tokens: int = 0) -> None:
        await self._actor.acquire.remote(estimated_tokens)

    async def release(self) -> None:
        await self._actor.release.remote()

    async def rate_limited(self) -> None:
        await self._actor.rate_limited.remote()

    async def succeeded(self) -> None:
        await self._actor.succeeded.remote()

    async def stats(self) -> dict:
        return await self._actor.stats.remote()


def limiter_factory(actors: dict):
    """For ``LLM(limiter_factory=...)`` in a worker: the cluster-wide limiter of each model, or the
    process-local one for a model the driver made no actor for."""

    def make(cfg: ModelConfig):
        actor = actors.get(limit_key(cfg))
        return RayModelLimiter(actor) if actor is not None else ModelLimiter(cfg.max_concurrency, cfg.rpm, cfg.tpm)

    return make
