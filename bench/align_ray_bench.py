"""`judge align --engine ray` at scale: the synthetic corpus of bench/align_bench.py, rows aligned by the local
engine (the baseline, one process holding the whole title index) and by Ray Data over N shards, each shard's
task holding only its share of the index; per-worker throughput and the projection to 21M chunks.

Usage: python bench/align_ray_bench.py [--chunks 200000] [--rows 5000] [--workers 2] [--shared ../shared/data]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.align_bench import FULL_CORPUS, write_corpus  # noqa: E402
from judge.align import align  # noqa: E402
from judge.align_ray import align_on_ray  # noqa: E402
from judge.datasets.flashrag import TitleIndex  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, default=200_000)
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--shared", default=str(ROOT.parent / "shared" / "data"))
    args = ap.parse_args()
    import ray

    toy = [json.loads(line) for line in (Path(args.shared) / "external/flashrag_toy/sample_data.jsonl").read_text().splitlines()]
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        write_corpus(toy, args.chunks, corpus)
        t = time.perf_counter()
        index = TitleIndex(corpus)
        build_s = time.perf_counter() - t
        rng = random.Random(0)
        rows = []
        for i in range(args.rows):
            chunk = index.chunk_by_position(rng.randrange(len(index)))
            words = chunk.text.split()
            start = rng.randrange(max(1, len(words) - 20))
            sentence = " ".join(words[start : start + 15]) + "."
            rows.append({"id": f"r{i}", "question": "?", "golden_answers": ["x"],
                         "metadata": {"supporting_facts": [[chunk.title, 0]], "context": [[chunk.title, [sentence]]]}})
        t = time.perf_counter()
        kept_local, stats_local = align(rows, index)
        align_s = time.perf_counter() - t
        ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False, logging_level="ERROR", _node_ip_address="127.0.0.1",
                 runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}})
        runs = {}
        for label, split in (("scan", False), ("split, first run (splits the corpus)", True), ("split, reused", True)):
            timings: list[dict] = []
            t = time.perf_counter()
            kept_ray, stats_ray = align_on_ray(rows, corpus, args.workers, timings, split=split)
            runs[label] = (time.perf_counter() - t, timings, kept_ray == kept_local and stats_ray.as_dict() == stats_local.as_dict())
        ray.shutdown()
    _, timings, same = runs["scan"]
    ray_s = runs["scan"][0]
    print(f"corpus {args.chunks:,} chunks; {args.rows:,} rows; same output as local: {all(r[2] for r in runs.values())}")
    local_s = build_s + align_s
    for label, (wall, tms, _) in runs.items():
        builds = ", ".join(f"{tm['build_s']:.1f}" for tm in sorted(tms, key=lambda x: x["shard"]))
        print(f"ray {label}: wall {wall:.1f} s = {wall / local_s:.2f}x local's {local_s:.1f} s (build + align); shard builds {builds} s")
    print(f"local (baseline): index build {build_s:.1f} s ({args.chunks / build_s:,.0f} chunks/s), align {align_s:.2f} s "
          f"({args.rows / align_s:,.0f} sentences/s), whole index in one process ({len(index):,} chunks)")
    print(f"ray, {args.workers} workers: wall {ray_s:.1f} s (Ray Data start, shuffle and tasks included)")
    for tm in sorted(timings, key=lambda x: x["shard"]):
        rate = tm["units"] / tm["align_s"] if tm["align_s"] else float("nan")
        print(f"  shard {tm['shard']}: holds {tm['chunks_held']:,} chunks ({tm['chunks_held'] / args.chunks:.0%} of the index); "
              f"build {tm['build_s']:.1f} s ({args.chunks / tm['build_s']:,.0f} chunks scanned/s); {tm['units']:,} sentences in "
              f"{tm['align_s']:.2f} s = {rate:,.0f} sentences/s")
    scan = sum(args.chunks / tm["build_s"] for tm in timings) / len(timings)
    rate = sum(tm["units"] for tm in timings) / sum(tm["align_s"] for tm in timings)
    print(f"projection, {FULL_CORPUS:,} chunks and 200,000 sentences (HotpotQA train) on N workers: every worker scans the whole "
          f"corpus (~{FULL_CORPUS / scan / 60:.0f} min at {scan:,.0f} chunks/s), holds 1/N of the index, aligns 1/N of the sentences "
          f"({rate:,.0f}/s per worker):")
    for n in (1, 4, 16, 64):
        print(f"  N={n}: build ~{FULL_CORPUS / scan / 60:.0f} min, align ~{200_000 / (rate * n) / 60:.1f} min, index share ~{FULL_CORPUS / n:,.0f} chunks")


if __name__ == "__main__":
    main()
