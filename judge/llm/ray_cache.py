"""A call cache served by one Ray actor, for clusters whose nodes share no disk.

Workers reach it through :class:`ActorStore` (the get, set and delete :class:`~judge.llm.cache.CallCache` uses,
and an awaitable ``aget``), so the cache's rules stay in one place; the actor stores and hands back the bytes
judge encoded, never unpickling. With shared storage, point ``cache_dir`` at it instead (the default, ``ray.cache:
shared_dir``): the recommendation at scale (bench/README.md, "Ray engine: workers that die").
"""

from __future__ import annotations

ACTOR_THREADS = 16


def create_cache_actor(directory: str):
    """On the driver: the actor serving ``directory`` (diskcache) to every worker."""
    import ray

    @ray.remote(num_cpus=0)
    class CacheActor:
        def __init__(self, directory: str):
            from judge.llm.cache import open_store

            self.cache = open_store(directory)  # bytes in, bytes out: never a pickle (judge.llm.cache.DataDisk)

        def get(self, key: str):
            return self.cache.get(key)

        def set(self, key: str, value) -> None:
            self.cache.set(key, value)

        def delete(self, key: str) -> None:
            self.cache.delete(key)

    return CacheActor.options(max_concurrency=ACTOR_THREADS).remote(directory)


class ActorStore:
    """diskcache's get/set/delete, answered by the cache actor; ``aget`` for callers in an event loop."""

    def __init__(self, actor):
        self._actor = actor

    async def aget(self, key: str):
        return await self._actor.get.remote(key)

    def get(self, key: str):
        import ray

        return ray.get(self._actor.get.remote(key))

    def set(self, key: str, value) -> None:  # called from the port's writer threads
        import ray

        ray.get(self._actor.set.remote(key, value))

    def delete(self, key: str) -> None:
        import ray

        # waited for: the actor runs its calls on several threads, so a delete left running could remove the
        # fresh entry a later set stored under the same key (an untrusted entry dropped, then re-asked and stored)
        ray.get(self._actor.delete.remote(key))

    def close(self) -> None:
        """The actor's cache closes with the actor."""
