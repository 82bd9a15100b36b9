"""Peak RSS of `judge run` (deterministic judge) against input size: records in the plain format, recorded
answers in an answers file twice as large, joined through the on-disk index.

    python bench/stream_bench.py --sizes 10 100 [--limit 50] [--baseline-dir DIR]

Each size runs the same command with --limit (every input file is still read whole: the checking pass, the
answers index, the span join, scoring and reports all stream the full files; only the records judged are
limited). --baseline-dir names a checkout of an earlier commit to run the same command with, in the same
session, for the ratio. Also measures the hostile file of issue 17 (one record with 333,333 empty claims).
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


def write_inputs(folder: Path, megabytes: float, seed: int = 0) -> tuple[Path, Path]:
    """~megabytes of records (4 KB sources) and ~2x that of answers (two 4 KB answers per record)."""
    rng = random.Random(seed)
    records, answers = folder / "records.jsonl", folder / "answers.jsonl"
    target = megabytes * 1e6
    written = 0
    i = 0
    with open(records, "w") as rf, open(answers, "w") as af:
        while written < target:
            sents = [sentence(rng) for _ in range(60)]
            source = " ".join(sents)
            line = json.dumps({"id": f"r{i}", "question": "What happened?", "source": source}) + "\n"
            rf.write(line)
            written += len(line)
            for model in ("model-a", "model-b"):
                picked = [rng.choice(sents) if rng.random() < 0.7 else sentence(rng) for _ in range(60)]
                af.write(json.dumps({"record_id": f"r{i}", "model": model, "answer": " ".join(picked)}) + "\n")
            i += 1
    return records, answers


def run(cwd: Path, *args: str, env: dict | None = None) -> dict:
    started = time.perf_counter()
    result, peak = cli_with_peak_rss(*args, cwd=cwd, env=env)
    wall = time.perf_counter() - started
    tail = result.stderr.strip().splitlines()
    return {"rc": result.returncode, "peak_rss_mb": round(peak / 2**20, 1) if peak else None, "wall_s": round(wall, 1),
            "stderr_lines": len(tail), "first_error": tail[0][:160] if tail and result.returncode else None}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=float, nargs="+", default=[10, 100], help="records file sizes in MB")
    ap.add_argument("--limit", type=int, default=50)
    ap.add_argument("--baseline-dir", type=Path, help="a checkout of the commit to compare with")
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="judge-stream-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    checkouts = [("now", ROOT)] + ([("baseline", args.baseline_dir.resolve())] if args.baseline_dir else [])
    hostile = work / "claims.json"
    hostile.write_text(json.dumps([{"id": "x", "question": "q", "source_text": "s", "claims": [{}] * 333_333}]))
    for label, cwd in checkouts:
        r = run(cwd, "validate", str(hostile))
        rows.append({"case": "333,333 empty claims (validate)", "input_mb": round(hostile.stat().st_size / 1e6, 2), "code": label, **r})
        print(json.dumps(rows[-1]), flush=True)
    for size in args.sizes:
        folder = work / f"{size:g}mb"
        folder.mkdir(exist_ok=True)
        records, answers = write_inputs(folder, size)
        mb = (records.stat().st_size + answers.stat().st_size) / 1e6
        config = folder / "run.yaml"
        config.write_text(f"dataset: {{path: {records}}}\nanswers: {{path: {answers}}}\ndecompose: {{method: sentences}}\n"
                          f"adjudicate: {{judges: [deterministic]}}\ncache_dir: {folder / 'cache'}\n")
        for label, cwd in checkouts:
            r = run(cwd, "run", str(config), "--limit", str(args.limit), "--runs-dir", str(folder / f"runs-{label}"), "--json", "--no-progress")
            rows.append({"case": f"run --limit {args.limit}: records {records.stat().st_size / 1e6:.0f} MB + answers {answers.stat().st_size / 1e6:.0f} MB",
                         "input_mb": round(mb, 1), "code": label, **r})
            print(json.dumps(rows[-1]), flush=True)
        for p in (records, answers):
            p.unlink()
    print("\n| case | input MB | code | exit | peak RSS MB | wall s |\n|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['input_mb']} | {r['code']} | {r['rc']} | {r['peak_rss_mb']} | {r['wall_s']} |")


if __name__ == "__main__":
    main()
