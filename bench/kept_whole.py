"""A claim its span keeps whole is never partially supported (issue 48.3): what the rule changes on every
labelled set at hand, claim by claim.

    python bench/kept_whole.py [--data /work/shared/data] [--cache /tmp/no-model-rows] [--limit 120]

The rows are bench/no_model_data.py's (every claim searched, checked and featurised as a run does). For each
claim the no-model judge's label is taken twice through :func:`judge.judges.deterministic.no_model_label`:
as shipped, and with the kept-whole rule unable to fire (the rule, not the fitted score, reads the vector with its order set below 1). Printed
per set: the claims the rule moves, how many of them gold calls supported (its precision), and the set's
measure before and after (macro-F1 on claim-level sets, answer-level balanced accuracy on the others).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from no_model_data import load_rows  # noqa: E402

from judge.judges.deterministic import DeterministicThresholds, fitted_score, load_weights, no_model_label  # noqa: E402
from judge.stages.evidence import Evidence  # noqa: E402

FOUR = ("supported", "partially_supported", "unsupported", "contradicted")


def labels(row: dict, keep: bool) -> str:
    e = Evidence(**row["support"])
    p = fitted_score(load_weights(), e)  # the fitted score reads the vector as it is
    if not keep:  # the rule unable to fire: the claim read as out of its span's order
        e = e.model_copy(update={"alignment": {**e.alignment, "order": 0.0}})
    return no_model_label(p, e, DeterministicThresholds().profile(row["language"]))[0]


def measure(rows: list[dict], predicted: list[str]) -> float:
    if rows and rows[0]["answer_level"]:
        answers: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for r, p in zip(rows, predicted):
            answers[r["group"]].append((r["label"], p))
        recall = defaultdict(list)
        for pairs in answers.values():
            gold = all(g == "supported" for g, _ in pairs)
            recall[gold].append(all(p == "supported" for _, p in pairs) == gold)
        return sum(sum(v) / len(v) for v in recall.values()) / len(recall)
    f1 = []
    for lab in FOUR:
        tp = sum(r["label"] == lab and p == lab for r, p in zip(rows, predicted))
        fp = sum(r["label"] != lab and p == lab for r, p in zip(rows, predicted))
        fn = sum(r["label"] == lab and p != lab for r, p in zip(rows, predicted))
        f1.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(f1) / len(f1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--extra", type=Path, default=None)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/no-model-rows"))
    ap.add_argument("--limit", type=int, default=120)
    args = ap.parse_args()
    for name, rows in load_rows(args.data, args.extra, args.cache, args.limit).items():
        before = [labels(r, False) for r in rows]
        after = [labels(r, True) for r in rows]
        moved = [(r, b, a) for r, b, a in zip(rows, before, after) if a != b]
        right = sum(r["label"] == "supported" for r, _, _ in moved)
        print(json.dumps({"set": name, "claims": len(rows), "moved": len(moved), "moved_gold_supported": right,
                          "moved_from": sorted({b for _, b, _ in moved}),
                          "measure_before": round(measure(rows, before), 4), "measure_after": round(measure(rows, after), 4)}))


if __name__ == "__main__":
    main()
