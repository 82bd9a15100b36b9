"""The memory a run's start holds for its ids (issue 29.1): the selection, the ids already finished, the ids
still to do and the control plan's places, at N records, for this checkout and a baseline checkout.

    python bench/selection_bench.py --sizes 100000 1000000 [--baseline-dir CHECKOUT]

N tiny plain-JSONL records (their ids are what is measured, not their text) and a run directory whose
results.jsonl holds a finished line for every other record (a resume half done: ids on both sides). Each
(checkout, N) runs in a child process: it opens the records (their check and on-disk index), then does what
``judge run --resume`` does before the first record is judged: read the run's selection, plan the controls,
work out what is still to do, and stream the records to do. Reported: the child's peak RSS after opening the
records (the baseline of the step) and at the end, and the step's growth between them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r'''
import json, resource, sys, time
from pathlib import Path
data, run_dir = Path(sys.argv[1]), Path(sys.argv[2])
from judge.controls.make import ControlsConfig
from judge.controls.mix import ControlPlan
from judge.runs.inputs import RecordStream
from judge.runs.store import RunStore
peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
records = RecordStream(str(data))
opened = peak()
started = time.perf_counter()
store = RunStore.open(run_dir)
controls = ControlsConfig(enabled=True)
try:
    from judge.runs.selection import Selection, ToDo, stream_todo
    selection = Selection.of(store)
    plan = ControlPlan.for_run(controls, records, selection)
    todo = ToDo(selection, store.finished_ids())
    left = sum(1 for _ in stream_todo(records, todo))
    selected = len(selection)
except ImportError:  # the code before: the ids read whole
    from judge.runs.runner import record_ids, stream_selected
    wanted = set(store.manifest().pop("records_selected", []))
    selection = [rid for rid in record_ids(records) if rid in wanted]
    del wanted
    plan = ControlPlan.for_run(controls, records, selection)
    done = store.finished_ids()
    todo = {rid for rid in selection if rid not in done}
    del done
    left = sum(1 for _ in stream_selected(records, todo))
    selected = len(selection)
print(json.dumps({"opened_mb": round(opened, 1), "peak_mb": round(peak(), 1), "selected": selected, "to_do": left,
                  "seconds": round(time.perf_counter() - started, 1)}))
'''


def make(tmp: Path, n: int, old_format: bool) -> tuple[Path, Path]:
    """N records, and a run directory selecting all of them with every other one finished."""
    data = tmp / f"records-{n}.jsonl"
    if not data.exists():
        with open(data, "w", encoding="utf-8") as f:
            for i in range(n):
                f.write(json.dumps({"id": f"record-{i:08d}", "question": "q?", "source": "Water boils at 100 degrees."}) + "\n")
    run_dir = tmp / f"run-{n}-{'old' if old_format else 'new'}"
    run_dir.mkdir()
    sys.path.insert(0, str(ROOT))
    from judge.results import RESULTS_SCHEMA_VERSION

    ids = [f"record-{i:08d}" for i in range(n)]
    manifest = {"format": "judge-run", "schema_version": RESULTS_SCHEMA_VERSION, "name": "bench", "config_hash": "x"}
    if old_format:
        manifest["records_selected"] = ids
    else:
        manifest["records_selected"] = n
        (run_dir / "selected.ids").write_text("".join(json.dumps(i) + "\n" for i in ids), encoding="utf-8")
    (run_dir / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    with open(run_dir / "results.jsonl", "w", encoding="utf-8") as f:
        for rid in ids[::2]:
            f.write(json.dumps({"schema_version": RESULTS_SCHEMA_VERSION, "record_id": rid}, separators=(",", ":")) + "\n")
    return data, run_dir


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--baseline-dir", type=Path, default=None, help="a checkout of the code before (git worktree)")
    args = ap.parse_args()
    checkouts = [("now", ROOT)] + ([("before", args.baseline_dir)] if args.baseline_dir else [])
    rows = []
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        for n in args.sizes:
            for label, checkout in checkouts:
                data, run_dir = make(tmp, n, old_format=label == "before")
                env = {**os.environ, "PYTHONPATH": str(checkout)}
                t0 = time.perf_counter()
                out = subprocess.run([sys.executable, "-c", CHILD, str(data), str(run_dir)], capture_output=True, text=True, env=env,
                                     cwd=checkout, timeout=3600)
                if out.returncode:
                    raise SystemExit(out.stderr[-3000:])
                row = {"code": label, "records": n, **json.loads(out.stdout.strip().splitlines()[-1]), "wall_s": round(time.perf_counter() - t0, 1)}
                row["growth_mb"] = round(row["peak_mb"] - row["opened_mb"], 1)
                rows.append(row)
                print(json.dumps(row), flush=True)
    print("\n| records | code | peak RSS after opening the records | peak RSS at the first record to judge | the step's growth | step time |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['records']:,} | {r['code']} | {r['opened_mb']} MB | {r['peak_mb']} MB | {r['growth_mb']} MB | {r['seconds']} s |")


if __name__ == "__main__":
    main()
