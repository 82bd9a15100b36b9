"""The Ray engine: a cluster-wide limit per model. Skipped where the ``ray`` extra is not installed."""

from __future__ import annotations

import asyncio
import time

import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install -e '.[ray]')")

from judge.llm.config import ModelConfig  # noqa: E402
from judge.llm.ray_limits import create_limit_actors, limiter_factory  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield
    ray.shutdown()


@ray.remote
def _worker(actors, cfg, n):
    async def go():
        limiter = limiter_factory(actors)(cfg)
        stamps = []

        async def one():
            await limiter.acquire(0)
            stamps.append(time.monotonic())
            await asyncio.sleep(0.2)
            await limiter.release()

        await asyncio.gather(*[one() for _ in range(n)])
        return stamps

    return asyncio.run(go())


@pytest.mark.slow
def test_concurrency_and_rate_hold_across_workers(local_ray):
    cfg = ModelConfig(model="openai/scripted", api_base="http://127.0.0.1:9/v1", rpm=600, max_concurrency=2)
    actors = create_limit_actors([cfg, cfg])
    assert len(actors) == 1  # one actor per model endpoint
    stamps = sorted(s for out in ray.get([_worker.remote(actors, cfg, 6) for _ in range(4)]) for s in out)
    # 24 starts at 600 rpm are at least 0.1 s apart: 2.3 s; two at a time for 0.2 s each: 2.2 s.
    assert stamps[-1] - stamps[0] >= 23 * 0.1 - 0.05
    stats = ray.get(next(iter(actors.values())).stats.remote())
    assert stats["peak"] == 2 and stats["started"] == 24
