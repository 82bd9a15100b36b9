"""Records/s of the Ray engine against its worker count (issue 29.3): the same answers judged through the scripted
server on a local Ray of 1, 2, 4 and 8 workers, and by the local engine at one worker's concurrency, in one session.

    python bench/ray_workers_bench.py [--workers 1 2 4 8] [--per-worker 40] [--latency 1.0] [--concurrency 2]

Each answer is one judge request (claims batched, triage, controls and cache off) that the server answers after
``--latency`` seconds; a worker judges ``--concurrency`` records at once, so one worker's ideal is concurrency /
latency records/s (a record's answers share its slot) and the engine's is that times the workers. The latency stands for a hosted judge's: the
workers mostly wait, so on a small machine the figures measure the engine (the driver, the batches, the actors)
rather than the machine's cores, up to the point where the workers' own CPU (parsing, searching, serialising)
fills the cores. Each size judges ``--per-worker`` x workers answers, so every row spans about the same time.

Reported per row: records/s over the span of the server's requests (first to last: Ray's start-up, which is
workers importing judge and litellm, is outside it), that rate per worker against one Ray worker's (1.00x is
linear scaling), and the wall with start-up.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from judge.testing.scripts import pipeline_model, stamped  # noqa: E402
from judge.testing.server import ScriptedServer  # noqa: E402
from judge.testing.soak import make_dataset  # noqa: E402

SAMPLE = ROOT / "judge" / "data" / "he_sample.json"
ANSWERS = ROOT / "judge" / "data" / "he_sample_answers.jsonl"


def config_for(tmp: Path, data: Path, answers: Path, server: ScriptedServer, engine: str, workers: int, concurrency: int,
               batch: int) -> Path:
    config = {
        "name": f"workers-{engine}-{workers}",
        "dataset": {"path": str(data)},
        "answers": {"path": str(answers)},
        "models": {"judge": {"model": "openai/workers-judge", "api_base": server.base_url, "family": "workers",
                             "timeout": 30, "max_concurrency": 4 * workers * concurrency}},
        "decompose": {"method": "sentences"},
        "adjudicate": {"judges": ["judge"], "triage": False, "batch_claims": True},
        "controls": {"enabled": False},
        "cache_dir": str(tmp / "cache"),
        "record_concurrency": concurrency,
        "engine": engine,
        "ray": {"batch_size": batch},
    }
    path = tmp / f"{engine}-{workers}.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True))
    return path


def one(tmp: Path, engine: str, workers: int, args) -> dict:
    import ray

    from judge.config import load_run_config
    from judge.runs.runner import execute

    n = args.per_worker * workers
    where = tmp / f"data-{engine}-{workers}"
    where.mkdir()
    data, answers = make_dataset(SAMPLE, ANSWERS, where, n)
    if engine == "ray":
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
                 _node_ip_address="127.0.0.1",
                 runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}})
    stamps: list[float] = []
    try:
        with ScriptedServer(stamped(pipeline_model(), stamps, threading.Lock(), args.latency), keep_bodies=False) as server:
            config = load_run_config(config_for(tmp, data, answers, server, engine, workers, args.concurrency, args.batch))
            started = time.monotonic()
            _, summary = execute(config, runs_root=tmp / "runs", use_cache=False)
            ended = time.monotonic()
    finally:
        if engine == "ray":
            ray.shutdown()
    stamps.sort()
    span = (stamps[-1] - stamps[0]) + args.latency  # the last request's answer ends the span
    records = summary["run"]["records_finished"]
    return {"engine": engine, "workers": workers, "answers": n, "requests": len(stamps), "records_finished": records,
            "span_s": round(span, 1), "records_per_s": round(records / span, 2), "answers_per_s": round(n / span, 2),
            "wall_s": round(ended - started, 1),
            "startup_s": round(stamps[0] - started, 1), "load": round(os.getloadavg()[0], 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--per-worker", type=int, default=40, help="answers per worker in each row")
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--concurrency", type=int, default=2, help="record_concurrency: records a worker judges at once")
    ap.add_argument("--batch", type=int, default=4, help="ray.batch_size")
    ap.add_argument("--no-local", action="store_true")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        plan = ([] if args.no_local else [("local", 1)]) + [("ray", w) for w in args.workers]
        for engine, workers in plan:
            row = one(tmp, engine, workers, args)
            rows.append(row)
            print(json.dumps(row), flush=True)
    one_worker = next((r for r in rows if r["engine"] == "ray" and r["workers"] == 1), rows[0])
    print("\n| engine | workers | records (answers) | records/s over the requests' span | per worker, against 1 Ray worker | wall (start-up) | load |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        scaling = r["records_per_s"] / r["workers"] / one_worker["records_per_s"]
        print(f"| {r['engine']} | {r['workers']} | {r['records_finished']} ({r['answers']}) | {r['records_per_s']} | {scaling:.2f}x | "
              f"{r['wall_s']} s ({r['startup_s']} s) | {r['load']} |")


if __name__ == "__main__":
    main()
