"""Can a judge tell control claims from real ones? Per data set: the real claims a judge is shown (the
decomposer's sentences, or the data set's claims), the control answers the run would judge beside them, each
surface feature's AUC between the two and the run's own detector's (claim and call features, grouped
cross-validation; bench.tells; 0.5 = no tell, the bar is <= 0.7), and the controls made by kind.

    python bench/controls_tells.py [--per-label 24] [--max-share 0.12]

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

from bench.tells import measure  # noqa: E402
from judge.datasets import load  # noqa: E402
from judge.text import split_sentences  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"


def sentences(text: str) -> list[str]:
    return [s.text for s in split_sentences(text or "")]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-label", type=int, default=24)
    ap.add_argument("--limit", type=int, default=400)
    ap.add_argument("--max-share", type=float, default=None, help="controls.max_share (default: the config's)")
    ap.add_argument("--sets", default="bundled,he,wice,heq,faquad")
    args = ap.parse_args()
    from collections import Counter

    from judge.controls.make import ControlsConfig

    config = ControlsConfig(per_label=args.per_label, **({"max_share": args.max_share} if args.max_share else {}))
    sets = args.sets.split(",")

    def measure(records, claims_of, _per_label):
        from bench.tells import measure as run

        out = run(records, claims_of, config=config, keep=True)
        out["kinds"] = dict(Counter(f"{m['label']}/{m['kind']}" for m in out.pop("made")))
        out.pop("rows")
        return out

    out = {}
    if "bundled" in sets:
        bundled = load(ROOT / "judge" / "data" / "he_sample.json")
        by = {}
        for a in load(ROOT / "judge" / "data" / "he_sample_answers.jsonl", "answers"):
            by.setdefault(a.record_id, []).append(sentences(a.answer))
        out["bundled Hebrew sample"] = measure(bundled, lambda r: by.get(r.id, []), args.per_label)
    if SHARED.exists():
        if "he" in sets:
            he = load(SHARED / "he_qa_sample.json")
            he_answers = {}
            for a in load(SHARED / "he_model_answers_sample.jsonl", "answers"):
                he_answers.setdefault(a.record_id, []).append(sentences(a.answer))
            out["Hebrew sample, model answers"] = measure(he, lambda r: he_answers.get(r.id, []), args.per_label)
        if "wice" in sets:
            wice = load(SHARED / "external" / "wice" / "claim_test.jsonl", "wice")
            out["WiCE claims"] = measure(wice[: args.limit], lambda r: [c.text for c in r.claims], args.per_label)
        for name, path in (("HeQ answers", SHARED / "external" / "heq" / "test_v1.1.json"), ("FaQuAD answers", SHARED / "external" / "faquad" / "dataset.json")):
            if name.split()[0].lower() not in sets:
                continue
            try:
                qa = load(path)
            except Exception as e:  # a format this bench cannot read is reported, not hidden
                out[name] = {"error": str(e)[:200]}
                continue
            out[name] = measure(qa[: args.limit], lambda r: sentences(r.reference_answer or ""), args.per_label)
    print(json.dumps(out, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
