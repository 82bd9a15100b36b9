"""Peak RSS and wall time of `judge validate ANSWERS --records RECORDS --json` against the answers file's size
(issue 28.5: a 300 MB answers file under 500 MB RSS).

    python bench/validate_bench.py --sizes 30 150 300 [--baseline-dir DIR] [--keep DIR]

The answers file holds realistic lines (three models' answers to each record: ~700 characters of answer and
four gold claims, each with a support span into the record's source); the records file (plain JSONL, ~2 KB
sources) is the one they point into. --baseline-dir names a checkout of an earlier commit, run with the same
files in the same session, for the ratio. Peak RSS is the child's own VmHWM (judge.testing.rss).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from pathlib import Path

from judge.testing.rss import cli_with_peak_rss

ROOT = Path(__file__).resolve().parents[1]
WORDS = ("river bridge city museum council harbour station library school market garden tower road valley "
         "north south opened built closed measured reported counted painted repaired visited").split()
MODELS = ("gpt-4o-mini", "llama-3.1-8b", "qwen2.5-7b")
LABELS = ("supported", "supported", "partially_supported", "unsupported", "contradicted")


def sentence(rng: random.Random) -> str:
    return f"The {rng.choice(WORDS)} {rng.choice(WORDS)} was {rng.choice(WORDS)} in {rng.randint(1800, 2024)} with {rng.randint(2, 900)} {rng.choice(WORDS)}s."


def write_inputs(folder: Path, megabytes: float, seed: int = 0) -> tuple[Path, Path, int]:
    """~megabytes of answers and the records they point into; returns the paths and the answer count."""
    rng = random.Random(seed)
    records, answers = folder / "records.jsonl", folder / "answers.jsonl"
    written = count = i = 0
    with open(records, "w") as rf, open(answers, "w") as af:
        while written < megabytes * 1e6:
            sents = [sentence(rng) for _ in range(30)]
            source = " ".join(sents)
            rid = f"rec-{i:07d}"
            rf.write(json.dumps({"id": rid, "question": f"What happened to the {rng.choice(WORDS)}?", "source": source}) + "\n")
            for model in MODELS:
                picked = rng.sample(range(len(sents)), 4)
                claims = []
                for k in picked:
                    start = source.index(sents[k])
                    claims.append({"text": sents[k], "label": rng.choice(LABELS),
                                   "support": [{"start_char": start, "end_char": start + len(sents[k])}]})
                answer = " ".join(sents[k] for k in picked) + " " + " ".join(sentence(rng) for _ in range(4))
                line = json.dumps({"record_id": rid, "model": model, "answer": answer, "gold_claims": claims}) + "\n"
                af.write(line)
                written += len(line)
                count += 1
            i += 1
    return records, answers, count


def measure(tree: Path, answers: Path, records: Path) -> dict:
    t0 = time.perf_counter()
    result, peak = cli_with_peak_rss("validate", str(answers), "--records", str(records), "--json", cwd=tree, timeout=3600)
    wall = time.perf_counter() - t0
    if result.returncode != 0:
        raise SystemExit(f"{tree}: exit {result.returncode}: {result.stderr[-2000:]}")
    rep = json.loads(result.stdout)
    return {"peak_mb": round(peak / 1e6), "wall_s": round(wall, 1), "spans": rep["spans"], "records": rep["records"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=float, nargs="+", default=[30, 150, 300])
    ap.add_argument("--baseline-dir", type=Path, default=None)
    ap.add_argument("--keep", type=Path, default=None, help="Write the inputs here (default: a temporary folder).")
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()}", flush=True)
    for mb in args.sizes:
        with tempfile.TemporaryDirectory(dir=args.keep) as tmp:
            records, answers, n = write_inputs(Path(tmp), mb)
            size = answers.stat().st_size / 1e6
            row = {"answers_mb": round(size, 1), "records_mb": round(records.stat().st_size / 1e6, 1), "answers": n}
            if args.baseline_dir:
                row["before"] = measure(args.baseline_dir, answers, records)
            row["after"] = measure(ROOT, answers, records)
            if args.baseline_dir and row["before"]["spans"] != row["after"]["spans"]:
                raise SystemExit(f"the two trees disagree: {row}")
            row["load"] = [round(x, 1) for x in os.getloadavg()]
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
