"""FlashRAG alignment at scale: title-index build time and memory, and alignment throughput, on a synthetic
corpus of N chunks made from the toy wiki-18 chunks (each toy chunk repeated under N/1000 distinct titles),
with the projection to the full 21M-chunk corpus.

Usage: python bench/align_bench.py [--chunks 1000000] [--shared ../shared/data]
The baseline in the same run: the naive index that holds every chunk's text in memory (built over the first
100,000 chunks only, and scaled), which is what the offset index avoids.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
import tracemalloc
from pathlib import Path

from judge.align import AlignStats, align_row
from judge.datasets.flashrag import TitleIndex, parse_chunk

FULL_CORPUS = 21_000_000


def write_corpus(toy: list[dict], n: int, path: Path) -> None:
    copies = n // len(toy)
    with open(path, "w", encoding="utf-8") as f:
        k = 0
        for c in range(copies):
            for chunk in toy:
                title, _, text = chunk["contents"].partition("\n")
                f.write(json.dumps({"id": str(k), "contents": f'"{title.strip(chr(34))} #{c}"\n{text}'}, ensure_ascii=False) + "\n")
                k += 1


def rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, default=1_000_000)
    ap.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    ap.add_argument("--rows", type=int, default=5000)
    args = ap.parse_args()
    toy = [json.loads(line) for line in (Path(args.shared) / "external/flashrag_toy/sample_data.jsonl").read_text().splitlines()]
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        write_corpus(toy, args.chunks, corpus)
        size_mb = corpus.stat().st_size / 1e6
        before = rss_mb()
        tracemalloc.start()
        t = time.perf_counter()
        index = TitleIndex(corpus)
        build_s = time.perf_counter() - t
        traced = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
        after = rss_mb()
        t = time.perf_counter()
        index._duplicate_ids()  # the refusal of a chunk id given twice, part of the build above, timed alone
        dup_s = time.perf_counter() - t
        # rows: one supporting sentence (a sentence of a random chunk) under that chunk's title
        rng = random.Random(0)
        rows = []
        for i in range(args.rows):
            pos = rng.randrange(len(index))
            chunk = index.chunk_by_position(pos)
            words = chunk.text.split()
            start = rng.randrange(max(1, len(words) - 20))
            sentence = " ".join(words[start : start + 15]) + "."
            rows.append({"id": f"r{i}", "question": "?", "golden_answers": ["x"],
                         "metadata": {"supporting_facts": [[chunk.title, 0]], "context": [[chunk.title, [sentence]]]}})
        stats = AlignStats()
        t = time.perf_counter()
        for r in rows:
            align_row(r, index, stats)
        align_s = time.perf_counter() - t
        # baseline: the naive text-holding index over the first 100k chunks
        tracemalloc.start()
        naive: dict[str, list] = {}
        with open(corpus, encoding="utf-8") as f:
            for i, line in enumerate(f):
                if i >= 100_000:
                    break
                c = parse_chunk(json.loads(line))
                naive.setdefault(c.title, []).append((c.id, c.text))
        naive_mb = tracemalloc.get_traced_memory()[1] / 1e6 * (args.chunks / 100_000)
        tracemalloc.stop()
    per_chunk = traced / args.chunks
    print(f"synthetic corpus: {args.chunks:,} chunks, {len({r for r in index.offsets}):,} titles, {size_mb:.0f} MB on disk")
    print(f"title index: built in {build_s:.1f} s ({args.chunks / build_s:,.0f} chunks/s); peak traced {traced:.0f} MB "
          f"({per_chunk * 1e6:.0f} bytes/chunk); RSS +{after - before:.0f} MB")
    print(f"of which the duplicate-id check (timed again alone): {dup_s:.2f} s = {dup_s / build_s:.1%} of the build")
    print(f"naive index holding the text (measured on 100,000 chunks, scaled): {naive_mb:.0f} MB, {naive_mb / traced:.1f}x the offset index")
    print(f"alignment: {args.rows:,} sentences in {align_s:.2f} s = {args.rows / align_s:,.0f} sentences/s; kept {stats.kept}/{stats.total}")
    print(f"projection to {FULL_CORPUS:,} chunks: index ~{per_chunk * FULL_CORPUS / 1e3:.1f} GB, build ~{FULL_CORPUS / (args.chunks / build_s) / 60:.0f} min on one core")


if __name__ == "__main__":
    main()
