"""Search quality and speed, each next to the plain-BM25 baseline measured in the same run.

Usage: python bench/search_bench.py [--shared ../shared/data] [--json OUT]
Prints a Markdown table (the one recorded in bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

from judge.datasets import load
from judge.search import Index
from judge.search.evaluate import PlainBM25, evaluate

DATASETS = [
    ("he_qa_sample.json (reference claims)", "he_qa_sample.json", "hebrew-qa", "span_recall"),
    ("WiCE test", "external/wice/claim_test.jsonl", "wice", "hit@5"),
    ("WiCE test", "external/wice/claim_test.jsonl", "wice", "hit@10"),
    ("HeQ test (question + answer as claim)", "external/heq/test_v1.1.json", "squad", "hit@1"),
    ("FaQuAD (question + answer as claim)", "external/faquad/dataset.json", "squad", "hit@1"),
]


def quality(shared: Path) -> list[dict]:
    rows, cache = [], {}
    for label, rel, fmt, metric in DATASETS:
        if rel not in cache:
            records = load(shared / rel, fmt) if fmt != "squad" or "faquad" not in rel else _load_lenient(shared / rel)
            cache[rel] = evaluate(records, fmt, k=5)
        rep = cache[rel]
        ours, base = rep["overall"][metric], rep["baseline_overall"][metric]
        rows.append({"dataset": label, "metric": metric, "claims": rep["overall"]["claims"], "ours": ours, "baseline": base, "ratio": ours / base if base else None})
    return rows


def _load_lenient(path: Path):
    """FaQuAD has 33 misaligned gold offsets; score against the records as read (problems included)."""
    from judge.datasets import load_checked

    return load_checked(path, "squad").items


def wice_speed(shared: Path, repeats: int = 3) -> dict:
    """Whole WiCE test: index every source and search every claim (k=10, as search-eval does)."""
    records = load(shared / "external/wice/claim_test.jsonl", "wice")

    def ours():
        for r in records:
            index = Index(r.source_text, r.id)
            for c in r.claims:
                index.search(c.text, 10)

    def baseline():
        for r in records:
            plain = PlainBM25(r.source_text, r.id)
            for c in r.claims:
                plain.search(c.text, 10)

    t_ours = min(_time(ours) for _ in range(repeats))
    t_eval = min(_time(lambda: evaluate(records, "wice", 5)) for _ in range(repeats))
    t_base = min(_time(baseline) for _ in range(repeats))
    return {"ours_s": t_ours, "search_eval_s": t_eval, "baseline_s": t_base, "claims": sum(len(r.claims) for r in records)}


def hebrew_latency(shared: Path, target_chars: int = 25_000) -> dict:
    """One claim against a 25,000-character Hebrew source, once indexed (median over the fixture claims)."""
    records = load(shared / "he_qa_sample.json", "hebrew-qa")
    source = ""
    while len(source) < target_chars:
        for r in records:
            source += r.source_text + "\n"
    source = source[:target_chars]
    t0 = time.perf_counter()
    index = Index(source)
    build = time.perf_counter() - t0
    claims = [c.text for r in records for c in r.claims]
    index.search(claims[0], 5)  # warm the caches once
    times = []
    for text in claims:
        t = time.perf_counter()
        index.search(text, 5)
        times.append(time.perf_counter() - t)
    plain = PlainBM25(source, None, index.sentences)
    base = []
    for text in claims:
        t = time.perf_counter()
        plain.search(text, 5)
        base.append(time.perf_counter() - t)
    return {
        "chars": len(source),
        "sentences": len(index.sentences),
        "build_ms": build * 1000,
        "median_ms": statistics.median(times) * 1000,
        "max_ms": max(times) * 1000,
        "baseline_median_ms": statistics.median(base) * 1000,
    }


def _time(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    ap.add_argument("--json")
    args = ap.parse_args()
    shared = Path(args.shared)
    out = {"machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}"}
    out["quality"] = quality(shared)
    out["wice_speed"] = wice_speed(shared)
    out["hebrew_latency"] = hebrew_latency(shared)
    print(f"machine: {out['machine']}\n")
    print("| dataset | metric | claims | judge.search | plain BM25 | ratio |\n|---|---|---|---|---|---|")
    for r in out["quality"]:
        print(f"| {r['dataset']} | {r['metric']} | {r['claims']} | {r['ours']:.3f} | {r['baseline']:.3f} | {r['ratio']:.2f}x |")
    w = out["wice_speed"]
    print(f"\nWiCE test, {w['claims']} claims, index + search (k=10): {w['ours_s']:.2f} s "
          f"(plain BM25 in the same run: {w['baseline_s']:.2f} s, ratio {w['ours_s'] / w['baseline_s']:.2f}x); "
          f"whole search-eval computation incl. metrics and baseline: {w['search_eval_s']:.2f} s")
    h = out["hebrew_latency"]
    print(f"Hebrew source of {h['chars']} chars ({h['sentences']} sentences): index built in {h['build_ms']:.1f} ms; "
          f"one claim: median {h['median_ms']:.2f} ms, max {h['max_ms']:.2f} ms "
          f"(plain BM25: median {h['baseline_median_ms']:.2f} ms, ratio {h['median_ms'] / h['baseline_median_ms']:.1f}x)")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
