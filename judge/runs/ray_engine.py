"""The Ray engine: records go to Ray tasks in batches; each worker runs the same per-record pipeline with its
own LLM port; results stream back to the driver, the only writer of results.jsonl and calls.jsonl, so resume,
merge, scoring and reports are the local engine's.

What the cluster shares: one limiter actor per model endpoint (judge.llm.ray_limits), so the rpm/tpm budget and
the adaptive concurrency hold across every worker; the call cache, either the diskcache directory on shared
storage (the default: ``cache_dir`` must be reachable from every node) or, with ``ray.cache: actor``, one actor
serving the driver node's diskcache to all workers; and a call sink, an actor that takes every call record the
moment its call ends (a worker's records go in one message while the previous one is under way), which the
driver drains into calls.jsonl and the spend as it waits, so the calls of an attempt that dies count too.

Surviving workers: each attempt at a batch is named (its lease owner). When Ray reports an attempt lost (its
worker or node died), the driver frees every limiter slot that attempt held and submits the batch again (up to
TASK_RETRIES times); the driver writes a batch only once it has returned, so every record appears once. A worker
never waits on Ray inside its event loop: limiter, cache and sink are awaited.

The driver: one pass over the records while it submits (the ids come from the input index), results written
a batch at a time as the worker serialised them (parsed only for a progress callback), results.jsonl fsynced in
groups (judge.runs.store).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from judge.llm import BudgetExceeded, CallCache
from judge.models import Answer, Record
from judge.raylib import connect
from judge.results import RecordResult
from judge.config import RunConfig

KILL_ONCE_TEST_ENV = "JUDGE_RAY_KILL_ONCE"  # tests: a path; the first worker to start a batch creates it and SIGKILLs itself
TASK_RETRIES = 3  # a batch whose worker died is submitted again this many times before the run gives up on its records
WAIT_S = 1.0  # the driver drains the call sink at least this often while batches run


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


# -- the call sink: every call record reaches the driver as its call ends ------------------------------------------
def create_call_sink():
    import ray

    @ray.remote(num_cpus=0)
    class CallSink:
        def __init__(self):
            self.lines: list[str] = []

        async def add(self, lines: list[str]) -> None:
            self.lines.extend(lines)

        async def drain(self) -> list[str]:
            out, self.lines = self.lines, []
            return out

    return CallSink.options(max_concurrency=1000).remote()


class CallSender:
    """A worker port's ``on_call``: each call record (as JSON) goes to the driver's call sink when its call ends;
    records that end while a message is under way go together in the next one, so a worker has at most one
    message in flight and a busy one sends batches."""

    def __init__(self, sink):
        self.sink = sink
        self.buffer: list[str] = []
        self.task: asyncio.Task | None = None
        self.in_flight: set = set()

    def __call__(self, record) -> None:
        self.buffer.append(record.model_dump_json())
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._send())

    async def _send(self) -> None:
        while self.buffer:
            lines, self.buffer = self.buffer, []
            ref = self.sink.add.remote(lines)
            self.in_flight.add(ref)
            try:
                await ref
            finally:
                self.in_flight.discard(ref)

    async def drain(self) -> None:
        """Until every record so far has reached the sink (a batch returns only after this)."""
        while self.buffer or (self.task is not None and not self.task.done()):
            if self.task is None or self.task.done():
                self.task = asyncio.get_running_loop().create_task(self._send())
            await self.task

    def drain_now(self) -> None:
        """The same, blocking (tests: before a worker kills itself; the loop is about to end with the process)."""
        import ray

        if self.buffer:
            self.in_flight.add(self.sink.add.remote(self.buffer))
            self.buffer = []
        ray.get(list(self.in_flight))


# -- one batch on a worker -------------------------------------------------------------------------------------------
def _process_batch(config: RunConfig, records: list[Record], recorded: dict[str, list[Answer]] | None, actors: dict,
                   cache_actor, sink, owner: str, use_cache: bool, refresh: bool, controls=None) -> tuple[list[str], int, int]:
    """One batch on a worker: the pipeline with a port whose limits are the cluster's (leases held by ``owner``)
    and whose call records go to ``sink`` as they end. Returns the results' JSON lines, and the cache's hits
    and misses."""
    from judge.llm import ray_limits
    from judge.pipeline import build_pipeline, process_record

    _kill_once_for_tests()

    if cache_actor is not None:
        from judge.llm.ray_cache import ActorStore

        cache = CallCache.over(ActorStore(cache_actor), refresh=refresh) if use_cache else CallCache(None, enabled=False)
    else:
        cache = CallCache(config.cache_dir, enabled=use_cache, refresh=refresh)
    pipeline = build_pipeline(config, recorded, cache)
    pipeline.controls = controls  # the run's control plan, made once by the driver from all its records
    pipeline.llm.limiter_factory = ray_limits.limiter_factory(actors, owner)

    async def go():
        sender = CallSender(sink)
        pipeline.llm.on_call = sender
        ray_limits.before_kill[:] = [sender.drain_now]
        slots = asyncio.Semaphore(config.record_concurrency)

        async def one(record):
            async with slots:
                return await process_record(pipeline, record)

        try:
            return await asyncio.gather(*(one(r) for r in records))
        finally:
            await sender.drain()

    try:
        results = asyncio.run(go())
    finally:
        cache.close()
    return [r.model_dump_json() for r in results], cache.hits, cache.misses


def run_items_ray(*args, **kwargs) -> str | None:
    """The Ray counterpart of the local engine's queue: returns why it stopped early, if it did. Ray's own
    notices (a worker died, a task is retried) go to stderr, so ``--json`` output stays parseable."""
    import contextlib
    import sys

    with contextlib.redirect_stdout(sys.stderr):
        return _run_batches(*args, **kwargs)


@dataclass
class _Batch:
    records: object  # an ObjectRef of the batch's records (put once: a retry sends the same)
    answers: object  # an ObjectRef of their recorded answers, or None
    size: int
    number: int
    attempt: int = 0

    @property
    def owner(self) -> str:
        return f"batch-{self.number}-attempt-{self.attempt}"


def _lost(e: BaseException) -> bool:
    """Ray lost the attempt (its worker or node died, its objects went with it), as opposed to an error raised by
    the batch's own code."""
    import ray.exceptions as rx

    kinds = tuple(getattr(rx, n) for n in ("WorkerCrashedError", "NodeDiedError", "LocalRayletDiedError", "ObjectLostError", "OwnerDiedError")
                  if hasattr(rx, n))
    return isinstance(e, kinds)


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

    from judge.results import CallRecord
    from judge.llm.ray_limits import create_limit_actors, release_owner

    connect(config.ray.address)
    batch_size = config.ray.batch_size
    actors = create_limit_actors(run_models(config))
    cache_actor = None
    if config.ray.cache == "actor" and use_cache:
        from judge.llm.ray_cache import create_cache_actor

        cache_actor = create_cache_actor(config.cache_dir)
    sink = create_call_sink()
    task = ray.remote(num_cpus=1, max_retries=0)(_process_batch)  # the driver retries, knowing which attempt was lost
    source = iter(records)  # a stream: batches are cut from it as tasks are submitted, so only those in flight are held
    workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
    config_ref = ray.put(config)
    controls_ref = ray.put(controls)
    pending: dict = {}  # task -> its _Batch
    stopped: str | None = None
    spent = 0.0
    started = time.perf_counter()
    sent = batches = retried = calls = 0

    def launch(batch: _Batch) -> None:
        ref = task.remote(config_ref, batch.records, batch.answers, actors, cache_actor, sink, batch.owner, use_cache, refresh, controls_ref)
        pending[ref] = batch

    def submit() -> bool:
        nonlocal sent, batches
        chunk = list(itertools.islice(source, batch_size))
        if not chunk:
            return False
        answers = {r.id: recorded[r.id] for r in chunk if r.id in recorded} if recorded is not None else None
        batches += 1
        launch(_Batch(ray.put(chunk), ray.put(answers) if answers is not None else None, len(chunk), batches))
        sent += len(chunk)
        return True

    def drain_calls() -> None:
        nonlocal spent, calls
        lines = ray.get(sink.drain.remote())
        if lines:
            store.append_call_lines(lines)
            for line in lines:
                spent += CallRecord.model_validate_json(line).cost_usd or 0.0
            calls += len(lines)

    more = True
    while more and len(pending) < 2 * workers:
        more = submit()
    while pending:
        ready, rest = ray.wait(list(pending), num_returns=1, timeout=WAIT_S)
        if ready and rest:
            ready += ray.wait(rest, num_returns=len(rest), timeout=0)[0]
        drain_calls()  # before the results: a batch's calls are in the sink by the time it returns
        for ref in ready:
            batch = pending.pop(ref)
            try:
                lines, hits, misses = ray.get(ref)
            except Exception as e:
                release_owner(actors, batch.owner)  # its slots, in every model's limiter
                cause = getattr(e, "cause", None) or e
                if _lost(e) and batch.attempt < TASK_RETRIES:
                    store.log(f"ray: batch {batch.number} ({batch.size} records) lost with its worker ({type(e).__name__}); "
                              f"its slots freed, submitted again (attempt {batch.attempt + 2})")
                    batch.attempt += 1
                    retried += 1
                    launch(batch)
                elif isinstance(cause, BudgetExceeded):  # a worker's port reached the budget: no new batch either
                    stopped = stopped or str(cause)
                    more = False
                else:  # the batch failed for good: its records stay unfinished (resume redoes them)
                    store.log(f"ray batch of {batch.size} records failed: {type(cause).__name__}: {str(cause)[:300]}")
                    stopped = stopped or (f"a Ray batch failed after {TASK_RETRIES} retries: {type(cause).__name__}" if _lost(e)
                                          else f"a Ray batch failed: {type(cause).__name__}")
                continue
            cache.hits += hits
            cache.misses += misses
            store.append_lines(lines)  # one write for the batch, as the worker serialised it
            if on_result:
                for line in lines:
                    on_result(RecordResult.model_validate_json(line))
        if config.max_cost_usd is not None and spent >= config.max_cost_usd and more:
            stopped = stopped or f"max_cost_usd {config.max_cost_usd} reached across the cluster; no new batch is started"
            store.log(stopped)
            more = False
        while more and len(pending) < 2 * workers:
            more = submit()
    drain_calls()
    store.sync()
    store.log(f"ray: {sent} records in {batches} batches ({retried} resubmitted after a lost worker) on {workers} CPUs, "
              f"{calls} calls, in {time.perf_counter() - started:.1f} s")
    return stopped
