"""Calibrate the deterministic judge leave-one-dataset-out, beside two baselines fitted the same way.

    python bench/calibrate_deterministic.py [--data ../shared/data] [--halueval DIR] [--write judge/data/deterministic.yaml]

The sets are :mod:`grounding_sets`' (Hebrew answers, WiCE, FaithBench, DialSummEval, HaluEval QA, HeQ,
FaQuAD). For each set in turn, the rule's thresholds are fitted on all the *other* sets and the set is
scored with them: every figure in the table is on a set the values never saw. Beside it, in the same run,
two baselines whose thresholds are chosen on the same other sets:

- overlap: the share of the claim's content words the whole source writes (a bag of words): at least t1
  supported, at least t2 partially supported, else unsupported;
- BM25 (``rank_bm25``): the best source sentence's Okapi score over the most the claim's terms could score,
  with two thresholds the same way.

What is fitted: the mean, over the training sets, of each set's own measure: macro-F1 on the Hebrew answers
(4 labels), accuracy on WiCE (3 labels), balanced accuracy on the answer-level sets (an answer is judged
correct when every claim of it is ``supported``). The rule's grid is searched on a score smoothed over each
point's neighbours (a lone lucky point is not chosen); a short answer's one threshold is fitted first.
``--write`` fits every set together for ``default``, and the Hebrew sets for ``he`` (the Hebrew answers'
held-out figure for it comes from 4 folds by record, since those answers are what ``he`` serves).
"""

from __future__ import annotations

import argparse
import itertools
import pickle
import sys
import time
from pathlib import Path

import numpy as np
from scipy.ndimage import uniform_filter

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from grounding_sets import Item, all_sets, refeaturize  # noqa: E402

from judge.verdicts import LABELS  # noqa: E402
from judge.config import SearchSection  # noqa: E402
from judge.stages.support import DROPPED_NEGATION_CONTRADICTS_FROM, PARAMS_FILE, RuleParams, decide  # noqa: E402

GRID = {
    "unsupported_below": [0.2, 0.3, 0.4, 0.5, 0.6],
    "supported_min_coverage": [0.5, 0.6, 0.7, 0.8, 0.9],
    "supported_max_run": [0, 1, 2, 3, 4],
    "contradict_mismatch": [True, False],
    "supported_max_tail_run": [0, 1, 2, 99],
    "supported_max_absent_share": [0.0, 0.1, 0.2, 0.34, 1.0],
    "supported_max_absent_run": [1, 2, 3, 99],
}
QUESTION_GRID = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
FIXED = {"partial_on_added_connective": True}
LABEL_INDEX = {lbl: i for i, lbl in enumerate(LABELS)}
S, P, U, C = (LABEL_INDEX[x] for x in ("supported", "partially_supported", "unsupported", "contradicted"))


def measure_of(name: str) -> str:
    return {"hebrew answers": "macro_f1", "WiCE": "accuracy"}.get(name, "balanced")


# -- the vectorised rule ----------------------------------------------------------------------------------------
def _arrays(items: list[Item]) -> dict[str, np.ndarray]:
    f = [i.features for i in items]
    return {
        "verbatim": np.array([x.verbatim for x in f]),
        "coverage": np.array([x.coverage for x in f]),
        "max_run": np.array([x.max_run for x in f]),
        "tail_run": np.array([x.tail_run for x in f]),
        "numbers_missing": np.array([x.numbers_missing > 0 for x in f]),
        "mismatches": np.array([x.mismatches > 0 for x in f]),
        "names_missing": np.array([x.names_missing > 0 for x in f]),
        "conflicts": np.array([x.conflicts > 0 for x in f]),
        "connective": np.array([bool(x.added_connectives) for x in f]),
        "absent_share": np.array([x.absent_share for x in f]),
        "absent_key": np.array([bool(x.absent_key) for x in f]),
        "absent_run": np.array([x.absent_run for x in f]),
        "negation": np.array([x.added_negation for x in f]),
        "dropped": np.array([x.dropped_negation for x in f]),
        "withheld": np.array([x.withheld_negation or x.name_slots > 0 for x in f]),  # keep a claim from supported
        "offered": np.array([max(x.coverage, x.offered_coverage) for x in f]),
        "short": np.array([x.short for x in f]),
        "qcov": np.array([x.question_coverage for x in f]),
        "answer_in_source": np.array([x.answer_in_source for x in f]),
        "collapse": np.array([i.collapse_contradicted for i in items]),
    }


