"""The Ray engine's shared actors at full speed: how many requests a second one model's limiter actor grants
(acquire awaited, its end one message not waited for, as the port does now; and the three awaited round
trips of before), and how many look-ups and writes the cache actor serves.

    python bench/ray_actor_bench.py [--callers 2] [--requests 2000] [--in-flight 64]

A local Ray; ``--callers`` tasks (one per worker process) each drive ``--requests`` requests with up to
``--in-flight`` at once, with no limit that binds (max_concurrency above the in-flight total, no rpm), so what
is timed is the actor.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def limiter_caller(actors, cfg, n: int, in_flight: int, old: bool) -> float:
    from judge.llm.ray_limits import limiter_factory

    async def go():
        limiter = limiter_factory(actors, f"bench-{os.getpid()}")(cfg)
        gate = asyncio.Semaphore(in_flight)

        async def one():
            async with gate:
                if old:  # before: acquire, release and succeeded, each awaited
                    await limiter.acquire(0)
                    await limiter.release()
                    await limiter.succeeded()
                else:
                    lease = await limiter.acquire(0)
                    await limiter.finish("ok", lease)

        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(n)))
        return time.perf_counter() - started

    return asyncio.run(go())


def cache_caller(actor, n: int, in_flight: int) -> tuple[float, float]:
    from judge.llm.ray_cache import ActorStore

    store = ActorStore(actor)

    async def go():
        gate = asyncio.Semaphore(in_flight)
        value = {"result": {"verdicts": [{"claim_id": "1", "label": "supported"}] * 3}, "usage": {"prompt_tokens": 900}}

        async def put(i):
            async with gate:
                await asyncio.to_thread(store.set, f"{os.getpid()}-{i}", value)

        async def get(i):
            async with gate:
                await store.aget(f"{os.getpid()}-{i}")

        t = time.perf_counter()
        await asyncio.gather(*(put(i) for i in range(n)))
        put_s = time.perf_counter() - t
        t = time.perf_counter()
        await asyncio.gather(*(get(i) for i in range(n)))
        return put_s, time.perf_counter() - t

    return asyncio.run(go())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--callers", type=int, default=2)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--in-flight", type=int, default=64)
    args = ap.parse_args()
    import ray

    from judge.llm.config import ModelConfig
    from judge.llm.ray_cache import create_cache_actor
    from judge.llm.ray_limits import create_limit_actors

    ray.init(num_cpus=args.callers, include_dashboard=False, log_to_driver=False, logging_level="ERROR", _node_ip_address="127.0.0.1",
             runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}})
    cfg = ModelConfig(model="openai/bench", api_base="http://127.0.0.1:9/v1", max_concurrency=100_000)
    total = args.callers * args.requests
    for label, old in (("before: 3 awaited round trips", True), ("now: 1 awaited round trip + 1 message", False)):
        actors = create_limit_actors([cfg])
        task = ray.remote(num_cpus=1)(limiter_caller)
        ray.get([task.remote(actors, cfg, 50, 8, old) for _ in range(args.callers)])  # warm the workers
        t = time.perf_counter()
        ray.get([task.remote(actors, cfg, args.requests, args.in_flight, old) for _ in range(args.callers)])
        wall = time.perf_counter() - t
        print(f"limiter, {label}: {total} requests from {args.callers} workers in {wall:.2f} s = {total / wall:,.0f} requests/s")
        for a in actors.values():
            ray.kill(a)
    with tempfile.TemporaryDirectory() as tmp:
        actor = create_cache_actor(tmp)
        task = ray.remote(num_cpus=1)(cache_caller)
        ray.get([task.remote(actor, 50, 8) for _ in range(args.callers)])
        t = time.perf_counter()
        times = ray.get([task.remote(actor, args.requests, args.in_flight) for _ in range(args.callers)])
        wall = time.perf_counter() - t
        put_s, get_s = max(p for p, _ in times), max(g for _, g in times)
        print(f"cache actor (16 threads, diskcache): {total} writes in {put_s:.2f} s = {total / put_s:,.0f}/s; "
              f"{total} look-ups in {get_s:.2f} s = {total / get_s:,.0f}/s (wall {wall:.1f} s)")
    ray.shutdown()


if __name__ == "__main__":
    main()
