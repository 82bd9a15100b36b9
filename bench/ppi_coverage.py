"""Corrected rates on every labelled set at hand: does the 95% interval cover the gold rate, overall and per model
under test, and how wide is it against the labels alone? (issues 38, 47, 49)

For each set of grounding_sets.py (its gold labels are the truth) and each judge: the deterministic judge (the
no-model judge on the set's Evidence, as a run computes it) and three simulated judges, played from the gold
labels with a seeded coin (what the scripted test server would answer): a good judge (right 90% of the
time, else a random other label), a lenient one (calls half of the not-supported claims supported) and a
noisy one (right 60% of the time). The units are split among three simulated models under test (seeded;
hallucinated units go to model-a more often: three rates a set). Then DRAWS times for each n: the project's
own draw of n items (judge.labels.sample.draw: stratified by model and verdict), gold as the person's labels,
and the project's estimator (judge.scoring.corrected.estimate), per model withheld below MIN_LABELS labels as
the tool does. ``--estimator old``: the PPI++ interval and the draw by verdict alone of before issue 47.

Level: answers (grounded or not) for the answer-level sets, claims otherwise; the rate is the hallucination
rate. Reported per set, judge and n: the gold rate, the judge's raw rate, balanced accuracy, coverage overall
and of the worst model, the worst model's gate false passes (upper bound below its gold rate), the share of
draws a model's interval was withheld, the draws with no disagreement and their coverage, the mean width,
its ratio to the labels-only interval's, and the largest ratio of one draw.

Command: python bench/ppi_coverage.py [--draws 1000] [--labels 20,30,50,100] [--limit 60] [--cache FILE]
(reads ../shared/data; about 4 minutes on 2 cores once the sets are featurised).
"""

from __future__ import annotations

import argparse
import json
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
from judge.labels.sample import cell_key, draw  # noqa: E402
from judge.metrics.ppi import Stratum  # noqa: E402
from judge.config import SearchSection  # noqa: E402
from judge.scoring.corrected import MIN_LABELS, estimate, value  # noqa: E402
from judge.judges.deterministic import DeterministicThresholds, fitted_score, load_weights, no_model_label  # noqa: E402
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
        w, t = load_weights(), DeterministicThresholds()
        return [i.seen_as(no_model_label(fitted_score(w, i.features), i.features, t.profile(i.language))[0]) for i in items]
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


MODELS = ("model-a", "model-b", "model-c")
SHARES = {1.0: (0.5, 0.3, 0.2), 0.0: (0.2, 0.3, 0.5)}  # a hallucinated unit goes to model-a most often: three rates a set


def models_of(ids: list[str], y: np.ndarray) -> list[str]:
    """Three simulated models under test: each unit given to one, seeded, hallucinated units more often to model-a."""
    rng = random.Random("models")
    return [rng.choices(MODELS, weights=SHARES[float(v)])[0] for v in y]


def old_estimate(y, yhat, population, w):
    """The estimator before issue 47 (PPI++ with the labels' own variance, weights from the sheet), for the before column."""
    from judge.metrics.ppi import classical_mean, ppi_mean

    c, a = ppi_mean(y, yhat, population, w), classical_mean(y, w)
    if c.width > a.width:
        c = a
    if len(set(y.tolist())) == 1 and y[0] in (0.0, 1.0):
        from judge.metrics.intervals import exact_interval

        lo, hi = exact_interval(int(y[0]) * len(y), len(y))
        return min(c.low, lo), max(c.high, hi)
    return max(0.0, c.low), min(1.0, c.high)


def slice_interval(at, y_all, f_all, model_arr, pred_arr, slice_model, estimator, chosen_p):
    """(low, high, labels, width of labels only) of one slice (a model, or None for all) of one draw."""
    in_slice = np.ones(len(y_all), bool) if slice_model is None else model_arr == slice_model
    mine = at[in_slice[at]]
    if len(mine) == 0:
        return None
    if estimator == "old":
        w = 1 / np.array([chosen_p[k] for k in mine])
        lo, hi = old_estimate(y_all[mine], f_all[mine], f_all[in_slice], w)
        return lo, hi, len(mine), None
    cells, weights = [], {}
    keys = sorted({(model_arr[k], pred_arr[k]) for k in np.flatnonzero(in_slice)})
    for key in keys:
        members = np.flatnonzero(in_slice & (model_arr == key[0]) & (pred_arr == key[1]))
        labelled = [k for k in mine if model_arr[k] == key[0] and pred_arr[k] == key[1]]
        cells.append(Stratum(len(members), tuple(float(y_all[k]) for k in labelled), float(f_all[members[0]])))
        for k in labelled:
            weights[k] = len(members) / len(labelled)
    corrected, alone, _ = estimate(cells, y_all[mine], np.array([weights[k] for k in mine]))
    return corrected.low, corrected.high, len(mine), alone.high - alone.low


