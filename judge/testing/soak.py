"""The fault soak: many answers through the scripted server with seeded faults (429s, 500s, hangs, bad JSON),
a server restart, SIGKILLs and resumes; tests run it short, bench/soak.py in full.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml

from judge.testing.rss import cli_with_peak_rss
from judge.testing.scripts import pipeline_model
from judge.testing.server import Reply, ScriptedServer

PRICE = {"input_per_million": 1.0, "output_per_million": 2.0}
FAULTS = (("429", 0.10), ("500", 0.05), ("hang", 0.03), ("bad_json", 0.03))


def faulty_judge(seed: int = 7, timeout: float = 1.0):
    honest = pipeline_model()

    def script(request: dict, n: int) -> Reply:
        rng = random.Random(f"{seed}:{n}")
        x, edge = rng.random(), 0.0
        for kind, p in FAULTS:
            edge += p
            if x < edge:
                if kind == "429":
                    return Reply(status=429, retry_after=round(rng.uniform(0.05, 0.3), 2))
                if kind == "500":
                    return Reply(status=500)
                if kind == "hang":
                    return Reply(hang=timeout * 1.5)
                return Reply(raw=rng.choice(['{"verdicts": [{"claim_id": "1", "label": "supp', "not json at all", '{"verdicts": []}']))
        return honest(request, n)

    return script


def make_dataset(source_records: Path, source_answers: Path, out_dir: Path, answers: int) -> tuple[Path, Path]:
    """``answers`` answers over ``answers // 2`` records, copied from the fixtures under new ids."""
    records = json.loads(source_records.read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in source_answers.read_text(encoding="utf-8").splitlines()]
    by_record = {}
    for a in rows:
        by_record.setdefault(a["record_id"], []).append(a)
    out_records, out_answers = [], []
    i = 0
    while len(out_answers) < answers:
        r = records[i % len(records)]
        rid = f"{r['id']}-{i:05d}"
        out_records.append({**r, "id": rid, "question": f"{r['question']} (#{i})"})  # every prompt differs: no cache hits
        for a in by_record.get(r["id"], [])[: answers - len(out_answers)]:
            out_answers.append({**a, "record_id": rid})
        i += 1
    data = out_dir / "records.json"
    data.write_text(json.dumps(out_records, ensure_ascii=False), encoding="utf-8")
    ans = out_dir / "answers.jsonl"
    ans.write_text("".join(json.dumps(a, ensure_ascii=False) + "\n" for a in out_answers), encoding="utf-8")
    return data, ans


def write_config(out_dir: Path, data: Path, answers: Path, server: ScriptedServer, cache: Path, name: str = "soak", timeout: float = 1.0) -> Path:
    config = {
        "name": name,
        "dataset": {"path": str(data)},
        "answers": {"path": str(answers)},
        "models": {"judge": {"model": "openai/soak-judge", "api_base": server.base_url, "family": "soak", "timeout": timeout,
                              "max_attempts": 8, "max_retry_seconds": 120, "validation_retries": 2, "max_concurrency": 8, "price": PRICE}},
        "decompose": {"method": "sentences"},
        "adjudicate": {"judges": ["judge"], "triage": False},
        "cache_dir": str(cache),
        "record_concurrency": 8,
        "controls": {"gate": False},  # the soak's judge calls every claim supported: it tests faults, not judges
        "max_error_rate": 0.2,  # injected garbage can outlast a claim's re-asks: a few judge_error claims are expected
    }
    path = out_dir / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True))
    return path


def judge_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "judge.cli", *args]


def run_cli(config: Path, runs: Path, *extra: str, timeout: float = 1800) -> tuple[subprocess.CompletedProcess, float]:
    """``judge run`` in a child process: (result, its peak RSS in MB, NaN where it never said)."""
    args = ("run", str(config), "--runs-dir", str(runs), "--json", "--no-progress", *extra)
    result, peak = cli_with_peak_rss(*args, cwd=Path.cwd(), timeout=timeout)
    return result, peak / 2**20 if peak else float("nan")


def restart_when(server: ScriptedServer, runs: Path, lines: int, done: threading.Event) -> dict:
    """Restart the server once the run under ``runs`` has written ``lines`` results (watched from a thread).
    The returned dict gets ``restarted_at`` (the line count seen) when it happens."""
    seen: dict = {}

    def watch():
        while not done.is_set():
            run_dir = _run_dir(runs)
            results = run_dir / "results.jsonl" if run_dir else None
            if results is not None and results.exists():
                count = results.read_bytes().count(b"\n")
                if count >= lines:
                    server.restart()
                    seen["restarted_at"] = count
                    return
            time.sleep(0.02)

    threading.Thread(target=watch, daemon=True).start()
    return seen


def kill_resume(config: Path, runs: Path, kill_after_lines: list[int], timeout: float = 600) -> Path:
    """Start a run, SIGKILL it when results reach each count in turn (resuming in between), then finish it."""
    proc = subprocess.Popen(judge_cmd("run", str(config), "--runs-dir", str(runs), "--json", "--no-progress"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    run_dir = _wait_for_run_dir(runs, timeout)
    for target in kill_after_lines:
        _wait_for_lines(run_dir / "results.jsonl", target, proc, timeout)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc = subprocess.Popen(judge_cmd("run", str(config), "--resume", str(run_dir), "--json", "--no-progress"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"resumed run failed: {err.decode()[-2000:]}")
    return run_dir


def _wait_for_run_dir(runs: Path, timeout: float) -> Path:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if run_dir := _run_dir(runs):
            return run_dir
        time.sleep(0.02)
    raise TimeoutError("no run directory appeared")


def _run_dir(runs: Path) -> Path | None:
    dirs = [d for d in runs.iterdir() if d.is_dir()] if runs.exists() else []
    return dirs[0] if dirs else None


def _wait_for_lines(path: Path, lines: int, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= lines:
            return
        time.sleep(0.01)


def comparable(run_dir: Path) -> list[dict]:
    """Results without what was spent (usage, and the controls' share of it: both differ between a cached and
    an uncached record; docs/runs.md, what "byte-identical" covers across a resume)."""
    out = []
    for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        r.pop("usage")
        r.pop("control_cost", None)
        out.append(r)
    return out
