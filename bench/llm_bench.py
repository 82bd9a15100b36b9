"""The LLM port's overhead, against the ideal and against bare litellm calls in the same run.

Usage: python bench/llm_bench.py [--calls 200] [--concurrency 16] [--latency 0.2] [--rounds 5]
Scripted OpenAI-compatible server on 127.0.0.1 with a fixed latency per request. Both sides are warmed up
first; each round times the port (cold cache) and bare ``litellm.acompletion`` back to back, in alternating
order, so a busy shared machine slows both alike; the figure is the median over rounds of port/bare.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from judge.llm import LLM, CallCache, ModelConfig
from judge.llm.litellm_setup import litellm


class Verdict(BaseModel):
    label: Literal["supported", "partially_supported", "unsupported", "contradicted"]
    evidence: list[str]
    rationale: str


def messages(i: int) -> list[dict]:
    return [{"role": "system", "content": "You judge claims."}, {"role": "user", "content": f"Claim number {i}: is it supported?"}]


async def through_port(cfg: ModelConfig, cache_dir: Path, n: int) -> tuple[float, LLM]:
    llm = LLM(CallCache(cache_dir))
    t = time.perf_counter()
    await asyncio.gather(*(llm.structured(cfg, messages(i), Verdict) for i in range(n)))
    return time.perf_counter() - t, llm


def cpu_and_result(fn):
    """(the function's result, CPU seconds this process spent on it): robust where wall time is not, on a
    machine shared with other jobs; the server runs in another process and is not counted."""
    c = time.process_time()
    out = fn()
    return out, time.process_time() - c


async def bare_litellm(base_url: str, n: int, concurrency: int, model: str) -> float:
    lm = litellm()
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int):
        async with sem:
            await lm.acompletion(model=model, api_base=base_url, api_key="x", messages=messages(i), num_retries=0)

    t = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    return time.perf_counter() - t


def help_seconds(repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "judge.cli", "--help"], capture_output=True, check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--model", default="openai/gpt-4o-mini", help="model id sent to the scripted server (priced by litellm's map)")
    args = ap.parse_args()
    body = {"label": "supported", "evidence": ["c1"], "rationale": "stated in c1"}
    ideal = args.calls * args.latency / args.concurrency
    # The server runs in its own process, as a provider would: in-process it would compete for the GIL.
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("scripted_server.py")), "--latency", str(args.latency), "--body", json.dumps(body)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    base_url = proc.stdout.readline().strip()
    try:
        cfg = ModelConfig(model=args.model, api_base=base_url, max_concurrency=args.concurrency)  # gpt-*: family openai
        litellm()  # import once, outside the timings
        # Both sides warm up alike: instructor's provider handlers are imported on the port's first call
        # (about 0.5 s once per process, which the first round's port time used to carry).
        asyncio.run(bare_litellm(base_url, 4, 4, args.model))
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(through_port(cfg, Path(tmp), 4))
        rounds = []
        for r in range(args.rounds):
            if r % 2:  # every other round the bare calls go first, so a drifting load favours neither side
                bare, bare_cpu = cpu_and_result(lambda: asyncio.run(bare_litellm(base_url, args.calls, args.concurrency, args.model)))
            with tempfile.TemporaryDirectory() as tmp:
                (cold, llm), cold_cpu = cpu_and_result(lambda: asyncio.run(through_port(cfg, Path(tmp), args.calls)))
                peak = max(lim.peak for lim in llm._limiters.values())
                warm, llm2 = asyncio.run(through_port(cfg, Path(tmp), args.calls))
            if not r % 2:
                bare, bare_cpu = cpu_and_result(lambda: asyncio.run(bare_litellm(base_url, args.calls, args.concurrency, args.model)))
            rounds.append((cold, bare, cold_cpu, bare_cpu))
        cold, bare, cold_cpu, bare_cpu = sorted(rounds, key=lambda r: r[0] / r[1])[len(rounds) // 2]
        cpu_ratio = sorted(r[2] / r[3] for r in rounds)[len(rounds) // 2]
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
    print(f"{args.calls} structured calls, {args.latency * 1000:.0f} ms server latency, concurrency {args.concurrency}")
    print(f"- ideal {ideal:.2f} s; through the port {cold:.2f} s = {cold / ideal:.2f}x ideal (target <= 1.3x); "
          f"bare litellm.acompletion, same concurrency: {bare:.2f} s = {bare / ideal:.2f}x ideal; port/bare = {cold / bare:.2f}x")
    print(f"- rounds (port s / bare s): {', '.join(f'{r[0]:.2f}/{r[1]:.2f}={r[0] / r[1]:.2f}x' for r in rounds)}; median round shown")
    print(f"- CPU of this process per call: port {cold_cpu / args.calls * 1000:.2f} ms, bare {bare_cpu / args.calls * 1000:.2f} ms; "
          f"port/bare CPU, median of rounds: {cpu_ratio:.2f}x")
    print(f"- port: {llm.totals.calls} calls made, peak concurrency {peak}")
    print(f"- fully cached rerun: {warm:.3f} s ({llm2.cache.hits} hits, {llm2.totals.calls} calls made; target < 1 s)")
    print(f"- judge --help: {help_seconds():.3f} s median of 5 (target < 0.5 s)")


if __name__ == "__main__":
    main()
