"""Fit the learned no-model judge leave-one-dataset-out, beside the two lexical baselines fitted the same way.

    python bench/fit_no_model_judge.py [--data /work/shared/data] [--extra /work/data-extra] [--limit 120]
        [--cache /work/data-extra/cache] [--write judge/data/no_model_judge.json]

The sets: :mod:`grounding_sets` (Hebrew answers, WiCE, FaithBench, DialSummEval, HaluEval QA, HeQ, FaQuAD)
and :mod:`more_sets` (BEGIN, FaithDial audit, QAGS CNN/DM, QAGS XSum). Each claim's Evidence comes from
:func:`judge.stages.evidence.read_evidence` (cached by :mod:`no_model_data`), and its labels from the judge's
own decision path, :func:`judge.judges.deterministic.no_model_label` (see :func:`regimes`): no copy of it here.

The model: a logistic regression of "supported" on the features (L2, each training set weighing the same,
its supported and other claims balanced), and four numbers fitted on the training sets' own measures
(macro-F1 on the Hebrew answers, accuracy on WiCE, answer-level balanced accuracy elsewhere):

- ``supported_from``: p >= it is ``supported``;
- a contradiction the checks find (a correction in the source, a number stated otherwise, a dropped
  negation over the claim's words) is ``contradicted``;
- ``unsure_from``: p in [unsure_from, supported_from) is ``unsure`` (a model judge takes it; with none, not
  verified). Chosen as the widest band whose claims' held-in accuracy either way stays under ``UNSURE_ACCURACY``;
- ``partial_from``: below the band, p >= it is ``partially_supported``, the rest ``unsupported``.

Free verdicts (settled before any judge): triage's verbatim rule, kept only where p >= ``free_from``, the
lowest value whose free precision is >= 0.99 on every training set.

Beside it, the baselines of :mod:`measures` (content-word overlap of the whole source, BM25)
with two thresholds fitted on the same training sets. The table: per held-out set, answer-level balanced
accuracy of each, with a paired bootstrap interval (answers resampled) of the judge minus each baseline.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import gbt  # noqa: E402
from measures import LABEL_INDEX, Scored, balanced, baseline_predict, fit_baseline  # noqa: E402
from no_model_data import load_rows  # noqa: E402

from judge.judges.deterministic import load_weights, no_model_label  # noqa: E402
from judge.stages.evidence import FEATURES, Evidence  # noqa: E402
from judge.verdicts import UNSURE as UNSURE_LABEL  # noqa: E402

S, P, U, C = (LABEL_INDEX[x] for x in ("supported", "partially_supported", "unsupported", "contradicted"))
UNSURE = len(LABEL_INDEX)  # counts as no gold label: wrong on claim measures, not supported on answers
L2 = 1.0
GRID = np.round(np.arange(0.05, 0.951, 0.025), 3)
FREE_PRECISION = 0.99  # free verdicts: right at least this often on every training set
UNSURE_COST = 0.01  # the unsure band is the widest that costs no training set more than this of its measure
UNSURE_SHARE = 0.05  # ... and holds no more than this share of any training set's claims
MODEL = "gbt"  # or "lr" (--model)
# What each feature can only do to "supported", whatever else holds (the trees are kept to it): evidence that
# holds more of the claim, never less; a word, name or number the source never writes, never more.
MONOTONE = {**dict.fromkeys(("align_aligned_share", "align_verbatim", "offered_coverage", "short_question_coverage", "span_score"), 1),
            **dict.fromkeys(("align_unaligned", "align_longest_unaligned_run", "align_tail_unaligned_run", "align_names_unaligned",
                             "align_numbers_unaligned", "align_displaced", "align_slots_name", "align_slots_number", "align_slots_date",
                             "align_slots_percent", "align_negation_dropped", "align_negation_withheld", "align_negation_added",
                             "align_connectives_unaligned", "conflicts", "numbers_mismatched", "absent_share", "absent_key",
                             "absent_run", "short_answer_missing", "no_candidate"), -1)}
GENRE = {"hebrew answers": "QA", "HeQ": "QA", "FaQuAD": "QA", "HaluEval QA": "QA", "WiCE": "claims",
         "FaithBench": "summaries", "DialSummEval": "summaries", "QAGS CNN/DM": "summaries",
         "QAGS XSum": "summaries", "BEGIN": "dialogue", "FaithDial audit": "dialogue"}


class Set(Scored):
    """A set's rows with their feature matrix, gold and answers (the measures are calibrate's)."""

    def __init__(self, name: str, rows: list[dict]):
        super().__init__(name, [SimpleNamespace(**r) for r in rows])
        self.rows = rows
        self.x = np.array([r["x"] for r in rows], dtype=float)
        self.collapse = np.array([r["collapse"] for r in rows])
        self.free = np.array([r["free"] for r in rows])
        self.correct = self.gold == S
        self.hebrew = np.array([r["language"] == "he" for r in rows])
        self.answer_level = np.array([r["answer_level"] for r in rows])
        self.regimes = np.array([regimes(Evidence(**r["support"]), r["language"]) for r in rows]).reshape(len(rows), 3)

    def subset(self, keep: np.ndarray) -> Set:
        """The rows where ``keep`` holds (the Hebrew answers' folds)."""
        return Set(self.name, [self.rows[k] for k in np.flatnonzero(keep)])


def _index(label: str) -> int:
    return UNSURE if label == UNSURE_LABEL else LABEL_INDEX[label]


def regimes(e: Evidence, language: str | None) -> tuple[int, int, int]:
    """The judge's label of a claim in each of the three regimes of its fitted score: at or above
    ``supported_from``, in the unsure band, below it. :func:`no_model_label` reads the score only against those
    two thresholds, so these three calls are the judge's own decision path at every threshold the fit tries."""
    shipped = load_weights().profile("he" if language == "he" else None)
    band = shipped.model_copy(update={"supported_from": 0.6, "unsure_from": 0.4})
    return tuple(_index(no_model_label(p, e, band)[0]) for p in (0.6, 0.5, 0.0))


# -- the model -----------------------------------------------------------------------------------------------
def standardise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean, std = x.mean(0), x.std(0)
    return mean, np.where(std > 1e-9, std, 1.0)


def fit_lr(sets: list[Set]) -> dict:
    """Weighted L2 logistic regression by Newton's method, on standardised features (weights returned on
    the raw features, so the judge needs no scaler)."""
    x = np.vstack([s.x for s in sets])
    y = np.concatenate([s.correct for s in sets]).astype(float)
    w = weights(sets)
    mean, std = standardise(x)
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / std])
    beta = np.zeros(z.shape[1])
    reg = np.full(z.shape[1], L2)
    reg[0] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-z @ beta))
        grad = z.T @ (w * (p - y)) + reg * beta
        hess = (z * (w * p * (1 - p))[:, None]).T @ z + np.diag(reg)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    coef = beta[1:] / std
    return {"intercept": float(beta[0] - (coef * mean).sum()), "weights": dict(zip(FEATURES, map(float, coef)))}


