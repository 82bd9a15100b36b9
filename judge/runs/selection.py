"""Which records a run takes and which are still to do, kept on disk: the selection in a file of the run
directory (``selected.ids``, one JSON string a line, in dataset order), and the ids selected and finished in a
temporary SQLite file while the run starts. No list or set of a run's ids is held in memory, however large the
run (issue 29: at 1M records the ids read whole were most of a finish's peak, and projected to 2 GB at 10M).
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Iterator

from judge.files import SELECTION_FILE
from judge.models import Record
from judge.runs.store import RunDirError, RunStore

CHUNK = 4096  # ids a write or an insert takes at once


def chunks(items: Iterable, size: int = CHUNK) -> Iterator[list]:
    """``items`` in lists of ``size`` (the last shorter), read as they are taken."""
    it = iter(items)
    return iter(lambda: list(itertools.islice(it, size)), [])


def record_ids(records) -> Iterator[str]:
    """The records' ids in dataset order: from a RecordStream's index (no pass over the file), else read."""
    return records.iter_ids() if hasattr(records, "iter_ids") else (r.id for r in records)


def select(records, limit: int | None, shard: tuple[int, int] | None) -> Iterator[str]:
    """The ids of the records a run takes (the first ``limit``, every n-th of a shard), in dataset order."""
    ids = record_ids(records)
    picked = itertools.islice(ids, limit) if limit else ids
    if shard:
        i, n = shard
        picked = (rid for k, rid in enumerate(picked) if k % n == i)
    return picked


class Selection:
    """A run's selected ids, read from its run directory each time they are iterated (never held)."""

    def __init__(self, store: RunStore, count: int):
        self.path, self.count = store.path / SELECTION_FILE, count

    @classmethod
    def write(cls, store: RunStore, ids: Iterable[str]) -> Selection:
        """Write the ids (a stream) into the run directory, and their count into its manifest."""
        count = 0

        def lines():
            nonlocal count
            for part in chunks(ids):
                count += len(part)
                yield "".join(json.dumps(rid, ensure_ascii=False) + "\n" for rid in part)

        store.write_parts(SELECTION_FILE, lines())
        store.update_manifest(records_selected=count)
        return cls(store, count)

    @classmethod
    def of(cls, store: RunStore, again: Callable[[], Iterable[str]]) -> Selection:
        """A run's selection (the store is the writer's, under its lock). A run written before the selection had
        its own file keeps its ids in run.json: they are moved into the file. A run killed between writing
        run.json and its selection has neither: ``again()`` selects the same ids (the same data, limit and shard,
        which the config hash and run.json's shard pin)."""
        manifest = store.manifest()
        listed = manifest.get("records_selected")
        if isinstance(listed, list):
            return cls.write(store, (str(rid) for rid in listed))
        path = store.path / SELECTION_FILE
        if not path.is_file():
            if listed is not None:  # the count was written after the file: the file was removed
                raise RunDirError(f"{path}: missing (the ids of the records the run takes; run.json counts {listed}): "
                                  "the run directory was edited or damaged")
            return cls.write(store, again())
        selection = cls(store, 0)
        selection.count = sum(1 for _ in selection)  # the file's own count, checked line by line
        return selection

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[str]:
        with RunStore._open_read(self.path) as f:  # the reading door: a plain file, each line within one record's bound
            for i, line in RunStore._lines(f):
                try:
                    rid = json.loads(line)
                except ValueError:
                    rid = None
                if not isinstance(rid, str):
                    raise RunDirError(f"{self.path}: line {i} is not a record id (a JSON string): the run directory was edited or damaged")
                yield rid


class ToDo:
    """The ids selected and those already finished, in a temporary SQLite file: whether a record is still to
    do, and how many are. Closed (and deleted) when the run's stream ends."""

    def __init__(self, selection: Iterable[str], finished: Iterable[str]):
        self._dir = tempfile.TemporaryDirectory(prefix="judge-todo-")
        self.db = sqlite3.connect(os.path.join(self._dir.name, "todo.db"), check_same_thread=False)
        self.db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-4000;"
                              "CREATE TABLE selected (id TEXT PRIMARY KEY) WITHOUT ROWID;"
                              "CREATE TABLE finished (id TEXT PRIMARY KEY) WITHOUT ROWID;")
        for part in chunks(selection):
            self.db.executemany("INSERT OR IGNORE INTO selected VALUES (?)", ((rid,) for rid in part))
        for part in chunks(finished):
            self.db.executemany("INSERT OR IGNORE INTO finished VALUES (?)", ((rid,) for rid in part))
        self.selected = self.db.execute("SELECT COUNT(*) FROM selected").fetchone()[0]
        self.finished = self.db.execute("SELECT COUNT(*) FROM selected JOIN finished USING (id)").fetchone()[0]
        self.count = self.selected - self.finished

    def wanted(self, rid: str) -> bool:
        return self.db.execute("SELECT 1 FROM selected WHERE id = ? AND NOT EXISTS (SELECT 1 FROM finished WHERE id = ?)",
                               (rid, rid)).fetchone() is not None

    def close(self) -> None:
        """Idempotent: the stream closes it when it ends, the run when it stops (a stream never started)."""
        if self.db is not None:
            self.db.close()
            self.db = None
            self._dir.cleanup()