def _predict(a: dict[str, np.ndarray], p: dict) -> np.ndarray:
    """Vectorised :func:`judge.stages.support.decide` (a test checks the two agree)."""
    cov = a["coverage"]
    short = a["short"]
    conditions = [
        a["conflicts"],
        short & (~a["answer_in_source"] | a["absent_key"]),
        short & (a["qcov"] >= p["question_min_coverage"]),
        short,
        a["dropped"] & (cov >= DROPPED_NEGATION_CONTRADICTS_FROM),
        a["verbatim"] & ~a["dropped"],
        a["mismatches"] & p["contradict_mismatch"],
        a["offered"] < p["unsupported_below"],
        (cov >= p["supported_min_coverage"]) & (a["max_run"] <= p["supported_max_run"]) & (a["tail_run"] <= p["supported_max_tail_run"])
        & ~a["numbers_missing"] & ~a["names_missing"] & ~(a["connective"] & p["partial_on_added_connective"])
        & ~a["absent_key"] & (a["absent_run"] <= p["supported_max_absent_run"]) & (a["absent_share"] <= p["supported_max_absent_share"]) & ~a["negation"] & ~a["dropped"] & ~a["withheld"],
    ]
    pred = np.select(conditions, [C, U, S, P, C, S, C, U, S], default=P)
    return np.where(a["collapse"] & (pred == C), U, pred)


# -- measures ---------------------------------------------------------------------------------------------------
class Scored:
    """One set's gold, its answers (claims grouped) and how it is measured."""

    def __init__(self, name: str, items: list[Item]):
        self.name, self.items, self.measure = name, items, measure_of(name)
        self.gold = np.array([LABEL_INDEX[i.label] for i in items])
        groups = {g: k for k, g in enumerate(dict.fromkeys(i.group for i in items))}
        self.group = np.array([groups[i.group] for i in items])
        self.n_answers = len(groups)
        self.answer_gold = np.bincount(self.group, weights=self.gold != S, minlength=self.n_answers) == 0

    def answers(self, pred: np.ndarray) -> np.ndarray:
        """Whether each answer is judged correct: every claim of it supported."""
        return np.bincount(self.group, weights=pred != S, minlength=self.n_answers) == 0

    def score(self, pred: np.ndarray) -> float:
        if self.measure == "accuracy":
            return float((pred == self.gold).mean())
        if self.measure == "macro_f1":
            return macro_f1(self.gold, pred)
        return balanced(self.answer_gold, self.answers(pred))

    def report(self, pred: np.ndarray) -> dict:
        ok = self.answers(pred)
        return {
            "measure": self.measure,
            "score": round(self.score(pred), 4),
            "claim_accuracy": round(float((pred == self.gold).mean()), 4),
            "answer_accuracy": round(float((ok == self.answer_gold).mean()), 4),
            "answer_balanced": round(balanced(self.answer_gold, ok), 4),
            "macro_f1": round(macro_f1(self.gold, pred), 4),
            "answers": self.n_answers,
            "claims": len(self.gold),
        }


def macro_f1(gold: np.ndarray, pred: np.ndarray) -> float:
    f1s = []
    for lbl in range(len(LABELS)):
        tp = int(((pred == lbl) & (gold == lbl)).sum())
        npred, ngold = int((pred == lbl).sum()), int((gold == lbl).sum())
        if npred or ngold:
            f1s.append(2 * tp / (npred + ngold))
    return float(np.mean(f1s)) if f1s else 0.0


def balanced(gold: np.ndarray, ok: np.ndarray) -> float:
    rec = [float((ok[gold == v] == v).mean()) for v in (True, False) if (gold == v).any()]
    return float(np.mean(rec)) if rec else 0.0


# -- fitting ------------------------------------------------------------------------------------------------------
def _objective(sets: list[Scored], arrays: list[dict], p: dict) -> float:
    return float(np.mean([s.score(_predict(a, p)) for s, a in zip(sets, arrays)]))


def fit(sets: list[Scored]) -> RuleParams:
    """The short answer's threshold first (it decides short answers only), then the grid, smoothed."""
    arrays = [_arrays(s.items) for s in sets]
    base = {**RuleParams().model_dump(), **FIXED}
    q = max(QUESTION_GRID, key=lambda v: (_objective(sets, arrays, {**base, "question_min_coverage": v}), -abs(v - 0.5)))
    names = list(GRID)
    shape = tuple(len(GRID[n]) for n in names)
    scores = np.zeros(shape)
    # A set of short answers only scores the same at every grid point (they are decided by q): left out of the search.
    kept = [(s, a) for s, a in zip(sets, arrays) if not a["short"].all()]
    for idx in itertools.product(*(range(s) for s in shape)):
        p = {**base, "question_min_coverage": q, **{n: GRID[n][i] for n, i in zip(names, idx)}}
        scores[idx] = _objective([s for s, _ in kept], [a for _, a in kept], p) if kept else 0.0
    smooth = uniform_filter(scores, size=3, mode="nearest")
    best = np.unravel_index(np.argmax(smooth + 1e-9 * scores), shape)
    return RuleParams(**{**base, "question_min_coverage": q, **{n: GRID[n][i] for n, i in zip(names, best)}})


def baseline_predict(values: np.ndarray, hi: float, lo: float) -> np.ndarray:
    return np.where(values >= hi, S, np.where(values >= lo, P, U))


def fit_baseline(sets: list[Scored], attr: str) -> tuple[float, float]:
    grid = [round(x, 2) for x in np.arange(0.0, 1.001, 0.05)]
    values = [np.array([getattr(i, attr) for i in s.items]) for s in sets]
    best, at = -1.0, (1.0, 0.0)
    for hi in grid:
        for lo in (g for g in grid if g <= hi):
            score = float(np.mean([s.score(baseline_predict(v, hi, lo)) for s, v in zip(sets, values)]))
            if score > best + 1e-12:
                best, at = score, (hi, lo)
    return at


