"""Claims are the answer's (issue 24.1): what decomposition keeps, drops and reads with the question.

Two parts:

- ``--llm``: the embedded 0.5B decomposer (``local-qwen``) on recorded answers (the shared Hebrew sample's 32
  and the bundled 6). "Before" is what the decomposer stage kept until now (every claim with a non-empty text,
  located or not); "after" is the boundary (judge.stages.claims): kept, dropped by reason, fallbacks. The
  calls are cached (``--cache``), so a second run makes none.
- ``--short``: short gold answers with their question (HeQ, FaQuAD; the first N questions each) decomposed by
  ``sentences``: before, the claim is the answer alone ("Delhi"); after, it is read with its question. The
  number: the share whose best search candidate (top 1, and any of the top 4) holds the gold answer span.

Run from the repository root: ``python bench/decomposition_bench.py --llm --short``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from judge.llm import LLM, CallCache, LLMCallError  # noqa: E402
from judge.prompts import load_prompt  # noqa: E402
from judge.config import load_run_config  # noqa: E402
from judge.search import Index  # noqa: E402
from judge.stages.claims import admit_proposed, locate  # noqa: E402
from judge.stages.decompose import Decomposed, sentence_claims  # noqa: E402
from judge.text import detect_language  # noqa: E402

DATA = Path(os.environ.get("JUDGE_DATA", ROOT.parent / "shared" / "data"))


def _answers() -> list[tuple[str, str, str]]:
    """(question, answer, set name) for the shared Hebrew sample's answers and the bundled ones."""
    out = []
    for records, answers, name in (
        (DATA / "he_qa_sample.json", DATA / "he_model_answers_sample.jsonl", "shared Hebrew"),
        (ROOT / "judge" / "data" / "he_sample.json", ROOT / "judge" / "data" / "he_sample_answers.jsonl", "bundled"),
    ):
        if not records.exists():
            continue
        questions = {r["id"]: r["question"] for r in json.loads(records.read_text(encoding="utf-8"))}
        for line in answers.read_text(encoding="utf-8").splitlines():
            a = json.loads(line)
            out.append((questions[a["record_id"]], a["answer"], name))
    return out


async def llm_part(cache_dir: str, limit: int | None = None) -> dict:
    config = load_run_config(ROOT / "configs" / "default.yaml")
    cfg = config.model("local-qwen")
    llm = LLM(CallCache(cache_dir))
    prompt = load_prompt("decompose")
    before = Counter()
    after = Counter()
    reasons = Counter()
    examples = []
    started = time.time()
    for question, answer, _ in _answers()[:limit]:
        language = detect_language(question + " " + answer)
        messages = prompt.render(question=question, answer=answer, language=language)
        try:
            result, _ = await llm.structured(cfg, messages, Decomposed, prompt_hash=prompt.hash)
        except LLMCallError as e:
            before["call failed"] += 1
            after["call failed"] += 1
            print("call failed:", e.cause, file=sys.stderr)
            continue
        proposed = [(c.text.strip(), c.quote) for c in result.claims if c.text.strip()]
        before["answers"] += 1
        before["claims"] += len(proposed)
        index = Index(answer, "answer")
        before["claims without a located quote"] += sum(1 for t, q in proposed if not locate(answer, q, t, index))
        admitted = admit_proposed(answer, question, proposed, index)
        after["answers"] += 1
        after["proposed"] += len(proposed)
        after["kept"] += len(admitted.claims)
        after["read with the question"] += sum(c.reads_question for c in admitted.claims)
        after["dropped"] += len(admitted.dropped)
        after["fallbacks"] += not admitted.claims and bool(answer.strip())
        reasons.update(d.reason.split(":")[0] for d in admitted.dropped)
        if len(examples) < 8:
            examples += [{"answer": answer[:80], "claim": d.text[:80], "reason": d.reason} for d in admitted.dropped[:1]]
    return {"seconds": round(time.time() - started, 1), "before": dict(before), "after": dict(after), "dropped_by_reason": dict(reasons), "examples": examples}


def _squad(path: Path, limit: int) -> list[tuple[str, str, str, int]]:
    """(context, question, gold answer, its start) for the first ``limit`` answerable questions."""
    out = []
    for d in json.loads(path.read_text(encoding="utf-8"))["data"]:
        for p in d["paragraphs"]:
            for qa in p["qas"]:
                if qa.get("answers") and len(out) < limit:
                    a = qa["answers"][0]
                    if p["context"][a["answer_start"] : a["answer_start"] + len(a["text"])] == a["text"]:
                        out.append((p["context"], qa["question"], a["text"], a["answer_start"]))
    return out


def short_part(limit: int) -> dict:
    out = {}
    for name, path in (("HeQ", DATA / "external" / "heq" / "test_v1.1.json"), ("FaQuAD", DATA / "external" / "faquad" / "dataset.json")):
        if not path.exists():
            continue
        tally = Counter()
        for context, question, answer, start in _squad(path, limit):
            index = Index(context, "doc")
            end = start + len(answer)
            admitted = sentence_claims(answer, question)
            tally["answers"] += 1
            if not admitted.claims:
                tally["dropped"] += 1
                continue
            claim = admitted.claims[0]
            tally["read with the question"] += claim.reads_question
            for when, text in (("before", answer), ("after", claim.text)):
                hits = index.search(text, k=4)
                holds = [any(p.start_char <= start and end <= p.end_char for p in h.parts) for h in hits]
                tally[f"{when} top1"] += bool(holds[:1] and holds[0])
                tally[f"{when} top4"] += any(holds)
        out[name] = dict(tally)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--llm", action="store_true")
    ap.add_argument("--short", action="store_true")
    ap.add_argument("--limit", type=int, default=500)
    ap.add_argument("--answers", type=int, default=None, help="--llm: the first N answers only")
    ap.add_argument("--cache", default=str(ROOT.parent / ".cache" / "decomposition_bench"))
    args = ap.parse_args(argv)
    report = {}
    if args.short:
        report["short"] = short_part(args.limit)
    if args.llm:
        report["llm"] = asyncio.run(llm_part(args.cache, args.answers))
    print(json.dumps(report, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
