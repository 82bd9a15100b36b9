"""The cluster-wide rate limit on Ray: answers judged through the scripted server (200 ms latency) by a model
limited to ``--rpm``, on a local Ray with 4 workers, against the local engine (one process, its own limiter)
at the same limit in the same session.

    python bench/ray_rate_bench.py [--answers 800] [--rpm 600] [--workers 4]

The server stamps each request as it arrives. Reported per engine: the observed rate (requests over the span
from the first to the last request, and the most and fewest requests in the 60 s windows that start at a
request) against the limit, and the
throughput against the ideal the limit allows (requests x 60 / rpm seconds). One judge call per answer
(claims batched, triage off), cache off, so every answer is a request.
"""

from __future__ import annotations

import argparse
import bisect
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
LATENCY = 0.2


def rates(stamps: list[float], rpm: int) -> dict:
    stamps = sorted(stamps)
    span = stamps[-1] - stamps[0]
    counts = [bisect.bisect_left(stamps, t + 60.0) - i for i, t in enumerate(stamps)]
    window = max(counts)
    inside = [c for c, t in zip(counts, stamps) if t + 60.0 <= stamps[-1]]  # windows wholly within the span
    ideal = len(stamps) * 60.0 / rpm
    return {
        "requests": len(stamps),
        "span_s": round(span, 1),
        "rate_rpm": round((len(stamps) - 1) / span * 60.0, 1),
        "rate_vs_limit": round((len(stamps) - 1) / span * 60.0 / rpm, 3),
        "max_in_60s": window,
        "min_in_full_60s": min(inside) if inside else None,
        "ideal_s": round(ideal, 1),
    }


def config_for(tmp: Path, data: Path, answers: Path, server: ScriptedServer, rpm: int, engine: str) -> Path:
    config = {
        "name": f"rate-{engine}",
        "dataset": {"path": str(data)},
        "answers": {"path": str(answers)},
        "models": {"judge": {"model": "openai/rate-judge", "api_base": server.base_url, "family": "rate", "timeout": 10,
                              "rpm": rpm, "max_concurrency": 16}},
        "decompose": {"method": "sentences"},
        "adjudicate": {"judges": ["judge"], "triage": False, "batch_claims": True},
        "controls": {"enabled": False},
        "cache_dir": str(tmp / f"cache-{engine}"),
        "record_concurrency": 8,
        "engine": engine,
        "ray": {"batch_size": 8},
    }
    path = tmp / f"{engine}.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True))
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--answers", type=int, default=800)
    ap.add_argument("--rpm", type=int, default=600)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--engines", nargs="+", default=["ray", "local"])
    args = ap.parse_args()
    import ray

    from judge.config import load_run_config
    from judge.runs.runner import execute

    ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False, logging_level="ERROR", _node_ip_address="127.0.0.1",
             runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}})
    rows = []
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        data, answers = make_dataset(SAMPLE, ANSWERS, tmp, args.answers)
        for engine in args.engines:
            stamps: list[float] = []
            with ScriptedServer(stamped(pipeline_model(), stamps, threading.Lock(), LATENCY), keep_bodies=False) as server:
                config = load_run_config(config_for(tmp, data, answers, server, args.rpm, engine))
                started = time.perf_counter()
                _, summary = execute(config, runs_root=tmp / f"runs-{engine}", use_cache=False)
                wall = time.perf_counter() - started
                statuses = dict(server.stats.statuses)
            row = {"engine": engine, "workers": args.workers if engine == "ray" else 1, "rpm": args.rpm,
                   "records": summary["run"]["records_finished"], **rates(stamps, args.rpm), "wall_s": round(wall, 1),
                   "statuses": statuses}
            row["span_vs_ideal"] = round(row["span_s"] / row["ideal_s"], 3)
            row["wall_vs_ideal"] = round(wall / row["ideal_s"], 3)
            rows.append(row)
            print(json.dumps(row), flush=True)
    ray.shutdown()
    print("\n| engine | workers | requests | limit rpm | observed rpm (ratio) | 60 s windows: most, fewest | span / ideal | wall / ideal |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['engine']} | {r['workers']} | {r['requests']} | {r['rpm']} | {r['rate_rpm']} ({r['rate_vs_limit']:.3f}x) | "
              f"{r['max_in_60s']}, {r['min_in_full_60s']} | {r['span_s']} / {r['ideal_s']} s = {r['span_vs_ideal']:.3f}x | {r['wall_s']} s = {r['wall_vs_ideal']:.3f}x |")


if __name__ == "__main__":
    main()
