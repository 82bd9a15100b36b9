"""The Ray engine: records go to Ray tasks in batches; each worker runs the same per-record pipeline with its
own LLM port; results stream back to the driver, the only writer of results.jsonl and calls.jsonl, so resume,
merge, scoring and reports are the local engine's.

What the cluster shares: one limiter actor per model endpoint (judge.llm.ray_limits), so the rpm/tpm budget and
the adaptive concurrency hold across every worker; and the call cache, either the diskcache directory on shared
storage (the default: ``cache_dir`` must be reachable from every node) or, with ``ray.cache: actor``, one actor
serving the driver node's diskcache to all workers. A worker killed mid-batch: Ray retries the task elsewhere;
the driver writes a batch only once it has returned, so every record appears once.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Iterable

from judge.llm import BudgetExceeded, CallCache
from judge.models import Answer, Record
from judge.results import RecordResult
from judge.runs.config import RunConfig

KILL_ONCE_TEST_ENV = "JUDGE_RAY_KILL_ONCE"  # tests: a path; the first worker to start a batch creates it and SIGKILLs itself
TASK_RETRIES = 3  # a task whose worker died is re-run this many times before the run gives up on its records


class RayUnavailable(RuntimeError):
    """Ray is not installed or the cluster cannot be reached: refused before any record."""


def connect(address: str | None) -> None:
    """``ray.init`` on ``address`` (None: a local Ray on this machine), or a clear RayUnavailable."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable("engine ray needs the ray extra: pip install 'judge[ray]' (or pip install -e '.[ray]')") from None
    if ray.is_initialized():
        return
    if address and address != "auto":
        from judge.llm.preflight import server_problem

        url = address if "://" in address else f"tcp://{address}"
        problem = server_problem(url, timeout=3.0)
        if problem:  # ray.init would retry for minutes
            raise RayUnavailable(f"cannot reach the Ray cluster at {address}: {problem}")
    runtime_env = None
    if address is None:  # a local Ray: its workers import this very judge package, not another install
        import os
        from pathlib import Path

        here = str(Path(__file__).resolve().parents[2])
        runtime_env = {"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)}}
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True,
                 logging_level="ERROR", runtime_env=runtime_env)
    except Exception as e:  # ConnectionError, TimeoutError, ValueError from a bad address
        where = address or "a local Ray instance"
        raise RayUnavailable(f"cannot reach the Ray cluster at {where}: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None


def run_models(config: RunConfig):
    """Every model config a run may call (models under test, the decomposer, the LLM judges)."""
    return [config.models[n] for n in sorted(set(config.called_model_names()))]


def _kill_once_for_tests() -> None:
    import os
    import signal

    marker = os.environ.get(KILL_ONCE_TEST_ENV)
    if marker:
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return
        os.close(fd)
        os.kill(os.getpid(), signal.SIGKILL)


def _process_batch(config: RunConfig, records: list[Record], recorded: dict[str, list[Answer]] | None, actors: dict,
                   cache_actor, use_cache: bool, refresh: bool, controls=None) -> tuple[list[str], list, int, int]:
    """One batch on a worker: the pipeline with a port whose limits are the cluster's. Returns the results'
    JSON lines, the calls made, and the cache's hits and misses."""
    from judge.llm.ray_limits import limiter_factory
    from judge.pipeline import build_pipeline, process_record

    _kill_once_for_tests()

    if cache_actor is not None:
        from judge.llm.ray_cache import ActorStore

        cache = CallCache.over(ActorStore(cache_actor), refresh=refresh) if use_cache else CallCache(None, enabled=False)
    else:
        cache = CallCache(config.cache_dir, enabled=use_cache, refresh=refresh)
    pipeline = build_pipeline(config, recorded, cache)
    pipeline.controls = controls  # the run's control plan, made once by the driver from all its records
    calls: list = []
    pipeline.llm.limiter_factory = limiter_factory(actors)
    pipeline.llm.on_call = calls.append

    async def go():
        slots = asyncio.Semaphore(config.record_concurrency)

        async def one(record):
            async with slots:
                return await process_record(pipeline, record)

        return await asyncio.gather(*(one(r) for r in records))

    try:
        results = asyncio.run(go())
    finally:
        cache.close()
    return [r.model_dump_json() for r in results], calls, cache.hits, cache.misses


def run_items_ray(*args, **kwargs) -> str | None:
    """The Ray counterpart of the local engine's queue: returns why it stopped early, if it did. Ray's own
    notices (a worker died, a task is retried) go to stderr, so ``--json`` output stays parseable."""
    import contextlib
    import sys

    with contextlib.redirect_stdout(sys.stderr):
        return _run_batches(*args, **kwargs)


def _run_batches(
    config: RunConfig,
    records: Iterable[Record],
    recorded: dict[str, list[Answer]] | None,
    store,
    cache: CallCache,
    *,
    on_result: Callable[[RecordResult], None] | None = None,
    use_cache: bool = True,
    refresh: bool = False,
    controls=None,
) -> str | None:
    import ray

    from judge.llm.ray_limits import create_limit_actors

    connect(config.ray.address)
    batch_size = config.ray.batch_size
    actors = create_limit_actors(run_models(config))
    cache_actor = None
    if config.ray.cache == "actor" and use_cache:
        from judge.llm.ray_cache import create_cache_actor

        cache_actor = create_cache_actor(config.cache_dir)
    task = ray.remote(num_cpus=1, max_retries=TASK_RETRIES, retry_exceptions=False)(_process_batch)
    source = iter(records)  # a stream: batches are cut from it as tasks are submitted, so only those in flight are held
    workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
    config_ref = ray.put(config)
    controls_ref = ray.put(controls)
    pending: dict = {}  # task -> how many records it holds
    stopped: str | None = None
    spent = 0.0
    started = time.perf_counter()
    sent = batches = 0

    def submit() -> bool:
        nonlocal sent, batches
        batch = list(itertools.islice(source, batch_size))
        if not batch:
            return False
        answers = {r.id: recorded[r.id] for r in batch if r.id in recorded} if recorded is not None else None
        ref = task.remote(config_ref, batch, answers, actors, cache_actor, use_cache, refresh, controls_ref)
        pending[ref] = len(batch)
        sent, batches = sent + len(batch), batches + 1
        return True

    more = True
    while more and len(pending) < 2 * workers:
        more = submit()
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        ref = done[0]
        size = pending.pop(ref)
        try:
            lines, calls, hits, misses = ray.get(ref)
        except Exception as e:  # the task failed after its retries: its records stay unfinished (resume redoes them)
            cause = getattr(e, "cause", None) or e
            if isinstance(cause, BudgetExceeded):
                stopped = stopped or str(cause)
            else:
                store.log(f"ray batch of {size} records failed: {type(cause).__name__}: {str(cause)[:300]}")
                stopped = stopped or f"a Ray batch failed after {TASK_RETRIES} retries: {type(cause).__name__}"
            continue
        for call in calls:
            store.append_call(call)
            spent += call.cost_usd or 0.0
        cache.hits += hits
        cache.misses += misses
        for line in lines:
            result = RecordResult.model_validate_json(line)
            store.append(result)
            if on_result:
                on_result(result)
        if config.max_cost_usd is not None and spent >= config.max_cost_usd and more:
            stopped = stopped or f"max_cost_usd {config.max_cost_usd} reached across the cluster; no new batch is started"
            store.log(stopped)
            more = False
        if more:
            more = submit()
    store.log(f"ray: {sent} records in {batches} batches on {workers} CPUs in {time.perf_counter() - started:.1f} s")
    return stopped
