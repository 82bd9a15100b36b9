"""Corrected rates on every labelled set at hand: does the PPI++ interval cover the gold rate, and how wide is
it against the labels alone? (issue 38)

For each set of grounding_sets.py (its gold labels are the truth) and each judge: the deterministic judge (the
calibrated rule on the set's features, as a run computes it) and three simulated judges, played from the gold
labels with a seeded coin (what the scripted test server would answer): a good judge (right 90% of the
time, else a random other label), a lenient one (calls half of the not-supported claims supported) and a
noisy one (right 60% of the time). Then DRAWS times: the project's own draw of LABELS items (judge.labels.sample:
stratified by the judge's verdict, inclusion probabilities), gold as the person's labels, and the project's
estimator (judge.scoring.corrected.estimate: PPI++ power-tuned, beside the labels only).

Level: answers (grounded or not) for the answer-level sets, claims otherwise; the rate is the hallucination
rate (claims: unsupported or contradicted; answers: not grounded). Reported per set and judge: the gold rate,
the judge's raw rate, balanced accuracy, coverage of the 95% interval, mean width of both intervals and their
ratio, and the largest ratio of one draw.

Command: python bench/ppi_coverage.py [--draws 200] [--labels 50] [--limit 60] (reads ../shared/data; a few minutes).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import grounding_sets as sets  # noqa: E402
from judge.labels.sample import draw  # noqa: E402
from judge.config import SearchSection  # noqa: E402
from judge.scoring.corrected import estimate, value  # noqa: E402
from judge.stages.support import decide, load_params  # noqa: E402
from judge.verdicts import LABELS, SUPPORTED, answer_label  # noqa: E402

JUDGES = ("deterministic", "good", "lenient", "noisy")


def simulated(name: str, gold: str, rng: random.Random) -> str:
    others = [x for x in LABELS if x != gold]
    if name == "good":
        return gold if rng.random() < 0.9 else rng.choice(others)
    if name == "noisy":
        return gold if rng.random() < 0.6 else rng.choice(others)
    if name == "lenient":
        return SUPPORTED if gold != SUPPORTED and rng.random() < 0.5 else gold
    raise ValueError(name)


def verdicts(items: list, judge: str, seed: int) -> list[str]:
    if judge == "deterministic":
        params = load_params()
        return [i.seen_as(decide(i.features, params.for_language(i.language))[0]) for i in items]
    rng = random.Random(f"{seed}:{judge}")
    return [i.seen_as(simulated(judge, i.label, rng)) for i in items]


def units(items: list, predicted: list[str], answer_level: bool) -> tuple[list[str], list[str], list[str]]:
    """(unit ids, gold labels, the judge's labels) at the level the set is labelled at."""
    if not answer_level:
        return [f"{k}" for k in range(len(items))], [i.seen_as(i.label) for i in items], predicted
    gold, pred = defaultdict(list), defaultdict(list)
    for i, p in zip(items, predicted):
        gold[i.group].append(i.seen_as(i.label))
        pred[i.group].append(p)
    ids = sorted(gold)
    return ids, [answer_label(gold[g]) for g in ids], [answer_label(pred[g]) for g in ids]


def balanced_accuracy(y: np.ndarray, yhat: np.ndarray) -> float | None:
    pos, neg = y == 1, y == 0
    if not pos.any() or not neg.any():
        return None
    return float(((yhat[pos] == 1).mean() + (yhat[neg] == 0).mean()) / 2)


def simulate(name: str, items: list, judge: str, draws: int, n: int) -> dict:
    answer_level = items[0].answer_level
    level = "answer" if answer_level else "claim"
    ids, gold, pred = units(items, verdicts(items, judge, 0), answer_level)
    y_all = np.array([value("hallucination_rate", level, g) for g in gold])
    f_all = np.array([value("hallucination_rate", level, p) for p in pred])
    strata = defaultdict(list)
    for u, p in zip(ids, pred):
        strata[p].append(u)
    index = {u: k for k, u in enumerate(ids)}
    truth = float(y_all.mean())
    covered, widths, alone_widths, ratios = 0, [], [], []
    for d in range(draws):
        chosen = draw(strata, n, d, level)
        at = np.array([index[u] for u in chosen])
        w = 1 / np.array(list(chosen.values()))
        corrected, alone, _ = estimate(y_all[at], f_all[at], f_all, w)
        covered += corrected.low <= truth <= corrected.high
        widths.append(corrected.high - corrected.low)
        alone_widths.append(alone.high - alone.low)
        ratios.append(widths[-1] / alone_widths[-1] if alone_widths[-1] > 0 else 1.0)
    return {"set": name, "judge": judge, "level": level, "items": len(ids), "gold": truth, "raw": float(f_all.mean()),
            "balanced_accuracy": balanced_accuracy(y_all, f_all), "coverage": covered / draws, "width": float(np.mean(widths)),
            "labels_only": float(np.mean(alone_widths)), "ratio": float(np.mean(widths) / np.mean(alone_widths)), "worst": float(np.max(ratios))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--halueval", type=Path, default=None)
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--labels", type=int, default=50)
    ap.add_argument("--limit", type=int, default=60, help="paragraphs of HeQ and FaQuAD (the other sets whole)")
    args = ap.parse_args(argv)
    started = time.time()
    found = sets.all_sets(args.data, args.halueval, SearchSection(), args.limit)
    print(f"sets featurised in {time.time() - started:.0f} s")
    rows = [simulate(name, items, judge, args.draws, args.labels) for name, items in found.items() for judge in JUDGES]
    print(f"{'set':15} {'judge':13} {'level':6} {'items':>5} {'gold':>6} {'raw':>6} {'bal.acc':>7} {'cover':>6} {'width':>6} "
          f"{'alone':>6} {'ratio':>6} {'worst':>6}")
    for r in rows:
        ba = f"{r['balanced_accuracy']:.3f}" if r["balanced_accuracy"] is not None else "-"
        print(f"{r['set']:15} {r['judge']:13} {r['level']:6} {r['items']:5d} {r['gold']:6.3f} {r['raw']:6.3f} {ba:>7} {r['coverage']:6.3f} "
              f"{r['width']:6.3f} {r['labels_only']:6.3f} {r['ratio']:6.3f} {r['worst']:6.3f}")
    low = [r for r in rows if r["coverage"] < 0.93]
    wide = [r for r in rows if r["worst"] > 1.02]
    strong = [r for r in rows if (r["balanced_accuracy"] or 0) >= 0.85]
    weak_gain = [r for r in strong if r["ratio"] > 0.8]
    print(f"coverage >= 0.93: {len(rows) - len(low)} of {len(rows)}" + (f" (below: {', '.join(r['set'] + '/' + r['judge'] for r in low)})" if low else ""))
    print(f"never > 2% wider than labels only: {len(rows) - len(wide)} of {len(rows)}")
    print(f"balanced accuracy >= 0.85: {len(strong)} set/judge pairs; at least 20% narrower: {len(strong) - len(weak_gain)}"
          + (f" (not: {', '.join(r['set'] + '/' + r['judge'] for r in weak_gain)})" if weak_gain else ""))
    print(f"{time.time() - started:.0f} s in all")
    return 1 if low or wide or weak_gain else 0


if __name__ == "__main__":
    sys.exit(main())
