"""``judge merge``: shards (or any runs of one config) into one run, each record once, in dataset order."""

from __future__ import annotations

import hashlib
from pathlib import Path

from judge.problems import DatasetError
from judge.runs.inputs import dataset_records
from judge.runs.store import RunDirError, RunStore
from judge.runs.summary import summarize


def identity(store: RunStore) -> str:
    """What makes a run itself: its run_id (every run directory gets one), else, for a run written before
    run ids, the digest of its calls (a copy of a run has the same calls, to the latency)."""
    run_id = store.manifest().get("run_id")
    if isinstance(run_id, str) and run_id:
        return run_id
    digest = hashlib.sha256()
    if store.calls_path.exists():
        with open(store.calls_path, "rb") as f:
            while block := f.read(1 << 20):
                digest.update(block)
    return f"calls:{digest.hexdigest()}" if store.calls_path.exists() and store.calls_path.stat().st_size else f"path:{store.path.resolve()}"


def refuse_repeats(stores: list[RunStore]) -> None:
    """Every call is counted once: the same run given twice (the same directory, a copy of it, or a run and
    a merged run that already holds it) is refused, naming both."""
    seen: dict[str, Path] = {}
    for store in stores:
        ids = [identity(store)] + [i for i in store.manifest().get("merged_run_ids") or [] if isinstance(i, str)]
        for run_id in ids:
            if run_id in seen:
                raise RunDirError(
                    f"{store.path} and {seen[run_id]} hold the same run ({run_id[:40]}): each run is merged once, "
                    "or its records and calls would count twice"
                )
        for run_id in ids:
            seen[run_id] = store.path


def merge(run_dirs: list[Path], *, runs_root: Path = Path("runs"), name: str = "merged") -> tuple[RunStore, dict]:
    stores = [RunStore.open(d) for d in run_dirs]
    refuse_repeats(stores)
    hashes = {s.manifest().get("config_hash") for s in stores}
    if len(hashes) != 1:
        raise RunDirError(f"the runs come from different configs ({', '.join(sorted(map(str, hashes)))}): refusing to merge them")
    config = stores[0].config()
    merged: dict = {}
    for store in stores:
        for result in store.finished():
            old = merged.get(result.record_id)
            if old is not None and old.model_dump() != result.model_dump():
                raise RunDirError(f"record {result.record_id} differs between the runs: refusing to pick one")
            merged[result.record_id] = result
    try:
        order = [r.id for r in dataset_records(config)]
    except (DatasetError, OSError):
        order = sorted(merged)
    merged_ids = [i for s in stores for i in [identity(s)] + list(s.manifest().get("merged_run_ids") or [])]
    meta = {**stores[0].manifest(), "name": name, "merged_from": [str(d) for d in run_dirs], "merged_run_ids": merged_ids, "shard": None}
    meta.pop("format", None)
    meta.pop("schema_version", None)
    meta["records_selected"] = [i for i in order if i in merged]
    store = RunStore.create(runs_root, name, config, meta)
    for record_id in meta["records_selected"]:
        store.append(merged[record_id])
    count = store.rewrite_in_order(order)
    for shard in stores:  # every call the shards made, so that the merged totals are what was spent
        store.append_calls_from(shard)
    summary = summarize(store.iter_finished(), store.manifest(), config, store.usage())
    summary["run"] = {"records_selected": count, "records_finished": count, "complete": True, "merged_from": meta["merged_from"]}
    store.write_summary(summary)
    return store, summary