def stream_todo(records: Iterable[Record], todo: ToDo) -> Iterator[Record]:
    """The records still to do, read from the stream in dataset order when a worker asks for the next one
    (none is held); stops once all are found, and closes ``todo`` when the stream ends."""
    try:
        left = todo.count
        if left <= 0:
            return
        for record in records:
            if todo.wanted(record.id):
                yield record
                left -= 1
                if not left:
                    return
    finally:
        todo.close()


def check_whole(store: RunStore, summary=None) -> None:
    """A run whose summary.json says complete is held to its own files (issue 50.12): every id selected.ids
    selects has one whole result line, no result is of a record it does not select or there twice, and both counts
    are the summary's. RunDirError naming the records otherwise (a shard cut mid-run, a
    results.jsonl trimmed, a selected.ids emptied to match). The ids go through a temporary SQLite file, never
    a set in memory. An unfinished run is left to its caller (each refuses it in its own words)."""
    from judge.runs.summary import load_summary

    summary = summary if summary is not None else load_summary(store.path / "summary.json")
    if summary is None or not summary.complete:
        return
    where = store.path
    listed = store.manifest().get("records_selected")
    path = store.path / SELECTION_FILE
    if isinstance(listed, list):  # a run written before selected.ids: its ids in run.json
        selected_ids: Iterable[str] | None = (str(x) for x in listed)
    elif path.is_file() or path.is_symlink():
        selected_ids = Selection(store, 0)
    else:  # a baseline pinned before it kept selected.ids: its results held to the summary's counts alone
        selected_ids = None
    # a torn last line is skipped, as every reader skips it (the next writer cuts it): its record, if it has no whole
    # line, is one the check names as missing
    with tempfile.TemporaryDirectory(prefix="judge-whole-") as tmp:
        db = sqlite3.connect(os.path.join(tmp, "whole.db"))
        try:
            db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                             "CREATE TABLE selected (id BLOB PRIMARY KEY, n INTEGER) WITHOUT ROWID;"
                             "CREATE TABLE done (id BLOB PRIMARY KEY, n INTEGER) WITHOUT ROWID;")
            for table, ids in (("selected", selected_ids if selected_ids is not None else ()), ("done", store.finished_ids())):
                for part in chunks(ids):
                    db.executemany(f"INSERT INTO {table} VALUES (?, 1) ON CONFLICT(id) DO UPDATE SET n = n + 1",  # bytes: any id, a lone surrogate too
                                   ((rid.encode("utf-8", "surrogatepass"),) for rid in part))

            def some(sql: str) -> tuple[int, list[str]]:
                count = db.execute(f"SELECT COUNT(*) FROM ({sql})").fetchone()[0]
                return count, [r[0].decode("utf-8", "backslashreplace") for r in db.execute(f"{sql} LIMIT 5")]

            def named(ids: list[str], count: int) -> str:
                return ", ".join(repr(i[:60]) for i in ids) + (f" and {count - len(ids):,} more" if count > len(ids) else "")

            selected = db.execute("SELECT COUNT(*) FROM selected").fetchone()[0]
            problems = []
            if selected_ids is None:  # no selection to hold the results to: their count is the summary's
                selected = db.execute("SELECT COUNT(*) FROM done").fetchone()[0]
                db.execute("INSERT INTO selected SELECT id, 1 FROM done")
            n, ids = some("SELECT id FROM selected WHERE n > 1")
            if n:
                problems.append(f"{SELECTION_FILE} names {n:,} record{'s' if n != 1 else ''} more than once ({named(ids, n)})")
            n, ids = some("SELECT id FROM done WHERE n > 1")
            if n:
                problems.append(f"results.jsonl holds {n:,} record{'s' if n != 1 else ''} more than once ({named(ids, n)})")
            n, ids = some("SELECT id FROM done WHERE id NOT IN (SELECT id FROM selected)")
            if n:
                problems.append(f"results.jsonl holds {n:,} record{'s' if n != 1 else ''} the run does not select ({named(ids, n)})")
            n, ids = some("SELECT id FROM selected WHERE id NOT IN (SELECT id FROM done)")
            if n:
                problems.append(f"results.jsonl lacks {n:,} of the {selected:,} selected records ({named(ids, n)})")
            state = summary.run
            if not problems and state is not None and (state.records_selected, state.records_finished) != (selected, selected):
                problems.append(f"{SELECTION_FILE} and results.jsonl hold {selected:,} records where summary.json counts "
                                f"{state.records_selected:,} selected and {state.records_finished:,} finished")
        finally:
            db.close()
    if problems:
        raise RunDirError(f"{where}: summary.json says the run is complete, but " + "; ".join(problems)
                          + ": the run directory was cut or edited (run it again, or finish it: judge run CONFIG --resume DIR)")
