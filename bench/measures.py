"""The labelled sets' measures and the two lexical baselines every no-model figure stands beside.

- measures: macro-F1 on the Hebrew answers (4 labels), accuracy on WiCE (3 labels), balanced accuracy on the
  answer-level sets (an answer is judged correct when every claim of it is ``supported``);
- overlap: the share of the claim's content words the whole source writes (a bag of words): at least t1
  supported, at least t2 partially supported, else unsupported;
- BM25 (``rank_bm25``): the best source sentence's Okapi score over the most the claim's terms could score,
  with two thresholds the same way.

(Once bench/calibrate_deterministic.py, which also fitted the hand rule's thresholds; the no-model judge has one
decision path since issue 48, fitted by bench/fit_no_model_judge.py.)
"""

from __future__ import annotations

import numpy as np

from judge.verdicts import LABELS

LABEL_INDEX = {lbl: i for i, lbl in enumerate(LABELS)}
S, P, U, C = (LABEL_INDEX[x] for x in ("supported", "partially_supported", "unsupported", "contradicted"))


def measure_of(name: str) -> str:
    return {"hebrew answers": "macro_f1", "WiCE": "accuracy"}.get(name, "balanced")


class Scored:
    """One set's gold, its answers (claims grouped) and how it is measured."""

    def __init__(self, name: str, items: list):
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
