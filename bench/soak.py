"""The full fault soak (the tests run a short one): 1,000 answers through the scripted server with seeded faults
and a server restart in the middle; then a fully cached rerun; then the same run killed by SIGKILL three
times at random points and resumed, against the uninterrupted one. Peak RSS at 100 and at 1,000 answers,
and the no-fault wall time as the baseline.

Usage: python bench/soak.py [--answers 1000]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from judge.verdicts import LABELS
from judge.testing.scripts import pipeline_model
from judge.testing.server import ScriptedServer
from judge.testing.soak import PRICE, comparable, faulty_judge, kill_resume, make_dataset, restart_when, run_cli, write_config

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "judge" / "data" / "he_sample.json"
ANSWERS = ROOT / "judge" / "data" / "he_sample_answers.jsonl"


def timed_run(config: Path, runs: Path) -> tuple[dict, float, float]:
    t = time.perf_counter()
    result, rss = run_cli(config, runs)
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-3000:])
    return json.loads(result.stdout), time.perf_counter() - t, rss


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--answers", type=int, default=1000)
    args = ap.parse_args()
    n = args.answers
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        data, answers = make_dataset(SAMPLE, ANSWERS, tmp, n)
        (tmp / "small").mkdir()
        small_data, small_answers = make_dataset(SAMPLE, ANSWERS, tmp / "small", 100)
        # baseline: no faults
        with ScriptedServer(pipeline_model(), keep_bodies=False) as clean:
            summary0, wall0, rss0 = timed_run(write_config(tmp, data, answers, clean, tmp / "c0", name="nofault"), tmp / "r0")
            _, _, rss_small = timed_run(write_config(tmp / "small", small_data, small_answers, clean, tmp / "c-small", name="small"), tmp / "r-small")
        # the soak: faults and a restart halfway
        with ScriptedServer(faulty_judge(seed=7), keep_bodies=False) as server:
            done = threading.Event()
            restart = restart_when(server, tmp / "r1", n // 4, done)
            config = write_config(tmp, data, answers, server, tmp / "c1", name="soak")
            summary1, wall1, rss1 = timed_run(config, tmp / "r1")
            done.set()
            statuses = dict(server.stats.statuses)
            requests = server.stats.requests
            served = (server.stats.prompt_tokens, server.stats.completion_tokens)
            summary2, wall2, _ = timed_run(config, tmp / "r2")
            cached_requests = server.stats.requests - requests
            # SIGKILL three times at random points, resume, compare with the uninterrupted soak
            rng = random.Random(3)
            points = sorted(rng.sample(range(5, n // 2 - 5), 3))
            killed_config = write_config(tmp, data, answers, server, tmp / "c3", name="killed")
            t0 = time.perf_counter()
            killed_dir = kill_resume(killed_config, tmp / "r3", points)
            wall3 = time.perf_counter() - t0
        soak_dir = Path(summary1["run_dir"])
        lines = (soak_dir / "results.jsonl").read_text().splitlines()
        ids = [json.loads(line)["record_id"] for line in lines]
        claims = [c for line in lines for a in json.loads(line)["answers"] for c in a["claims"]]
        errors = Counter(c["verdicts"][0]["error"].split(":")[0] for c in claims if c["label"] == "judge_error")
        usage = summary1["usage"]
        cost = (served[0] * PRICE["input_per_million"] + served[1] * PRICE["output_per_million"]) / 1e6
        same = comparable(killed_dir) == comparable(soak_dir)
    print(f"answers {n} over {len(ids)} records ({len(set(ids))} distinct, records lost: {n // 2 - len(set(ids))}); claims {len(claims)}")
    print(f"server: {requests} requests, statuses {statuses} (-1 = hung, dropped unanswered); restarted after {restart.get('restarted_at')} results")
    print(f"claims judged {sum(c['label'] in LABELS for c in claims)}, judge_error {sum(c['label'] == 'judge_error' for c in claims)} {dict(errors)}")
    print(f"tokens: run {usage['prompt_tokens']} + {usage['completion_tokens']}, server {served[0]} + {served[1]} (equal: {(usage['prompt_tokens'], usage['completion_tokens']) == served}); "
          f"cost run ${usage['cost_usd']:.6f}, from server tokens ${cost:.6f}")
    print(f"wall: soak {wall1:.1f} s vs no-fault {wall0:.1f} s ({wall1 / wall0:.2f}x); cached rerun {wall2:.1f} s with {cached_requests} requests")
    print(f"peak RSS: {rss_small:.0f} MB at 100 answers, {rss0:.0f} MB at {n} (no faults), {rss1:.0f} MB at {n} with faults ({rss0 / rss_small:.2f}x)")
    print(f"SIGKILL at {points} results, resumed each time: {wall3:.1f} s; final results equal to the uninterrupted soak: {same}")


if __name__ == "__main__":
    main()
