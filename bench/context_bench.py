"""Judging with the candidate spans against judging with the whole source in the prompt.

Usage: python bench/context_bench.py [--shared ../shared/data] [--wice-limit N]
Both runs go through the real pipeline and the scripted server (which counts one token per four characters
of the prompt), with triage off so that every claim reaches the judge. Reports model calls per answer and
prompt tokens per claim for `judge_context: candidates` and `judge_context: full`, and their ratio.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from judge.datasets import load
from judge.llm import ModelConfig
from judge.config import AdjudicateSection, AnswersRef, DatasetRef, DecomposeSection, RunConfig
from judge.runs.runner import execute
from judge.testing.scripts import pipeline_model
from judge.testing.server import ScriptedServer


def run(server: ScriptedServer, dataset: Path, fmt: str, answers: Path, context: str, decompose: str, tmp: Path, batch: bool) -> dict:
    judge = ModelConfig(model="openai/judge", name="judge", api_base=server.base_url, family="bench-judge")
    config = RunConfig(
        name=f"ctx-{context}",
        dataset=DatasetRef(path=str(dataset), format=fmt),
        answers=AnswersRef(path=str(answers)),
        models={"judge": judge},
        decompose=DecomposeSection(method=decompose),
        adjudicate=AdjudicateSection(judges=["judge"], triage=False, judge_context=context, batch_claims=batch),
        cache_dir=str(tmp / "cache"),
        record_concurrency=8,
    )
    before = (server.stats.requests, server.stats.prompt_tokens)
    _, summary = execute(config, runs_root=tmp / "runs", name=f"ctx-{context}", use_cache=False)
    calls = server.stats.requests - before[0]
    prompt = server.stats.prompt_tokens - before[1]
    claims = summary["overall"]["claims"]
    return {"answers": summary["answers"], "claims": claims, "calls": calls, "prompt_tokens": prompt,
            "calls_per_answer": calls / summary["answers"], "prompt_tokens_per_claim": prompt / claims}


def wice_answers(path: Path, out: Path, limit: int | None) -> Path:
    records = load(path, "wice")[:limit] if limit else load(path, "wice")
    with open(out, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps({"record_id": r.id, "model": "wice-claim", "answer": r.claims[0].text}, ensure_ascii=False) + "\n")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    ap.add_argument("--wice-limit", type=int, default=None)
    args = ap.parse_args()
    shared = Path(args.shared)
    with tempfile.TemporaryDirectory() as t, ScriptedServer(pipeline_model(), keep_bodies=False) as server:
        tmp = Path(t)
        wice = shared / "external/wice/claim_test.jsonl"
        answers = wice_answers(wice, tmp / "wice_answers.jsonl", args.wice_limit)
        rows = {}
        for context in ("candidates", "full"):
            rows[("WiCE test", context)] = run(server, wice, "wice", answers, context, "whole", tmp / f"w-{context}", batch=True)
        he = shared / "he_qa_sample.json"
        he_answers = shared / "he_model_answers_sample.jsonl"
        for context in ("candidates", "full"):
            rows[("he_qa_sample + answers", context)] = run(server, he, "hebrew-qa", he_answers, context, "sentences", tmp / f"h-{context}", batch=True)
    print("| data | judge_context | answers | claims | model calls / answer | prompt tokens / claim |")
    print("|---|---|---|---|---|---|")
    for (data, context), r in rows.items():
        print(f"| {data} | {context} | {r['answers']} | {r['claims']} | {r['calls_per_answer']:.2f} | {r['prompt_tokens_per_claim']:.0f} |")
    for data in ("WiCE test", "he_qa_sample + answers"):
        c, f = rows[(data, "candidates")], rows[(data, "full")]
        print(f"{data}: candidates / full prompt tokens per claim = {c['prompt_tokens_per_claim'] / f['prompt_tokens_per_claim']:.3f}")


if __name__ == "__main__":
    main()