def weights(sets: list[Set]) -> np.ndarray:
    """Each set weighs the same; inside it, its supported and other claims weigh the same; the claims of a
    wrong answer share one answer's weight (its gold says some claim of it is wrong, not which)."""
    out = []
    for s in sets:
        size = np.bincount(s.group, minlength=s.n_answers)[s.group]
        w = np.where(s.correct | ~s.answer_level, 1.0, 1.0 / size)
        pos, neg = w[s.correct].sum(), w[~s.correct].sum()
        out.append(np.where(s.correct, 0.5 * w / max(pos, 1e-9), 0.5 * w / max(neg, 1e-9)))
    w = np.concatenate(out)
    return w / w.sum() * len(w)


def fit_model(sets: list[Set]) -> dict:
    if MODEL == "lr":
        return {"kind": "lr", **fit_lr(sets)}
    x = np.vstack([s.x for s in sets])
    y = np.concatenate([s.correct for s in sets]).astype(float)
    return {"kind": "gbt", **gbt.fit(x, y, weights(sets), list(FEATURES), monotone=MONOTONE)}


def prob(model: dict, x: np.ndarray) -> np.ndarray:
    """P(supported) per row; 0 where the search offered nothing (as judge.judges.deterministic.claim_probability)."""
    none = x[:, FEATURES.index("no_candidate")] > 0
    if model["kind"] == "gbt":
        return np.where(none, 0.0, gbt.predict(model, x, list(FEATURES)))
    coef = np.array([model["weights"][n] for n in FEATURES])
    return np.where(none, 0.0, 1 / (1 + np.exp(-(x @ coef + model["intercept"]))))


