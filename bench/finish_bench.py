"""Peak RSS of a full run (every record, no --limit) and of ``judge score`` against the number of records.

    python bench/finish_bench.py --sizes 2000 20000 100000 [--baseline-dir DIR] [--work DIR] [--skip-score]
    python bench/finish_bench.py --finish-only --base 500 --sizes 2000 20000 100000 [--baseline-dir DIR]

Synthetic plain-JSONL records (about 300-character sources, a two-sentence answer each: one sentence of the
source, one made up), sentence decomposition, the deterministic judge, controls as the defaults have them.
The run's peak RSS is the `judge run` child's VmHWM (judge/testing/rss.py); it covers judging and the
finishing steps (results in order, summary, scores, scores.json, report.md, report.html). ``judge score`` of the
same run directory is measured apart. --baseline-dir names a checkout of an earlier commit run the same way
in the same session (its own `judge` package, imported from its folder).

--finish-only measures the finishing steps alone at sizes where judging every record would take hours on a
loaded machine: each checkout judges ``--base`` records for real, then the records and their results are
replicated under new ids up to each size (the same texts, so every record's result is its own), the run
directory is made by that checkout's own RunStore (its config hash and schema), and ``judge run --resume``
finds every record finished: its peak is the start-up passes over the input plus the finish (results in
order, summary, scores, scores.json, reports), which is where a run's memory grew with its size.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from judge.testing.rss import cli_with_peak_rss

ROOT = Path(__file__).resolve().parents[1]
WORDS = ("river bridge city museum council harbour station library school market garden tower road valley "
         "north south opened built closed measured reported counted painted repaired visited").split()


def sentence(rng: random.Random) -> str:
    return f"The {rng.choice(WORDS)} {rng.choice(WORDS)} was {rng.choice(WORDS)} in {rng.randint(1800, 2024)} with {rng.randint(2, 900)} {rng.choice(WORDS)}s."


def write_records(path: Path, n: int, seed: int = 0) -> Path:
    """``n`` plain records of about 300-character sources, each with a two-sentence answer."""
    rng = random.Random(seed)
    with open(path, "w") as f:
        for i in range(n):
            sents = [sentence(rng) for _ in range(5)]
            answer = f"{rng.choice(sents)} {sentence(rng)}"
            f.write(json.dumps({"id": f"r{i:07d}", "question": "What happened?", "source": " ".join(sents), "answer": answer}) + "\n")
    return path


def write_config(folder: Path, records: Path) -> Path:
    path = folder / "run.yaml"
    path.write_text(f"name: finish\ndataset: {{path: {records}}}\ndecompose: {{method: sentences}}\n"
                    f"adjudicate: {{judges: [deterministic]}}\ncache_dir: {folder / 'cache'}\n")
    return path


def replicate(lines: list[str], n: int, field: str):
    """``n`` lines cycling through ``lines``, the id in ``field`` (f"r{i:07d}" in the base) renumbered (a
    generator: a million results are 6 GB, written as they are made)."""
    for j in range(n):
        line = lines[j % len(lines)]
        old = f'"{field}":"r{j % len(lines):07d}"' if f'"{field}":"' in line else f'"{field}": "r{j % len(lines):07d}"'
        assert old in line, (field, line[:120])
        yield line.replace(old, old.replace(f"r{j % len(lines):07d}", f"r{j:07d}"), 1)


def write_lines(path: Path, lines) -> None:
    with open(path, "w") as f:
        f.writelines(lines)


MAKE_RUN = """
import json, sys
from pathlib import Path
from judge.config import load_run_config
from judge.runs.runner import config_hash
from judge.runs.store import RunStore
config = load_run_config(Path(sys.argv[1]))
ids = [json.loads(line)["id"] for line in open(config.dataset.path)]
meta = {"name": "finish", "config_hash": config_hash(config), "shard": None, "prompts": {}, "same_family_clashes": [],
        "unknown_family_answer_models": [], "records_selected": ids}
