"""A long question read with a short answer (issue 50.13): a question of bullets or of a numbered list, 5, 10
and 20 KB, and the answer "The plan." (no clause of its own, so its claim is read with its question: a claim
of the whole question). One record each through ``judge.evaluate`` with the deterministic config (no model),
timed; with ``--against REV`` the same records through the code of commit REV (``git archive`` of its
``judge/`` into a temporary folder, run in a child process), in the same run, and the ratio.

    python bench/question_reading.py [--sizes 5 10 20] [--against REV]

Every number of such a claim ("item 7 of the plan") was read in its slot by a search over every number of
the claim (judge.stages.alignment._number_slots called judge.stages.slots.aligned_mismatches once per
number, each reading every number again): quadratic in the question's numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "The council approved the plan in 2019. It cost 5 million shekels, and item 4 of the plan was dropped."


def question(kind: str, kb: int) -> str:
    items, size, i = [], 0, 0
    while size < kb * 1000:
        i += 1
        item = ("- " if kind == "bullets" else f"{i}. ") + f"What did the council decide about item {i} of the plan in {1990 + i % 30}"
        items.append(item)
        size += len(item) + 1
    return "\n".join(items)


def timed(kind: str, kb: int) -> float:
    import judge

    record = {"id": f"{kind}-{kb}", "question": question(kind, kb), "source": SOURCE, "answer": "The plan."}
    config = {"name": "bench", "dataset": {"path": "unused.jsonl"}, "decompose": {"method": "sentences"},
              "adjudicate": {"judges": ["deterministic"]}, "cache_dir": str(Path(tempfile.gettempdir()) / "judge-bench-cache")}
    with tempfile.TemporaryDirectory() as runs:
        started = time.perf_counter()
        judge.evaluate(config, records=[record], runs_dir=runs, reports=False, use_cache=False)
        return time.perf_counter() - started


def child(sizes: list[int]) -> dict:
    timed("bullets", 1)  # the imports and the no-model judge's weights, once, outside the figures
    return {f"{kind} {kb} KB": round(timed(kind, kb), 2) for kind in ("bullets", "numbered") for kb in sizes}


def against(rev: str, sizes: list[int]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "judge", "configs", "prompts"], check=True, capture_output=True).stdout
        tar = Path(tmp) / "judge.tar"
        tar.write_bytes(archive)
        with tarfile.open(tar) as t:
            t.extractall(tmp, filter="data")
        out = subprocess.run([sys.executable, __file__, "--child", *map(str, sizes)], check=True, capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": tmp}, cwd=tmp)
        return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", type=int, nargs="+", default=[5, 10, 20])
    p.add_argument("--against", help="a commit whose judge/ to time on the same records (e.g. the one before the fix)")
    p.add_argument("--child", type=int, nargs="+", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        print(json.dumps(child(args.child)))
        return
    now = child(args.sizes)
    old = against(args.against, args.sizes) if args.against else {}
    print(f"{'question':<18} {'now (s)':>9}" + (f" {args.against[:10] + ' (s)':>16} {'ratio':>7}" if old else ""))
    for key, seconds in now.items():
        line = f"{key:<18} {seconds:>9.2f}"
        if old:
            line += f" {old[key]:>16.2f} {old[key] / seconds:>6.1f}x"
        print(line)


if __name__ == "__main__":
    main()
