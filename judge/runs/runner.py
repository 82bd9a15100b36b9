"""The main job's orchestration: which records, in which run directory, how many at once, and the finish.

The work on one record is judge.pipeline's. Records are independent: they run concurrently
(``record_concurrency``), each result is appended the moment its record finishes, ``--resume`` skips what is
finished, and ``--shard i/n`` takes every n-th record.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Iterable, Sized
from pathlib import Path
from typing import Awaitable, Callable

from judge.controls.mix import ControlPlan
from judge.llm import BudgetExceeded, CallCache
from judge.llm.preflight import require
from judge.llm.weights import assemble_ahead
from judge.pipeline import build_pipeline, process_record
from judge.results import RecordResult
from judge.runs import trust
from judge.runs.calibration import adopt, read_calibration
from judge.config import RunConfig
from judge.runs.inputs import dataset_records, recorded_answers
from judge.runs.selection import Selection, ToDo, select, stream_todo
from judge.runs.store import RunDirError, RunStore
from judge.runs.summary import RunState, Summary, summarize


def load_inputs(config: RunConfig):
    """The records (a RecordStream: checked when opened, read from disk on each pass) and the recorded
    answers by record id (RecordedAnswers: an on-disk index), or None when the models under test answer."""
    records = dataset_records(config)
    return records, recorded_answers(config, records)


ENGINE_FIELDS = {"engine", "ray", "max_error_rate", "thresholds", "calibration", "require"}  # how records are run or gated, not what they give: a
# run may resume on another engine, or with another tolerance


def config_hash(config: RunConfig) -> str:
    return hashlib.sha256(config.model_dump_json(exclude=ENGINE_FIELDS).encode()).hexdigest()[:16]


async def run_items(
    items: Iterable,
    work: Callable[[object], Awaitable[RecordResult]],
    store: RunStore,
    concurrency: int,
    on_result: Callable[[RecordResult], None] | None = None,
) -> str | None:
    """Process items concurrently, appending each result as it finishes. ``items`` may be a stream: each worker
    takes the next item when it is free, so only the items being worked on are held. Returns why it stopped
    early, if it did."""
    source = iter(items)
    stopped: list[str] = []
    end = object()

    async def worker():
        while not stopped:
            item = next(source, end)
            if item is end:
                return
            try:
                result = await work(item)
            except BudgetExceeded as e:
                stopped.append(str(e))
                store.log(f"budget reached: {e}; no new work is started")
                return
            store.append(result)
            if on_result:
                on_result(result)

    workers = min(concurrency, max(1, len(items))) if isinstance(items, Sized) else concurrency
    await asyncio.gather(*(worker() for _ in range(workers)))
    return stopped[0] if stopped else None


def drive(
    store: RunStore,
    items: Iterable,
    work: Callable[[object], Awaitable[RecordResult]],
    order: list[str],
    config: RunConfig,
    cache: CallCache,
    on_result: Callable[[RecordResult], None] | None = None,
    started: float | None = None,
    remote: Callable[[], str | None] | None = None,
) -> Summary:
    """Work through ``items`` into the store, close the cache, put the results in ``order``, write the summary
    (with the wall time added to the manifest when ``started``, a perf_counter reading, is given). ``remote``,
    when given, does the work elsewhere (the Ray engine) and returns why it stopped early, if it did."""
    try:
        if remote is not None:
            stopped = remote()
        else:
            stopped = asyncio.run(run_items(items, work, store, config.record_concurrency, on_result))
    finally:
        cache.close()
    try:
        if started is not None:
            store.update_manifest(wall_seconds=round(store.manifest().get("wall_seconds", 0.0) + time.perf_counter() - started, 3))
        return finish(store, order, config, cache, stopped)
    finally:
        store.unlock()


def finish(store: RunStore, order: list[str], config: RunConfig, cache: CallCache, stopped: str | None) -> Summary:
    """Results in dataset order, and the summary written beside them."""
    finished = store.rewrite_in_order(order)
    manifest = store.manifest()
    manifest.pop("records_selected", None)  # the summary counts its own (a run written before holds the ids there)
    summary = summarize(store.iter_finished(), manifest, config, store.usage())
    summary = adopt(summary, config, manifest)  # the judges' calibration (judge calibrate), where the setup is the one calibrated
    summary = trust.apply(store, summary, config, manifest, lambda rs: adopt(summarize(rs, manifest, config, store.usage()), config, manifest))
    summary = summary.model_copy(update={"run": RunState.model_validate({
        "records_selected": len(order),
        "records_finished": finished,
        "complete": finished == len(order),
        "stopped_early": stopped,
        "cache": {"enabled": cache.enabled, "hits": cache.hits, "misses": cache.misses, "disabled_reason": cache.disabled_reason},
    })})
    store.write_summary(summary)
    return summary


def execute(
    config: RunConfig,
    *,
    runs_root: Path = Path("runs"),
    name: str | None = None,
    resume: Path | None = None,
    shard: tuple[int, int] | None = None,
    use_cache: bool = True,
    refresh: bool = False,
    on_start: Callable[[int, int], None] | None = None,
    on_result: Callable[[RecordResult], None] | None = None,
) -> tuple[RunStore, Summary]:
    """Run (or resume) a config; returns the run directory and its summary."""
    if config.engine == "ray":
        from judge.raylib import connect

        connect(config.ray.address)  # Ray missing or the cluster unreachable: refused before any record
    if config.calibration:  # a bad calibration file (a floor outside [0, 1], not JSON, a device) is refused before any call (issue 50.10)
        read_calibration(config.calibration)
    records, recorded = load_inputs(config)
    cache = CallCache(config.cache_dir, enabled=use_cache, refresh=refresh)
    pipeline = build_pipeline(config, recorded, cache)  # the cross-family rule, before any call
    require(config.model(n) for n in config.called_model_names())  # no key, no extra, no server: refused now
    if resume is not None:
        store = RunStore.open(resume, lock=True)  # a second --resume of it is refused while this one runs
        manifest = store.manifest()
        store.config()  # the run's own config.yaml is read at the end: refused now, before a line is written
        if manifest.get("config_hash") != config_hash(config):
            raise RunDirError(
                f"{resume} was made with another config (hash {manifest.get('config_hash')}; this one is "
                f"{config_hash(config)}): resume it with the config, --limit and --shard it was started with"
            )
        before = {k: v for k, v in (manifest.get("prompts") or {}).items() if k.startswith("answer:")}
        now = {k: v.hash for k, v in pipeline.prompts.items() if k.startswith("answer:")}
        if before != now:  # an edited prompt variant: its answers would mix two prompts under one label
            changed = sorted(k.split(":", 1)[1] for k in set(before) | set(now) if before.get(k) != now.get(k))
            raise RunDirError(f"{resume} was started with other prompt variants or templates ({', '.join(changed)} changed since): "
                              "start a new run for the edited prompts")
        run_shard = manifest.get("shard")
        del manifest
        selection = Selection.of(store, lambda: select(records, config.limit, tuple(run_shard) if run_shard else None))  # the run's own records
        pipeline.llm.on_call = store.append_call
    else:
        meta = {
            "name": name or config.name,
            "config_hash": config_hash(config),
            "shard": list(shard) if shard else None,
            "prompts": {k: v.hash for k, v in pipeline.prompts.items()},
            "same_family_clashes": pipeline.family_clashes,
            "unknown_family_answer_models": pipeline.unknown_families,
        }
        store = RunStore.create(runs_root, name or config.name, config, meta)
        selection = Selection.write(store, select(records, config.limit, shard))
        pipeline.llm.on_call = store.append_call
    pipeline.controls = ControlPlan.for_run(config.controls, records, selection)
    todo = ToDo(selection, store.finished_ids())
    finished_before, to_do = todo.finished, todo.count
    store.log(f"start: {len(selection)} records selected, {finished_before} already finished, {to_do} to do")
    if on_start:
        on_start(len(selection), finished_before)
    if to_do:  # the embedded judge's weights assembled while the answerer works (not for a run refused or finished)
        assemble_ahead(config.model(n).embedded_name for n in config.called_model_names())
    started = time.perf_counter()
    work = lambda record: process_record(pipeline, record)  # noqa: E731
    items = stream_todo(records, todo)  # the ids selected and finished are looked up on disk: none is held
    remote = None
    if config.engine == "ray":
        from judge.runs.ray_engine import run_items_ray

        def remote():
            return run_items_ray(config, items, recorded, store, cache, on_result=on_result, use_cache=use_cache, refresh=refresh,
                                 controls=pipeline.controls)

    try:
        summary = drive(store, items, work, selection, config, cache, on_result, started=started, remote=remote)
    finally:
        todo.close()  # the stream closes it when it ends; a stream never started (an error first) does not
    elapsed = time.perf_counter() - started
    store.log(f"done in {elapsed:.1f} s: {summary.run.records_finished}/{len(selection)} records")
    return store, summary
