"""Corrected rates: the judge's verdicts on every claim, corrected for its bias by a person's labels on a random
sample of them, by prediction-powered inference (PPI++ with power tuning, judge.metrics.ppi).

Per level (claims; answers: grounded or not) and per model under test (and all together): the judge's raw
rate, the corrected rate with its 95% interval, the labels-only rate and interval, and how many more labels
would halve the interval; the judge's precision and recall per label against the labels, with exact
(Clopper-Pearson) intervals. Each labelled item is weighted by 1 / its inclusion probability (the sheet's
stratified draw, judge.labels.sample), times its stratum's share of items left unlabelled or skipped.

At answer level, faithfulness is the share of answers grounded (every claim supported) and the hallucination
rate the share not grounded. Every caveat is a line in the section (few labels, labels all of one kind, items
left unlabelled), never silent.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel

from judge.labels.sheet import ANSWER, CLAIM, Labels, Sheet, SheetRow, item_id
from judge.metrics.ppi import MeanEstimate, classical_mean, labels_to_halve, ppi_mean
from judge.scoring.base import Block, Section, Table
from judge.verdicts import (
    ANSWER_LABELS, CREDIT, GROUNDED_ANSWER, HALLUCINATED, LABELS, NOT_GROUNDED_ANSWER, answer_label, is_judged,
)

FEW_LABELS = 10  # below this, an interval is printed with a warning
ALL = "all models"
METRICS = ("hallucination_rate", "faithfulness")


def value(metric: str, level: str, label: str) -> float:
    """What one label counts toward a rate (the rules of judge.verdicts; answers: grounded or not)."""
    if level == CLAIM:
        return float(label in HALLUCINATED) if metric == "hallucination_rate" else CREDIT[label]
    return float(label == (NOT_GROUNDED_ANSWER if metric == "hallucination_rate" else GROUNDED_ANSWER))


class Interval(BaseModel):
    estimate: float
    low: float
    high: float
    se: float
    lam: float | None = None


class Estimate(BaseModel):
    judge: float | None  # the judge's raw rate over every item
    corrected: Interval | None
    labels_only: Interval | None
    labels: int
    items: int
    labels_to_halve: int | None = None


class LabelAgreement(BaseModel):
    precision: float | None
    precision_ci: list[float] | None
    recall: float | None
    recall_ci: list[float] | None
    predicted: int  # labelled items the judge gave this label
    labelled: int  # labelled items the person gave this label


class LevelScores(BaseModel):
    sampled: int
    labelled: int
    skipped: int
    unlabelled: int
    models: dict[str, dict[str, Estimate]]  # model (or ALL) -> metric -> estimate
    judge_vs_labels: dict[str, LabelAgreement]


class CorrectedScores(BaseModel):
    files: list[str]
    run_id: str | None
    levels: dict[str, LevelScores]
    warnings: list[str]


def _interval(e: MeanEstimate) -> Interval:
    return Interval(estimate=round(e.estimate, 6), low=round(max(0.0, e.low), 6), high=round(min(1.0, e.high), 6), se=round(e.se, 6),
                    lam=round(e.lam, 6))


def _exact(k: int, n: int) -> list[float]:
    from judge.controls.health import exact_interval

    return [round(x, 6) for x in exact_interval(k, n)]


def estimate(y: np.ndarray, yhat: np.ndarray, population: np.ndarray, w: np.ndarray) -> tuple[Interval, Interval, bool]:
    """(corrected, labels only, whether the labels are all the same) for labelled values ``y``, the judge's
    values on them ``yhat`` and on every item ``population``, and sampling weights ``w``. Labels all of one
    value show no variation: a normal interval would have no width, so the exact interval over the labels is
    given (and the corrected one widened to hold it)."""
    corrected, alone = _interval(ppi_mean(y, yhat, population, w)), _interval(classical_mean(y, w))
    if corrected.high - corrected.low > alone.high - alone.low:
        # tuning makes the unclipped interval no wider, but a point near 0 or 1 is clipped on one side only:
        # then lambda = 0 (the labels alone), a valid PPI++ choice, is the narrower interval
        corrected = alone
    same = len(set(y.tolist())) == 1
    if same and y[0] in (0.0, 1.0):
        lo, hi = _exact(int(y[0]) * len(y), len(y))
        corrected = corrected.model_copy(update={"low": min(corrected.low, lo), "high": max(corrected.high, hi)})
        alone = alone.model_copy(update={"low": lo, "high": hi})
    return corrected, alone, same


class Corrected(Section):
    key, title = "corrected", "Corrected rates: the judge corrected by human labels (PPI++)"

    def __init__(self, labels: Labels):
        self.labels = labels
        self.rows = {r.item: r for r in labels.rows()}
        self.population: dict[str, dict[str, Counter]] = {CLAIM: defaultdict(Counter), ANSWER: defaultdict(Counter)}
        self.judged: dict[str, str] = {}  # item -> the panel's label (claims) or answer label, for the labelled items

    def add(self, item):
        i = next(k for k, x in enumerate(item.result.answers) if x is item.answer)
        a, rid = item.answer, item.result.record_id
        for c in a.claims:
            if is_judged(c.label):
                self.population[CLAIM][a.model][c.label] += 1
                key = item_id(rid, i, c.claim_id)
                if key in self.rows:
                    self.judged[key] = c.label
        label = answer_label(c.label for c in a.claims)
        if label is not None:
            self.population[ANSWER][a.model][label] += 1
            key = item_id(rid, i)
            if key in self.rows:
                self.judged[key] = label

    def result(self, context):
        warnings: list[str] = []
        levels = {}
        for level in (CLAIM, ANSWER):
            rows = [r for r in self.rows.values() if r.level == level]
            if rows:
                levels[level] = self._level(level, rows, warnings)
        run_ids = sorted({r.run_id for r in self.rows.values()})
        return CorrectedScores(files=[s.path for s in self.labels.sheets], run_id=run_ids[0] if run_ids else None, levels=levels, warnings=warnings)

    def _level(self, level: str, rows: list[SheetRow], warnings: list[str]) -> LevelScores:
        noun = "claim" if level == CLAIM else "answer"
        sampled, labelled = Counter(r.stratum for r in rows), Counter(r.stratum for r in rows if r.labelled)
        usable = [r for r in rows if r.labelled and r.item in self.judged]
        skipped = sum(r.label == "skip" for r in rows)
        unlabelled = sum(r.label == "" for r in rows)
        if skipped or unlabelled:
            warnings.append(f"{noun} labels: {unlabelled} of the {len(rows)} sampled {noun}s are not labelled yet and {skipped} were skipped; "
                            "they are left out, and each stratum's labelled items stand for them")
        bare = sorted(s for s in sampled if not labelled[s])
        if bare:  # nothing stands for these items: the estimate cannot correct the judge there
            warnings.append(f"{noun} labels: no {noun} the panel called {', '.join(bare)} is labelled; the estimate cannot correct the "
                            "judge on those (label some of them, or draw more with judge label --more)")
        weights = {r.item: 1 / (r.inclusion_probability * labelled[r.stratum] / sampled[r.stratum]) for r in usable}
        models: dict[str, dict[str, Estimate]] = {}
        population = self.population[level]
        for model in [ALL, *sorted(population)]:
            counts = sum(population.values(), Counter()) if model == ALL else population[model]
            mine = [r for r in usable if model == ALL or r.model == model]
            models[model] = {m: self._estimate(m, level, counts, mine, weights, warnings, f"{noun}s of {model}") for m in METRICS}
        return LevelScores(sampled=len(rows), labelled=len(usable), skipped=skipped, unlabelled=unlabelled, models=models,
                           judge_vs_labels=self._agreement(level, usable, weights))

    def _estimate(self, metric, level, counts: Counter, rows: list[SheetRow], weights, warnings, what: str) -> Estimate:
        labels = LABELS if level == CLAIM else ANSWER_LABELS
        population = np.repeat([value(metric, level, lbl) for lbl in labels], [counts[lbl] for lbl in labels])
        judge = round(float(population.mean()), 6) if len(population) else None
        n = len(rows)
        if n == 0 or not len(population):
            return Estimate(judge=judge, corrected=None, labels_only=None, labels=n, items=len(population))
        y = np.array([value(metric, level, r.label) for r in rows])
        yhat = np.array([value(metric, level, self.judged[r.item]) for r in rows])
        w = np.array([weights[r.item] for r in rows])
        corrected, alone, same = estimate(y, yhat, population, w)
        if n < FEW_LABELS and metric == METRICS[0]:
            warnings.append(f"{what}: only {n} label{'s' if n != 1 else ''}; the intervals are approximate (label at least {FEW_LABELS}, better 50)")
        if same:
            shown_as = "exact (Clopper-Pearson) over the labels" if y[0] in (0.0, 1.0) else "normal ones of no width: read them with care"
            warnings.append(f"{what}: all {n} labels give the same {metric.replace('_', ' ')} ({y[0]:g}), so the labels show no variation "
                            f"to estimate; the intervals shown are {shown_as}")
        return Estimate(judge=judge, corrected=corrected, labels_only=alone, labels=n, items=len(population), labels_to_halve=labels_to_halve(n, len(population)))

    def _agreement(self, level: str, rows: list[SheetRow], weights) -> dict[str, LabelAgreement]:
        out = {}
        for lbl in LABELS if level == CLAIM else ANSWER_LABELS:
            predicted = [r for r in rows if self.judged[r.item] == lbl]
            hits = sum(r.label == lbl for r in predicted)
            truly = [r for r in rows if r.label == lbl]
            precision = round(hits / len(predicted), 6) if predicted else None
            recall = recall_ci = None
            if truly:  # weighted (strata are drawn at different rates); exact interval on the effective counts
                w = np.array([weights[r.item] for r in truly])
                found = np.array([self.judged[r.item] == lbl for r in truly])
                recall = float((w * found).sum() / w.sum())
                n_eff = max(1, int(round(w.sum() ** 2 / (w**2).sum())))
                recall_ci = _exact(int(round(recall * n_eff)), n_eff)
                recall = round(recall, 6)
            out[lbl] = LabelAgreement(precision=precision, precision_ci=_exact(hits, len(predicted)) if predicted else None, recall=recall,
                                      recall_ci=recall_ci, predicted=len(predicted), labelled=len(truly))
        return out

    @classmethod
    def block(cls, value, scores):
        if not value:
            return None
        rates, agree = [], []
        for level, v in value["levels"].items():
            for model, metrics in v["models"].items():
                for metric, e in metrics.items():
                    c, a = e.get("corrected"), e.get("labels_only")
                    rates.append([level, model, metric.replace("_", " "), e.get("judge"), _with_ci(c), _with_ci(a), f"{e['labels']} of {e['items']}",
                                  e.get("labels_to_halve")])
            for lbl, g in v["judge_vs_labels"].items():
                agree.append([level, lbl, g["precision"], _ci(g["precision_ci"]), g["recall"], _ci(g["recall_ci"]), g["predicted"], g["labelled"]])
        levels = ", ".join(f"{v['labelled']} {lvl} labels" for lvl, v in value["levels"].items())
        lead = (f"From {levels} ({', '.join(value['files'])}). The corrected rate, not the judge's raw rate, is the estimate to trust: "
                "its interval holds whatever the judge's quality.")
        tables = [Table(["level", "model", "metric", "judge (raw)", "corrected [95%]", "labels only [95%]", "labelled", "more to halve"], rates,
                        note="more to halve: labels to add for an interval half as wide (n/a: the items are too few)"),
                  Table(["level", "label", "precision", "95% exact", "recall", "95% exact", "judge gave it", "person gave it"], agree,
                        title="The judge against the labels (per label; recall weighted by the sample's design):")]
        if value["warnings"]:
            tables[-1].note = "Warnings: " + " | ".join(value["warnings"])
        return Block(cls.title, tables, text=lead + (" Warnings below." if value["warnings"] else ""))


def _with_ci(x) -> str:
    return "-" if not x else f"{x['estimate']:.3f} {_ci(x)}"


def _ci(x) -> str:
    if not x:
        return "-"
    lo, hi = (x["low"], x["high"]) if isinstance(x, dict) else x
    return f"[{lo:.3f}, {hi:.3f}]"