def predict(s: Set, p: np.ndarray, t: dict) -> np.ndarray:
    """The judge's labels (UNSURE included) for probabilities ``p`` under thresholds ``t`` (by language:
    ``he`` for Hebrew claims, ``default`` for the rest): each claim's label in the regime its score falls in
    (:func:`regimes`, the judge's own function); a set that does not tell contradicted from unsupported reads
    the one as the other."""
    sup = np.where(s.hebrew, t["he"]["supported_from"], t["default"]["supported_from"])
    unsure = np.where(s.hebrew, t["he"]["unsure_from"], t["default"]["unsure_from"])
    pred = np.select([p >= sup, p >= unsure], [s.regimes[:, 0], s.regimes[:, 1]], default=s.regimes[:, 2])
    return np.where(s.collapse & (pred == C), U, pred)


def fit_profile(sets: list[Set], probs: list[np.ndarray], base: dict | None = None) -> dict:
    """One language's supported_from on the mean training measure, then its unsure band: the widest below
    that costs no training set more than UNSURE_COST of its measure (an unsure claim counts as not verified:
    on answers, as flagged; on claim labels, as wrong) and holds at most UNSURE_SHARE of its claims."""
    def scores(t: dict) -> list[float]:
        both = {"he": t, "default": t}
        return [s.score(predict(s, p, both)) for s, p in zip(sets, probs)]

    a = max(GRID, key=lambda v: (round(float(np.mean(scores({"supported_from": v, "unsure_from": v}))), 4), -abs(v - 0.5)))
    t = {"supported_from": float(a), "unsure_from": float(a)}
    full = scores(t)
    for lo in sorted((g for g in GRID if g < a), reverse=True):
        trial = {**t, "unsure_from": float(lo)}
        share = max(float(((p >= lo) & (p < a)).mean()) for p in probs)
        if share > UNSURE_SHARE or any(x < f - UNSURE_COST for x, f in zip(scores(trial), full)):
            break
        t = trial
    return t


def fit_thresholds(sets: list[Set], probs: list[np.ndarray]) -> dict:
    """The default profile on every training set, the Hebrew one on the Hebrew ones (the default where
    there are none); then free_from."""
    fixed = load_weights().thresholds  # the fault rule's two numbers are fixed per language, carried over
    t = {"default": fit_profile(sets, probs)}
    he = [(s, p) for s, p in zip(sets, probs) if s.hebrew.all()]
    t["he"] = fit_profile([s for s, _ in he], [p for _, p in he]) if he else dict(t["default"])
    for lang in ("default", "he"):
        t[lang] |= getattr(fixed, lang).model_dump(include={"unsupported_below", "question_min_coverage"})
    t["free_from"] = fit_free(sets, probs)
    return t


def judged_free(s: Set) -> np.ndarray:
    """The claims whose free verdict gold can judge: not one of several claims of a wrong answer (its gold
    says some claim of it is wrong, not which: "Michael Jordan is awesome! <a sentence of the source>")."""
    size = np.bincount(s.group, minlength=s.n_answers)[s.group]
    return ~(s.answer_level & ~s.answer_gold[s.group] & (size > 1))


def fit_free(sets: list[Set], probs: list[np.ndarray]) -> float:
    """The lowest p from which triage's free verdicts are right >= FREE_PRECISION on every training set
    (1.01: never, when no value reaches it)."""
    for lo in [0.0, *GRID, 0.975, 0.99]:
        ok = True
        for s, p in zip(sets, probs):
            free = s.free & (p >= lo) & judged_free(s)
            if free.sum() and s.correct[free].mean() < FREE_PRECISION:
                ok = False
                break
        if ok:
            return float(lo)
    return 1.01