def simulate(name: str, level: str, ids: list[str], gold: list[str], pred: list[str], judge: str, draws: int, n: int,
             estimator: str, min_labels: int) -> dict:
    y_all = np.array([value("hallucination_rate", level, g) for g in gold])
    f_all = np.array([value("hallucination_rate", level, p) for p in pred])
    model_arr, pred_arr = np.array(models_of(ids, y_all)), np.array(pred)
    strata = defaultdict(list)
    for k, (m, p) in enumerate(zip(model_arr, pred)):
        strata[p if estimator == "old" else cell_key(m, p)].append(str(k))
    truths = {None: float(y_all.mean()), **{m: float(y_all[model_arr == m].mean()) for m in MODELS}}
    stats = {m: {"covered": 0, "shown": 0, "miss_high": 0, "withheld": 0, "widths": [], "alone": []} for m in truths}
    agree = {"draws": 0, "covered": 0}
    for d in range(draws):
        chosen = draw(strata, n, d, level)
        at = np.array(sorted(int(k) for k in chosen))
        p_of = {int(k): v for k, v in chosen.items()}
        for m in truths:
            got = slice_interval(at, y_all, f_all, model_arr, pred_arr, m, estimator, p_of)
            st = stats[m]
            if got is None or (m is not None and got[2] < min_labels):
                st["withheld"] += 1
                continue
            lo, hi, _, alone = got
            st["shown"] += 1
            st["covered"] += lo - 1e-9 <= truths[m] <= hi + 1e-9
            st["miss_high"] += hi + 1e-9 < truths[m]
            st["widths"].append(hi - lo)
            if alone is not None:
                st["alone"].append(alone)
            if m is None and np.all(y_all[at] == f_all[at]):
                agree["draws"] += 1
                agree["covered"] += lo - 1e-9 <= truths[m] <= hi + 1e-9
    def rate(st, k):
        return st[k] / st["shown"] if st["shown"] else None
    overall = stats[None]
    per = {m: stats[m] for m in MODELS}
    return {"set": name, "judge": judge, "level": level, "n": n, "items": len(ids), "gold": truths[None], "raw": float(f_all.mean()),
            "balanced_accuracy": balanced_accuracy(y_all, f_all), "coverage": rate(overall, "covered"),
            "model_coverage": min((rate(st, "covered") for st in per.values() if st["shown"]), default=None),
            "model_false_pass": max((rate(st, "miss_high") for st in per.values() if st["shown"]), default=None),
            "withheld": max(st["withheld"] for st in per.values()) / draws,
            "agree_draws": agree["draws"], "agree_coverage": agree["covered"] / agree["draws"] if agree["draws"] else None,
            "width": float(np.mean(overall["widths"])),
            "ratio": float(np.mean(overall["widths"]) / np.mean(overall["alone"])) if overall["alone"] else None,
            "worst": float(max(w / a for w, a in zip(overall["widths"], overall["alone"]) if a > 0)) if overall["alone"] else None}


