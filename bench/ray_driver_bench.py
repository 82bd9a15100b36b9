"""The Ray driver's cost per record, the ceiling of a cluster's throughput: what the driver does with each batch
a worker returns, timed on real result lines, the way it did it before issue 29 and the way it does it now.

    python bench/ray_driver_bench.py RESULTS.jsonl [--batch 8] [--repeat 3]

before: each result parsed (RecordResult.model_validate_json), dumped again, appended and fsynced one at a time.
now: the batch's lines written in one append as the worker serialised them, fsynced in groups (1 s / 256 lines);
parsed once only for the progress callback (``--no-callback``: not at all).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from judge.results import RecordResult
from judge.runs.store import RunStore


def before(store: RunStore, lines: list[bytes], batch: int) -> None:
    for i in range(0, len(lines), batch):
        for line in lines[i:i + batch]:
            result = RecordResult.model_validate_json(line)
            text = result.model_dump_json() + "\n"
            with open(store.results_path, "a", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())


def now(store: RunStore, lines: list[bytes], batch: int, callback: bool) -> None:
    for i in range(0, len(lines), batch):
        chunk = [line.decode("utf-8").rstrip("\n") for line in lines[i:i + batch]]
        store.append_lines(chunk)
        if callback:
            for line in chunk:
                RecordResult.model_validate_json(line)
    store.sync()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("results", type=Path)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    lines = [line for line in args.results.read_bytes().splitlines(keepends=True) if line.strip()]
    print(f"{len(lines)} result lines, {sum(map(len, lines)) / len(lines) / 1024:.1f} KB each, batches of {args.batch}")
    for label, fn in (("before", lambda s: before(s, lines, args.batch)), ("now, with the progress callback", lambda s: now(s, lines, args.batch, True)),
                      ("now, no callback", lambda s: now(s, lines, args.batch, False))):
        best = None
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as tmp:
                store = RunStore(Path(tmp))
                cpu, wall = time.process_time(), time.perf_counter()
                fn(store)
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            best = min(best or (cpu, wall), (cpu, wall))
        cpu, wall = best
        print(f"{label}: {wall / len(lines) * 1000:.3f} ms wall, {cpu / len(lines) * 1000:.3f} ms CPU a record "
              f"-> driver ceiling ~{len(lines) / wall:,.0f} records/s")


if __name__ == "__main__":
    main()