store = RunStore.create(Path(sys.argv[2]), "finish", config, meta)
print(store.path)
"""


def finish_only(work: Path, sizes: list[int], base: int, checkouts, skip_score: bool) -> None:
    import subprocess
    import sys

    base_dir = work / f"base{base}"
    base_dir.mkdir(exist_ok=True)
    base_records = base_dir / "records.jsonl"
    if not base_records.exists():
        write_records(base_records, base)
    base_config = write_config(base_dir, base_records)
    record_lines = base_records.read_text().splitlines(keepends=True)
    for label, cwd in checkouts:
        runs = base_dir / f"runs-{label}"
        if not runs.exists():
            row = {"records": base, "code": label, "step": "base run",
                   **measure(cwd, "run", str(base_config), "--runs-dir", str(runs), "--no-progress", "--json", "--no-cache")}
            print(json.dumps(row), flush=True)
        result_lines = (sorted(runs.iterdir())[-1] / "results.jsonl").read_text().splitlines(keepends=True)
        for n in sizes:
            folder = work / f"n{n}"
            folder.mkdir(exist_ok=True)
            records = folder / "records.jsonl"
            if not records.exists():
                write_lines(records, replicate(record_lines, n, "id"))
            config = write_config(folder, records)
            made = subprocess.run([sys.executable, "-c", MAKE_RUN, str(config), str(folder / f"finish-{label}")], cwd=cwd,
                                  capture_output=True, text=True, check=True)
            run_dir = Path(made.stdout.strip().splitlines()[-1])
            (run_dir / "run.lock").unlink(missing_ok=True)
            write_lines(run_dir / "results.jsonl", replicate(result_lines, n, "record_id"))
            row = {"records": n, "code": label, "step": "run --resume (every record finished)",
                   **measure(cwd, "run", str(config), "--resume", str(run_dir), "--no-progress", "--json", "--no-cache")}
            print(json.dumps(row), flush=True)
            if not skip_score:
                row = {"records": n, "code": label, "step": "score", **measure(cwd, "score", str(run_dir), "--json")}
                print(json.dumps(row), flush=True)


def measure(cwd: Path, *args: str) -> dict:
    started = time.perf_counter()
    result, peak = cli_with_peak_rss(*args, cwd=cwd)
    wall = time.perf_counter() - started
    err = result.stderr.strip().splitlines()
    return {"rc": result.returncode, "peak_rss_mb": round(peak / 2**20, 1) if peak else None, "wall_s": round(wall, 1),
            "error": err[-1][:200] if err and result.returncode not in (0, 3) else None}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000, 100000])
    ap.add_argument("--baseline-dir", type=Path, help="a checkout of the commit to compare with")
    ap.add_argument("--only-baseline", action="store_true")
    ap.add_argument("--skip-score", action="store_true")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--finish-only", action="store_true", help="judge --base records, replicate them, measure the finish")
    ap.add_argument("--base", type=int, default=500)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="judge-finish-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    checkouts = [] if args.only_baseline else [("now", ROOT)]
    checkouts += [("baseline", args.baseline_dir.resolve())] if args.baseline_dir else []
    if args.finish_only:
        finish_only(work, args.sizes, args.base, checkouts, args.skip_score)
        return
    for n in args.sizes:
        folder = work / f"n{n}"
        folder.mkdir(exist_ok=True)
        records = folder / "records.jsonl"
        if not records.exists():
            write_records(records, n)
        config = write_config(folder, records)
        for label, cwd in checkouts:
            runs = folder / f"runs-{label}"
            row = {"records": n, "code": label, "step": "run",
                   **measure(cwd, "run", str(config), "--runs-dir", str(runs), "--no-progress", "--json", "--no-cache")}
            print(json.dumps(row), flush=True)
            dirs = sorted(runs.iterdir()) if runs.exists() else []
            if dirs and not args.skip_score:
                row = {"records": n, "code": label, "step": "score", **measure(cwd, "score", str(dirs[-1]), "--json")}
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
