"""A call cache served by one Ray actor, for clusters whose nodes share no disk.

The actor holds a diskcache directory on its own node; workers reach it through :class:`ActorStore`, which
has the three methods :class:`~judge.llm.cache.CallCache` uses of diskcache (get, set, delete), so the
cache's rules (digest check, errors never stored, a bad entry re-asked) stay in one place. With shared storage,
point ``cache_dir`` at it instead: diskcache is safe across processes and nodes on one filesystem.
"""

from __future__ import annotations


def create_cache_actor(directory: str):
    """On the driver: the actor serving ``directory`` (diskcache) to every worker."""
    import ray

    @ray.remote(num_cpus=0)
    class CacheActor:
        def __init__(self, directory: str):
            import diskcache

            self.cache = diskcache.Cache(directory, size_limit=2**34)

        def get(self, key: str):
            return self.cache.get(key)

        def set(self, key: str, value) -> None:
            self.cache.set(key, value)

        def delete(self, key: str) -> None:
            self.cache.delete(key)

    return CacheActor.options(max_concurrency=1).remote(directory)


class ActorStore:
    """diskcache's get/set/delete, answered by the cache actor."""

    def __init__(self, actor):
        self._actor = actor

    def get(self, key: str):
        import ray

        return ray.get(self._actor.get.remote(key))

    def set(self, key: str, value) -> None:
        import ray

        ray.get(self._actor.set.remote(key, value))

    def delete(self, key: str) -> None:
        import ray

        ray.get(self._actor.delete.remote(key))

    def close(self) -> None:
        """The actor's cache closes with the actor."""