def featurised(args) -> dict:
    """Per set: its level, unit ids, gold labels and the deterministic judge's labels (cached in --cache: featurising is slow)."""
    if args.cache and args.cache.is_file():
        return json.loads(args.cache.read_text())
    found = sets.all_sets(args.data, args.halueval, SearchSection(), args.limit)
    out = {}
    for name, items in found.items():
        answer_level = items[0].answer_level
        ids, gold, det = units(items, verdicts(items, "deterministic", 0), answer_level)
        sim = {j: units(items, verdicts(items, j, 0), answer_level)[2] for j in JUDGES[1:]}
        out[name] = {"level": "answer" if answer_level else "claim", "ids": ids, "gold": gold, "pred": {"deterministic": det, **sim}}
    if args.cache:
        args.cache.write_text(json.dumps(out))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--halueval", type=Path, default=None)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--labels", type=str, default="20,30,50,100", help="sample sizes, comma-separated")
    ap.add_argument("--limit", type=int, default=60, help="paragraphs of HeQ and FaQuAD (the other sets whole)")
    ap.add_argument("--estimator", choices=("new", "old"), default="new", help="old: the estimator and draw before issue 47 (for comparison)")
    ap.add_argument("--min-labels", type=int, default=None, help="per-model intervals withheld below this many labels (default: the tool's)")
    ap.add_argument("--cache", type=Path, default=None, help="a JSON file keeping the featurised sets between runs")
    ap.add_argument("--sets", type=str, default=None, help="only these sets (comma-separated)")
    args = ap.parse_args(argv)
    min_labels = MIN_LABELS if args.min_labels is None else args.min_labels
    started = time.time()
    found = featurised(args)
    if args.sets:
        found = {k: v for k, v in found.items() if k in args.sets.split(",")}
    print(f"sets ready in {time.time() - started:.0f} s; estimator {args.estimator}, per-model intervals withheld below {min_labels} labels")
    rows = []
    head = (f"{'set':15} {'judge':13} {'level':6} {'n':>4} {'items':>5} {'gold':>6} {'raw':>6} {'bal.acc':>7} {'cover':>6} {'model':>6} "
            f"{'f.pass':>6} {'withh':>6} {'agree':>5} {'a.cov':>6} {'width':>6} {'ratio':>6} {'worst':>6}")
    print(head)
    for n in [int(x) for x in args.labels.split(",")]:
        for name, s in found.items():
            for judge in JUDGES:
                r = simulate(name, s["level"], s["ids"], s["gold"], s["pred"][judge], judge, args.draws, n, args.estimator, min_labels)
                rows.append(r)
                f = lambda v, k=".3f": "-" if v is None else format(v, k)  # noqa: E731
                print(f"{r['set']:15} {r['judge']:13} {r['level']:6} {n:4d} {r['items']:5d} {r['gold']:6.3f} {r['raw']:6.3f} {f(r['balanced_accuracy']):>7} "
                      f"{f(r['coverage']):>6} {f(r['model_coverage']):>6} {f(r['model_false_pass']):>6} {f(r['withheld']):>6} {r['agree_draws']:5d} "
                      f"{f(r['agree_coverage']):>6} {r['width']:6.3f} {f(r['ratio']):>6} {f(r['worst']):>6}", flush=True)
    low = [r for r in rows if (r["coverage"] or 0) < 0.93]
    low_model = [r for r in rows if r["model_coverage"] is not None and r["model_coverage"] < 0.93]
    false_pass = [r for r in rows if (r["model_false_pass"] or 0) > 0.05]
    low_agree = [r for r in rows if r["agree_draws"] >= 20 and r["agree_coverage"] < 0.93]
    wide = [r for r in rows if r["n"] >= 50 and r["worst"] is not None and r["worst"] > 1.02]
    cells = len(rows)
    print(f"overall coverage >= 0.93: {cells - len(low)} of {cells}" + (f" (below: {', '.join(_cell(r) for r in low)})" if low else ""))
    print(f"per-model coverage >= 0.93 (every model): {cells - len(low_model)} of {cells}"
          + (f" (below: {', '.join(_cell(r) for r in low_model)})" if low_model else ""))
    print(f"gate false passes <= 5% (every model): {cells - len(false_pass)} of {cells}"
          + (f" (above: {', '.join(_cell(r) for r in false_pass)})" if false_pass else ""))
    print(f"draws with no disagreement (cells with 20 or more) covering >= 0.93: "
          f"{sum(1 for r in rows if r['agree_draws'] >= 20) - len(low_agree)} of {sum(1 for r in rows if r['agree_draws'] >= 20)}"
          + (f" (below: {', '.join(_cell(r) for r in low_agree)})" if low_agree else ""))
    print(f"never > 2% wider than labels only at n >= 50: {sum(1 for r in rows if r['n'] >= 50) - len(wide)} of {sum(1 for r in rows if r['n'] >= 50)}")
    print(f"{time.time() - started:.0f} s in all")
    return 1 if low or low_model or false_pass or low_agree or wide else 0


def _cell(r: dict) -> str:
    return f"{r['set']}/{r['judge']}/n={r['n']}"


if __name__ == "__main__":
    sys.exit(main())