def fit(sets: list[Set]) -> dict:
    model = fit_model(sets)
    probs = [prob(model, s.x) for s in sets]
    return model | {"thresholds": fit_thresholds(sets, probs)}


# -- held-out figures ------------------------------------------------------------------------------------------
def bootstrap(s: Set, a: np.ndarray, b: np.ndarray, n: int = 1000, seed: int = 0) -> tuple[float, float]:
    """95% interval of balanced(a) - balanced(b) over answers resampled with replacement (paired)."""
    rng = np.random.default_rng(seed)
    oka, okb, gold = s.answers(a), s.answers(b), s.answer_gold
    diffs = []
    for _ in range(n):
        k = rng.integers(0, s.n_answers, s.n_answers)
        diffs.append(balanced(gold[k], oka[k]) - balanced(gold[k], okb[k]))
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    return float(lo), float(hi)


def free_figures(s: Set, p: np.ndarray, t: dict) -> dict:
    """Share of the claims settled free (today's verbatim rule, and with the learned gate), and precision
    over those gold can judge (:func:`judged_free`)."""
    today = s.free
    kept = s.free & (p >= t["free_from"])
    judged = judged_free(s)
    prec = (lambda m: float(s.correct[m & judged].mean()) if (m & judged).sum() else None)  # noqa: E731
    return {"today_share": float(today.mean()), "today_precision": prec(today), "share": float(kept.mean()),
            "precision": prec(kept), "settled": int(kept.sum()), "judged": int((kept & judged).sum())}


def held_out(held: Set, train: list[Set]) -> tuple[np.ndarray, np.ndarray, dict]:
    """The judge fitted on ``train``, on ``held``: its labels, probabilities and thresholds."""
    model = fit(train)
    p = prob(model, held.x)
    return predict(held, p, model["thresholds"]), p, model["thresholds"]


def hebrew_folds(held: Set, others: list[Set], n: int = 4) -> tuple[np.ndarray, np.ndarray, dict]:
    """The Hebrew answers are what the ``he`` profile serves: their held-out figure comes from n folds by
    record, the other folds in training beside every other set."""
    groups = sorted({i.group for i in held.items})
    fold = np.array([groups.index(i.group) % n for i in held.items])
    pred, p = np.zeros(len(held.items), dtype=int), np.zeros(len(held.items))
    for k in range(n):
        test, train = held.subset(fold == k), held.subset(fold != k)
        pk, probs, t = held_out(test, [train, *others])
        pred[fold == k], p[fold == k] = pk, probs
    return pred, p, t


def leave_one_out(sets: list[Set], only: set[str] | None = None) -> dict:
    out = {}
    for held in sets:
        if only and held.name not in only:
            continue
        train = [s for s in sets if s is not held]
        pred, p, t = hebrew_folds(held, train) if held.name == "hebrew answers" else held_out(held, train)
        hi, lo = fit_baseline(train, "overlap")
        bhi, blo = fit_baseline(train, "bm25")
        ov = baseline_predict(np.array([i.overlap for i in held.items]), hi, lo)
        bm = baseline_predict(np.array([i.bm25 for i in held.items]), bhi, blo)
        bal = {k: balanced(held.answer_gold, held.answers(v)) for k, v in (("judge", pred), ("overlap", ov), ("bm25", bm))}
        wrongly = (pred == C) & held.correct
        out[held.name] = {
            "genre": GENRE.get(held.name, "?"), "answers": held.n_answers, "claims": len(held.items),
            "balanced": bal, "ci_overlap": bootstrap(held, pred, ov), "ci_bm25": bootstrap(held, pred, bm),
            "measure": held.measure, "own_measure": held.score(pred),
            "own_baselines": {"overlap": held.score(ov), "bm25": held.score(bm)},
            "unsure_share": float((pred == UNSURE).mean()),
            "contradicted_correct": int(wrongly.sum()),
            "contradicted_correct_answers": len({held.group[k] for k in np.flatnonzero(wrongly) if held.answer_gold[held.group[k]]}),
            "free": free_figures(held, p, t), "thresholds": t,
        }
        r = out[held.name]
        print(f"{held.name}: judge {bal['judge']:.3f} overlap {bal['overlap']:.3f} bm25 {bal['bm25']:.3f} {held.measure} {r['own_measure']:.3f} "
              f"unsure {r['unsure_share']:.2f} contra-correct {r['contradicted_correct']} free {r['free']} t {t}", flush=True)
    return out