def rule_predict(s: Scored, params: RuleParams) -> np.ndarray:
    return np.array([LABEL_INDEX[i.seen_as(decide(i.features, params)[0])] for i in s.items])


def leave_one_out(scored: list[Scored]) -> dict:
    out = {}
    for held in scored:
        train = [s for s in scored if s is not held]
        params = fit(train)
        hi, lo = fit_baseline(train, "overlap")
        bhi, blo = fit_baseline(train, "bm25")
        out[held.name] = {
            "rule": held.report(rule_predict(held, params)),
            "overlap": held.report(baseline_predict(np.array([i.overlap for i in held.items]), hi, lo)) | {"thresholds": [hi, lo]},
            "bm25": held.report(baseline_predict(np.array([i.bm25 for i in held.items]), bhi, blo)) | {"thresholds": [bhi, blo]},
            "params": params.model_dump(),
        }
        print(f"held out {held.name}: rule {out[held.name]['rule']['score']}, overlap {out[held.name]['overlap']['score']}, bm25 {out[held.name]['bm25']['score']}", flush=True)
    return out


def hebrew_folds(he: Scored, others: list[Scored], n: int = 4) -> dict:
    """The ``he`` profile's held-out figure on the Hebrew answers: 4 folds by record, the other Hebrew sets
    always in training."""
    groups = sorted({i.group for i in he.items})
    fold_of = {g: k % n for k, g in enumerate(groups)}
    pred = np.zeros(len(he.items), dtype=int)
    for k in range(n):
        train = [i for i in he.items if fold_of[i.group] != k]
        params = fit([Scored(he.name, train), *others])
        for j, i in enumerate(he.items):
            if fold_of[i.group] == k:
                pred[j] = LABEL_INDEX[i.seen_as(decide(i.features, params)[0])]
    return he.report(pred)


def _fmt(r: dict) -> str:
    return f"{r['score']:.3f} | {r['answer_accuracy']:.3f} | {r['claim_accuracy']:.3f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--halueval", type=Path, default=None, help="folder holding HaluEval's qa_one-turn_data.json")
    ap.add_argument("--limit", type=int, default=None, help="paragraphs of HeQ and FaQuAD")
    ap.add_argument("--cache", type=Path, default=None, help="searched claims kept here and re-read (delete it when search or checks change)")
    ap.add_argument("--write", type=Path, default=None, help=f"write the fitted values (e.g. {PARAMS_FILE.relative_to(ROOT)})")
    args = ap.parse_args(argv)
    if not (args.data / "he_qa_sample.json").exists():
        print(f"{args.data}: no he_qa_sample.json (pass --data)", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    if args.cache and args.cache.exists():
        sets = {k: [refeaturize(i) for i in v] for k, v in pickle.loads(args.cache.read_bytes()).items()}
    else:
        sets = all_sets(args.data, args.halueval, SearchSection(k=5), args.limit)
        if args.cache:
            args.cache.write_bytes(pickle.dumps(sets))
    print(f"featurised {', '.join(f'{k} {len(v)}' for k, v in sets.items())} claims in {time.perf_counter() - t0:.0f} s", flush=True)
    scored = [Scored(name, items) for name, items in sets.items()]
    lodo = leave_one_out(scored)
    print("\n| held-out set | measure | rule: measure, answer acc., claim acc. | overlap | BM25 |")
    print("|---|---|---|---|---|")
    for name, r in lodo.items():
        print(f"| {name} | {r['rule']['measure']} | {_fmt(r['rule'])} | {_fmt(r['overlap'])} | {_fmt(r['bm25'])} |")
    by_name = {s.name: s for s in scored}
    hebrew = [by_name[n] for n in ("HeQ",) if n in by_name]
    he_folds = hebrew_folds(by_name["hebrew answers"], hebrew)
    print(f"\nhe profile, Hebrew answers in 4 folds by record (HeQ always in training): {he_folds}")
    if args.write:
        import yaml

        profiles = {"he": fit([by_name["hebrew answers"], *hebrew]), "default": fit(scored)}
        profiles["en"] = profiles["default"]
        doc = {
            "profiles": {k: v.model_dump() for k, v in profiles.items()},
            "calibration": {
                "command": "python bench/calibrate_deterministic.py --halueval DIR --write judge/data/deterministic.yaml",
                "data": {"default": ", ".join(f"{s.name} ({len(s.items)} claims)" for s in scored), "he": "hebrew answers, HeQ"},
                "k": 5,
                "heldout": {
                    "he_macro_f1": he_folds["macro_f1"],
                    "leave_one_dataset_out": {n: r["rule"]["score"] for n, r in lodo.items()},
                },
            },
        }
        header = "# Learned by bench/calibrate_deterministic.py (see its docstring); do not edit by hand, rerun it.\n"
        args.write.write_text(header + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
        print(f"\nwrote {args.write}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
