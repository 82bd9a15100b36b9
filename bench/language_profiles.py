"""Hebrew verdicts of the no-model judge through a real run (issue 48.1): which language profile a run applies.

    python bench/language_profiles.py [--data /work/shared/data] [--runs-dir /tmp/lang-bench]

Runs ``judge.evaluate`` with ``judges: [deterministic]`` and sentence decomposition on the Hebrew answers with
gold claim labels (the shared sample's 32 answers, and the bundled sample's), matches each run claim to its
gold claim by text (the answers are their gold claims joined by spaces), and prints the claim-level macro-F1
over the four labels (``unsure`` is a prediction of none of them), the accuracy, the label counts and the
language the run recorded. Before the fix the run recorded "Hebrew" and the judge looked for "he": the default
profile applied; after it, the run records "he" and the Hebrew profile applies.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import judge  # noqa: E402
from judge.runs.run import Run  # noqa: E402

FOUR = ("supported", "partially_supported", "unsupported", "contradicted")


def macro_f1(pairs: list[tuple[str, str]]) -> float:
    f1s = []
    for lab in FOUR:
        tp = sum(1 for g, p in pairs if g == lab and p == lab)
        fp = sum(1 for g, p in pairs if g != lab and p == lab)
        fn = sum(1 for g, p in pairs if g == lab and p != lab)
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(f1s) / len(f1s)


def measure(name: str, dataset: Path, answers: Path, runs_dir: Path) -> dict:
    gold: dict[tuple[str, str, str], str] = {}
    for line in answers.read_text(encoding="utf-8").splitlines():
        a = json.loads(line)
        for g in a.get("gold_claims") or []:
            gold[(a["record_id"], a["model"], " ".join(g["text"].split()))] = g["label"]
    config = {"name": f"lang-{name}", "dataset": {"path": str(dataset)}, "answers": {"path": str(answers)},
              "decompose": {"method": "sentences"}, "adjudicate": {"judges": ["deterministic"]}, "cache_dir": str(runs_dir / "cache")}
    try:
        run = judge.evaluate(config, runs_dir=runs_dir)
    except Exception as e:  # the verdicts are written before the scores: measure them whatever scoring did
        print(f"{name}: scoring failed ({type(e).__name__}: {e}); the verdicts are read from results.jsonl", file=sys.stderr)
        run = Run.open(max(runs_dir.glob(f"*lang-{name}*"), key=lambda p: p.stat().st_mtime))
    pairs, langs = [], Counter()
    for c in run.claims():
        key = (c.record_id, c.model, " ".join(c.text.split()))
        if key in gold:
            pairs.append((gold[key], c.label))
    for r in run.results():
        langs[r.language] += 1
    return {"set": name, "claims": len(pairs), "of_gold": len(gold), "macro_f1": round(macro_f1(pairs), 4),
            "accuracy": round(sum(g == p for g, p in pairs) / len(pairs), 4) if pairs else None,
            "predicted": dict(Counter(p for _, p in pairs)), "language": dict(langs)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--runs-dir", type=Path, default=None)
    args = ap.parse_args()
    runs_dir = args.runs_dir or Path(tempfile.mkdtemp(prefix="lang-bench-"))
    sets = [("bundled", ROOT / "judge" / "data" / "he_sample.json", ROOT / "judge" / "data" / "he_sample_answers.jsonl")]
    if (args.data / "he_qa_sample.json").exists():
        sets.append(("shared", args.data / "he_qa_sample.json", args.data / "he_model_answers_sample.jsonl"))
    for name, dataset, answers in sets:
        print(json.dumps(measure(name, dataset, answers, runs_dir), ensure_ascii=False))


if __name__ == "__main__":
    main()
