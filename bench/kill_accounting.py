"""Accounting across SIGKILLs (issue 17.9): a faulty-server run killed three times and resumed. Prints, from
the same run, what the server delivered, what calls.jsonl holds, what summary.json reports (now: from
calls.jsonl) and what the finished records' own usage adds up to (how summary.json counted before: the
calls of records lost to a kill were dropped).

Usage: python bench/kill_accounting.py [--answers 40] [--kills 3 8 14]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from judge.testing.server import ScriptedServer
from judge.testing.soak import faulty_judge, kill_resume, make_dataset, write_config

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "judge" / "data" / "he_sample.json"
ANSWERS = ROOT / "judge" / "data" / "he_sample_answers.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--answers", type=int, default=40)
    ap.add_argument("--kills", type=int, nargs="+", default=[3, 8, 14])
    args = ap.parse_args()
    server = ScriptedServer(faulty_judge(seed=5), keep_bodies=False).start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            data, answers = make_dataset(SAMPLE, ANSWERS, tmp, answers=args.answers)
            config = write_config(tmp, data, answers, server, tmp / "cache", name="killed")
            run_dir = kill_resume(config, tmp / "runs", kill_after_lines=args.kills)
            calls = [json.loads(line) for line in (run_dir / "calls.jsonl").read_text().splitlines()]
            spent = [c for c in calls if not c["cached"]]
            results = [json.loads(line)["usage"] for line in (run_dir / "results.jsonl").read_text().splitlines()]
            summary = json.loads((run_dir / "summary.json").read_text())["usage"]
            rows = {
                "server delivered": (server.stats.requests, server.stats.prompt_tokens, server.stats.completion_tokens),
                "calls.jsonl": (len(spent), sum(c["prompt_tokens"] for c in spent), sum(c["completion_tokens"] for c in spent)),
                "summary.json": (summary["calls"], summary["prompt_tokens"], summary["completion_tokens"]),
                "finished records' usage (the old summary)": (sum(r["calls"] for r in results), sum(r["prompt_tokens"] for r in results),
                                                              sum(r["completion_tokens"] for r in results)),
            }
            print(f"{args.answers} answers, SIGKILL at {args.kills} results, resumed after each")
            print("| source | calls (server: requests) | prompt tokens | completion tokens |\n|---|---|---|---|")
            for name, (n, p, c) in rows.items():
                print(f"| {name} | {n:,} | {p:,} | {c:,} |")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
