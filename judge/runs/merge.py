"""``judge merge``: shards (or any runs of one config) into one run, each record once, in dataset order."""

from __future__ import annotations

from pathlib import Path

from judge.problems import DatasetError
from judge.runs.inputs import dataset_records
from judge.runs.store import RunDirError, RunStore
from judge.runs.summary import summarize


def merge(run_dirs: list[Path], *, runs_root: Path = Path("runs"), name: str = "merged") -> tuple[RunStore, dict]:
    stores = [RunStore.open(d) for d in run_dirs]
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
    meta = {**stores[0].manifest(), "name": name, "merged_from": [str(d) for d in run_dirs], "shard": None}
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
