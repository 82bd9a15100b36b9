"""Can a judge tell control claims from real ones by their surface? Per data set: the real claims a judge is
shown (the decomposer's sentences, or the data set's claims), the controls the run would mix in among them,
and each surface feature's AUC between the two (judge.controls.tells; 0.5 = no tell, the bar is <= 0.7).

    python bench/controls_tells.py [--per-label 24]

Data: the bundled Hebrew sample with its recorded answers, and from ../shared/data the Hebrew sample with
model answers, WiCE claims (each with its evidence article) and HeQ / FaQuAD questions with their answers.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from judge.controls.tells import measure  # noqa: E402
from judge.datasets import load  # noqa: E402
from judge.text import split_sentences  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"


def sentences(text: str) -> list[str]:
    return [s.text for s in split_sentences(text or "")]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-label", type=int, default=24)
    ap.add_argument("--limit", type=int, default=400)
    args = ap.parse_args()
    out = {}
    bundled = load(ROOT / "judge" / "data" / "he_sample.json")
    answers = load(ROOT / "judge" / "data" / "he_sample_answers.jsonl", "answers")
    by = {}
    for a in answers:
        by.setdefault(a.record_id, []).extend(sentences(a.answer))
    out["bundled Hebrew sample"] = measure(bundled, lambda r: by.get(r.id, []), args.per_label)
    if SHARED.exists():
        he = load(SHARED / "he_qa_sample.json")
        he_answers = {}
        for a in load(SHARED / "he_model_answers_sample.jsonl", "answers"):
            he_answers.setdefault(a.record_id, []).extend(sentences(a.answer))
        out["Hebrew sample, model answers"] = measure(he, lambda r: he_answers.get(r.id, []), args.per_label)
        wice = load(SHARED / "external" / "wice" / "claim_test.jsonl", "wice")
        out["WiCE claims"] = measure(wice[: args.limit], lambda r: [c.text for c in r.claims], args.per_label)
        for name, path in (("HeQ answers", SHARED / "external" / "heq" / "test_v1.1.json"), ("FaQuAD answers", SHARED / "external" / "faquad" / "dataset.json")):
            try:
                qa = load(path)
            except Exception as e:  # a format this bench cannot read is reported, not hidden
                out[name] = {"error": str(e)[:200]}
                continue
            out[name] = measure(qa[: args.limit], lambda r: sentences(r.reference_answer or ""), args.per_label)
    print(json.dumps(out, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
