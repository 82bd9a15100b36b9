"""``judge merge``: shards (or any runs of one config) into one run, each record once, in dataset order."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import tempfile
from pathlib import Path

from judge.problems import DatasetError
from judge.results import RESULTS_SCHEMA_VERSION, RecordResult
from judge.runs.inputs import dataset_records
from judge.runs.selection import Selection, check_whole, record_ids
from judge.runs.store import RunDirError, RunStore, record_id_of
from judge.runs import trust
from judge.runs.calibration import adopt
from judge.runs.summary import RunState, Summary, summarize


def identity(store: RunStore) -> str:
    """What makes a run itself: its run_id (every run directory gets one), else, for a run written before
    run ids, the digest of its calls (a copy of a run has the same calls, to the latency)."""
    run_id = store.manifest().get("run_id")
    if isinstance(run_id, str) and run_id:
        return run_id
    digest = hashlib.sha256()
    if store.calls_path.exists():
        with store._open_read(store.calls_path) as f:  # a plain file (a device there is refused, never read)
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


def refuse_missing_shards(stores: list[RunStore]) -> None:
    """Shards of one split (--shard i/n) merge only when every shard is there: a merged run of some shards
    would read as a whole run, its missing records nowhere said. Runs without a shard merge as they are."""
    shards = [s.manifest().get("shard") for s in stores]
    if not shards or any(sh is None for sh in shards):
        return
    counts = {n for _, n in shards}
    if len(counts) > 1:
        raise RunDirError(f"the runs are shards of different splits ({', '.join(f'{i}/{n}' for i, n in shards)}): merge the shards of one split")
    (n,) = counts
    missing = sorted(set(range(n)) - {i for i, _ in shards})
    if missing:
        raise RunDirError(f"shard {', '.join(f'{i}/{n}' for i in missing[:10])} of this split is missing"
                          f"{f' ({len(missing)} shards in all)' if len(missing) > 10 else ''}: give the run directory of every shard "
                          "(a merge of some shards would read as the whole run)")


def refuse_unfinished(stores: list[RunStore]) -> None:
    """Only finished runs merge: a shard killed mid-run (no summary.json, or one that says incomplete) would
    merge into a run that reads as whole and passes, its missing records nowhere said. Refused naming the
    shard and how many of its selected records it lacks, as rejudge and baseline save refuse such a run."""
    from judge.runs.summary import load_summary

    for store in stores:
        summary = load_summary(store.path / "summary.json")  # a device there, an edited field: one line, never read
        if summary is not None and summary.complete:
            check_whole(store, summary)  # says complete: held to its own files (a shard cut to 2 of its 4 lines merged, issue 50.12)
            continue
        selected = store.manifest().get("records_selected")
        selected = len(selected) if isinstance(selected, list) else selected
        done = sum(1 for _ in store.finished_ids())
        lacks = f": {selected - done:,} of its {selected:,} selected records are missing" if isinstance(selected, int) and selected > done else ""
        raise RunDirError(f"{store.path} did not finish ({'its summary.json says incomplete' if summary else 'no summary.json'}){lacks}; "
                          f"merge reads finished runs only (finish it first: judge run CONFIG --resume {store.path})")


def merge(run_dirs: list[Path], *, runs_root: Path = Path("runs"), name: str = "merged") -> tuple[RunStore, Summary]:
    """Every record of the runs once, in dataset order, with every run's calls. Streamed: each result line's
    id, place and digest go to a temporary SQLite table (a record in two runs must be the same result), the
    lines are copied as bytes; memory does not grow with the runs."""
    stores = [RunStore.open(d) for d in run_dirs]
    refuse_repeats(stores)
    hashes = {s.manifest().get("config_hash") for s in stores}
    if len(hashes) != 1:
        raise RunDirError(f"the runs come from different configs ({', '.join(sorted(map(str, hashes)))}): refusing to merge them")
    refuse_missing_shards(stores)
    refuse_unfinished(stores)
    config = stores[0].config()
    with tempfile.TemporaryDirectory(prefix="judge-merge-") as tmp:
        db = sqlite3.connect(os.path.join(tmp, "merge.db"))
        try:
            db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                             "CREATE TABLE seen (id TEXT PRIMARY KEY, run INTEGER, pos INTEGER, len INTEGER, digest BLOB) WITHOUT ROWID;")
            for k, store in enumerate(stores):
                for rid, pos, line in _result_lines(store):
                    digest = hashlib.sha256(line).digest()
                    old = db.execute("SELECT run, pos, len, digest FROM seen WHERE id = ?", (rid,)).fetchone()
                    if old is None:
                        db.execute("INSERT INTO seen VALUES (?, ?, ?, ?, ?)", (rid, k, pos, len(line), digest))
                    elif old[3] != digest and _read(stores[old[0]], old[1], old[2]).model_dump() != RecordResult.model_validate_json(line).model_dump():
                        raise RunDirError(f"record {rid} differs between the runs: refusing to pick one")
            try:
                order = [rid for rid in record_ids(dataset_records(config)) if db.execute("SELECT 1 FROM seen WHERE id = ?", (rid,)).fetchone()]
            except (DatasetError, OSError):
                order = [rid for (rid,) in db.execute("SELECT id FROM seen ORDER BY id")]
            merged_ids = [i for s in stores for i in [identity(s)] + list(s.manifest().get("merged_run_ids") or [])]
            meta = {**stores[0].manifest(), "name": name, "merged_from": [str(d) for d in run_dirs], "merged_run_ids": merged_ids, "shard": None}
            meta.pop("format", None)
            meta.pop("schema_version", None)
            meta.pop("records_selected", None)
            store = RunStore.create(runs_root, name, config, meta)
            Selection.write(store, order)
            del meta
            files = [s._open_read(s.results_path) for s in stores]  # noqa: SIM115 (closed below)
            try:
                batch = []
                for rid in order:
                    k, pos, size = db.execute("SELECT run, pos, len FROM seen WHERE id = ?", (rid,)).fetchone()
                    files[k].seek(pos)
                    batch.append(files[k].read(size).decode("utf-8").rstrip("\n"))
                    if len(batch) >= 256:
                        store.append_lines(batch)
                        batch = []
                store.append_lines(batch)
            finally:
                for f in files:
                    f.close()
        finally:
            db.close()
    count = store.rewrite_in_order(order)
    for shard in stores:  # every call the shards made, so that the merged totals are what was spent
        store.append_calls_from(shard)
    manifest = store.manifest()
    manifest.pop("records_selected", None)
    summary = summarize(store.iter_finished(), manifest, config, store.usage())
    summary = adopt(summary, config, manifest)  # as a finished run: the calibration adopted, the panel re-voted on the merged health
    summary = trust.apply(store, summary, config, manifest, lambda rs: adopt(summarize(rs, manifest, config, store.usage()), config, manifest), again=True)
    summary = summary.model_copy(update={"run": RunState.model_validate(
        {"records_selected": count, "records_finished": count, "complete": True, "merged_from": [str(d) for d in run_dirs]})})
    store.write_summary(summary)
    return store, summary


def _result_lines(store: RunStore):
    """(record id, offset, line bytes) of each complete result line of a run, its id read from the line's
    first bytes (a line of another shape or schema is parsed whole: refused as iter_finished refuses it)."""
    if not store.results_path.exists():
        return
    with store._open_read(store.results_path) as f:  # the reading door: a plain file, each line within one record's bound
        pos = 0
        for i, line in store._lines(f):
            if line.strip() and line.endswith(b"\n"):
                found = record_id_of(line)
                rid = found[1] if found is not None and found[0] == RESULTS_SCHEMA_VERSION else store._parse(line, i).record_id
                yield rid, pos, line
            pos += len(line)


def _read(store: RunStore, pos: int, size: int) -> RecordResult:
    with store._open_read(store.results_path) as f:
        f.seek(pos)
        return RecordResult.model_validate_json(f.read(size))