def table(lodo: dict) -> str:
    f = lambda v: f"{v:.3f}"  # noqa: E731
    ci = lambda c: f"[{c[0]:+.3f}, {c[1]:+.3f}]"  # noqa: E731
    lines = ["| held-out set | genre | answers | judge | overlap | BM25 | judge - overlap (95% CI) | judge - BM25 (95% CI) | unsure | free share (today) | free precision (today) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    lodo = {n: r for n, r in lodo.items() if r["measure"] != "macro_f1"}  # the Hebrew answers: claims of 16 records, macro-F1 below
    for name, r in lodo.items():
        b, fr = r["balanced"], r["free"]
        pr = lambda v: "-" if v is None else f(v)  # noqa: E731
        lines.append(f"| {name} | {r['genre']} | {r['answers']} | {f(b['judge'])} | {f(b['overlap'])} | {f(b['bm25'])} | {ci(r['ci_overlap'])} | {ci(r['ci_bm25'])} "
                     f"| {r['unsure_share']:.2f} | {fr['share']:.3f} ({fr['today_share']:.3f}) | {pr(fr['precision'])} ({pr(fr['today_precision'])}) |")
    means = {k: np.mean([r["balanced"][k] for r in lodo.values()]) for k in ("judge", "overlap", "bm25")}
    lines.append(f"| **mean** | | | **{f(means['judge'])}** | {f(means['overlap'])} | {f(means['bm25'])} | | | | | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--extra", type=Path, default=Path("/work/data-extra"))
    ap.add_argument("--cache", type=Path, default=Path("/work/data-extra/cache"))
    ap.add_argument("--limit", type=int, default=120, help="paragraphs of HeQ and FaQuAD")
    ap.add_argument("--write", type=Path, default=None, help="write the weights fitted on every set (judge/data/no_model_judge.json)")
    ap.add_argument("--json", type=Path, default=None, help="write the held-out figures here")
    ap.add_argument("--model", choices=("gbt", "lr"), default="gbt")
    ap.add_argument("--only", default="", help="comma-separated held-out sets (while iterating)")
    args = ap.parse_args(argv)
    global MODEL
    MODEL = args.model
    rows = {k: v for k, v in load_rows(args.data, args.extra, args.cache, args.limit).items() if v}  # a set not at hand has no rows
    sets = [Set(n, r) for n, r in rows.items()]
    lodo = leave_one_out(sets, set(filter(None, args.only.split(","))))
    print("\n" + table(lodo))
    other = {n: r["own_measure"] for n, r in lodo.items() if r["measure"] != "balanced"}
    print(f"\nown measures (held out): {other}")
    if args.json:
        args.json.write_text(json.dumps(lodo, indent=1), encoding="utf-8")
    if args.write:
        model = fit(sets)
        doc = {"about": "Learned by bench/fit_no_model_judge.py (see its docstring); do not edit by hand, rerun it.",
               "features": list(FEATURES), **model,
               "fitted_on": {s.name: len(s.items) for s in sets},
               "heldout": {"balanced_accuracy": {n: round(r["balanced"]["judge"], 4) for n, r in lodo.items()},
                           "own_measure": {n: {r["measure"]: round(r["own_measure"], 4)} for n, r in lodo.items() if r["measure"] != "balanced"},
                           "free": {n: {"share": round(r["free"]["share"], 4), "precision": r["free"]["precision"] and round(r["free"]["precision"], 4)}
                                    for n, r in lodo.items()}}}
        args.write.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.write}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
