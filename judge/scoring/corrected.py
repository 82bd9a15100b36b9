"""Corrected rates: the judge's verdicts on every claim, corrected for its bias by a person's labels on a random
sample of them (judge.metrics.ppi; docs/labels.md). Per level (claims, answers) and model under test: the raw
rate, the corrected rate and the labels-only rate with their 95% intervals, the labels that would halve the
interval, and the judge's precision and recall against the labels. Every caveat is a line, never silent.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import numpy as np
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from judge.labels.sheet import ANSWER, CLAIM, Labels, SheetRow, item_id
from judge.metrics.ppi import MeanEstimate, Stratum, labels_alone, labels_to_halve, stratified_mean
from judge.scoring.base import Block, Section, Table
from judge.verdicts import (
    ANSWER_LABELS, CREDIT, GROUNDED_ANSWER, HALLUCINATED, LABELS, NOT_GROUNDED_ANSWER, answer_label, is_judged,
)

FEW_LABELS = 20  # below this, an interval is printed with a warning (it is valid, and wide)
MIN_LABELS = 10  # below this, a slice (all models, or one) gets no corrected interval: "too few labels: N more"
FEW_PER_STRATUM = 3  # a stratum with fewer labels (and more items) is named in a warning
ALL = "all models"
METRICS = ("hallucination_rate", "faithfulness")


def value(metric: str, level: str, label: str) -> float:
    """What one label counts toward a rate (the rules of judge.verdicts; answers: grounded or not)."""
    if level == CLAIM:
        return float(label in HALLUCINATED) if metric == "hallucination_rate" else CREDIT[label]
    return float(label == (NOT_GROUNDED_ANSWER if metric == "hallucination_rate" else GROUNDED_ANSWER))


Rate = Annotated[float, Field(ge=0, le=1)]
Count = Annotated[int, Field(ge=0)]


class Interval(BaseModel):
    model_config = ConfigDict(allow_inf_nan=False)

    estimate: Rate
    low: Rate
    high: Rate
    se: Annotated[float, Field(ge=0)]
    lam: Rate | None = None

    @model_validator(mode="after")
    def _ordered(self):
        if not self.low - 1e-6 <= self.estimate <= self.high + 1e-6:
            raise ValueError(f"low {self.low} <= estimate {self.estimate} <= high {self.high} does not hold")
        return self


class Estimate(BaseModel):
    model_config = ConfigDict(allow_inf_nan=False)

    judge: Rate | None  # the judge's raw rate over every item
    corrected: Interval | None
    labels_only: Interval | None
    labels: Count
    items: Count
    labels_to_halve: Count | None = None
    withheld: str | None = None  # why no corrected interval is given (too few labels for the slice)
    more_needed: Count | None = None  # labels to add before one is


class LabelAgreement(BaseModel):
    model_config = ConfigDict(allow_inf_nan=False)

    precision: Rate | None
    precision_ci: Annotated[list[Rate], Field(min_length=2, max_length=2)] | None
    recall: Rate | None
    recall_ci: Annotated[list[Rate], Field(min_length=2, max_length=2)] | None
    predicted: Count  # labelled items the judge gave this label
    labelled: Count  # labelled items the person gave this label


class LevelScores(BaseModel):
    sampled: Count
    labelled: Count
    skipped: Count
    unlabelled: Count
    models: dict[str, dict[Literal["hallucination_rate", "faithfulness"], Estimate]]  # model (or ALL) -> metric -> estimate
    judge_vs_labels: dict[str, LabelAgreement]


class CorrectedScores(BaseModel):
    """scores.json's ``corrected`` block; read back through this model (judge.scoring.corrected_compare.corrected_of)."""

    files: list[str]
    run_id: str | None
    levels: dict[Literal["claim", "answer"], LevelScores]
    warnings: list[str]


def _interval(e: MeanEstimate) -> Interval:
    """An Interval of ``e``, always holding its estimate (an interval that does not is widened to it, never a
    ValidationError)."""
    point = min(1.0, max(0.0, e.estimate))
    low, high = min(point, max(0.0, e.low)), max(point, min(1.0, e.high))
    return Interval(estimate=round(point, 6), low=round(low, 6), high=round(high, 6), se=round(e.se, 6),
                    lam=None if math.isnan(e.lam) else round(e.lam, 6))


def _exact(k: int, n: int) -> list[float]:
    from judge.controls.health import exact_interval

    return [round(x, 6) for x in exact_interval(k, n)]


def estimate(cells: list[Stratum], y: np.ndarray, w: np.ndarray) -> tuple[Interval, Interval, bool]:
    """(corrected, labels only, whether the labels are all the same) of one slice: ``cells``, its strata (items
    by model and verdict, with their labels), and its labelled values ``y`` with sampling weights ``w``. Labels
    all of one value: the labels-only interval is the exact one. The corrected interval is never wider than
    the labels-only one: when it would be, the labels-only one is given."""
    # a stratum with no label (a model left unlabelled, issue 50.3) may hold any rate from 0 to 1: stratified_mean's
    # interval reaches its whole share above the labelled ones
    unlabelled = any(c.size > 0 and not c.labels for c in cells)
    corrected = _interval(stratified_mean(cells))
    n, size = len(y), sum(c.size for c in cells)
    alone = _interval(labels_alone(y, w, size))
    same = len(set(y.tolist())) == 1
    if same and y[0] in (0.0, 1.0):
        lo, hi = _exact(int(y[0]) * n, n)
        alone = alone.model_copy(update={"low": lo, "high": hi})
    if corrected.high - corrected.low > alone.high - alone.low and not unlabelled:  # (with unlabelled strata the labels alone speak for none of them)
        corrected = alone.model_copy(update={"lam": 0.0})
    return corrected, alone, same


class Corrected(Section):
    key, title = "corrected", "Corrected rates: the judge corrected by human labels (PPI++)"

    def __init__(self, labels: Labels):
        self.labels = labels
        self.rows = {r.item: r for r in labels.rows()}
        # level -> model -> the panel's label (claims) or answer label -> items: every judged item, unsure ones
        # included (as in the raw rates); answers with no judged claim are outside the answer level
        self.population: dict[str, dict[str, Counter]] = {CLAIM: defaultdict(Counter), ANSWER: defaultdict(Counter)}
        self.judged: dict[str, tuple[str, str]] = {}  # labelled item -> (model, the panel's label) from the run, never the sheet
        self.unjudged_answers = 0

    def add(self, item):
        i = next(k for k, x in enumerate(item.result.answers) if x is item.answer)
        a, rid = item.answer, item.result.record_id
        for c in a.claims:
            if is_judged(c.label):
                self.population[CLAIM][a.model][c.label] += 1
                key = item_id(rid, i, c.claim_id)
                if key in self.rows:
                    self.judged[key] = (a.model, c.label)
        label = answer_label(c.label for c in a.claims)
        if label is None:
            self.unjudged_answers += 1
            return
        self.population[ANSWER][a.model][label] += 1
        key = item_id(rid, i)
        if key in self.rows:
            self.judged[key] = (a.model, label)

    def result(self, context):
        warnings: list[str] = list(self.labels.notes)
        levels = {}
        for level in (CLAIM, ANSWER):
            rows = [r for r in self.rows.values() if r.level == level]
            if rows:
                levels[level] = self._level(level, rows, warnings)
        if ANSWER in levels and self.unjudged_answers:
            warnings.append(f"answer labels: {self.unjudged_answers} answer{'s have' if self.unjudged_answers != 1 else ' has'} no judged claim "
                            "(no claim, or only judge errors): outside the answer-level rates, raw and corrected alike, and never sampled")
        run_ids = sorted({r.run_id for r in self.rows.values()})
        return CorrectedScores(files=[s.path for s in self.labels.sheets], run_id=run_ids[0] if run_ids else None, levels=levels, warnings=warnings)

    def _level(self, level: str, rows: list[SheetRow], warnings: list[str]) -> LevelScores:
        noun = "claim" if level == CLAIM else "answer"
        usable = [r for r in rows if r.labelled and r.item in self.judged]
        skipped = sum(r.label == "skip" for r in rows)
        unlabelled = sum(r.label == "" for r in rows)
        if skipped or unlabelled:
            warnings.append(f"{noun} labels: {unlabelled} of the {len(rows)} sampled {noun}s are not labelled yet and {skipped} were skipped; "
                            "they are left out, and each stratum's labelled items stand for them")
        population = self.population[level]
        cell_labels: dict[tuple[str, str], list[SheetRow]] = defaultdict(list)
        for r in usable:
            cell_labels[self.judged[r.item]].append(r)
        cells = {(m, lbl): n for m, counts in population.items() for lbl, n in counts.items() if n}
        bare = [f"{m}/{lbl} ({n})" for (m, lbl), n in sorted(cells.items()) if not cell_labels[(m, lbl)]]
        if bare:  # nothing stands for these items: the interval takes their rate as anything from 0 to 1
            warnings.append(f"{noun} labels: no {noun} of these strata (model/verdict, items) is labelled: {', '.join(bare)}; the intervals "
                            "count their rate as anything from 0 to 1 (label some of them, or draw more with judge label --more)")
        thin = [f"{m}/{lbl} {len(cell_labels[(m, lbl)])} of {n}" for (m, lbl), n in sorted(cells.items())
                if 0 < len(cell_labels[(m, lbl)]) < FEW_PER_STRATUM < n]
        if thin:
            warnings.append(f"{noun} labels: few labels in these strata (model/verdict, labelled of items): {', '.join(thin)}; each rests on "
                            "them, and the interval allows for it (its variance is never taken as 0)")
        weights = {r.item: cells[self.judged[r.item]] / len(cell_labels[self.judged[r.item]]) for r in usable}
        models: dict[str, dict[str, Estimate]] = {}
        for model in [ALL, *sorted(population)]:
            mine = {key: n for key, n in cells.items() if model == ALL or key[0] == model}
            models[model] = {m: self._estimate(m, level, mine, cell_labels, weights, warnings, model, noun) for m in METRICS}
        _directions(models, noun, warnings)
        return LevelScores(sampled=len(rows), labelled=len(usable), skipped=skipped, unlabelled=unlabelled, models=models,
                           judge_vs_labels=self._agreement(level, usable, weights))

    def _estimate(self, metric, level, cells: dict, cell_labels: dict, weights, warnings, model: str, noun: str) -> Estimate:
        items = sum(cells.values())
        judge = round(sum(n * value(metric, level, lbl) for (_, lbl), n in cells.items()) / items, 6) if items else None
        rows = [r for key in cells for r in cell_labels[key]]
        n = len(rows)
        what = f"{noun}s of {model}"
        if n < MIN_LABELS or not items:
            more = MIN_LABELS - n
            why = (f"too few labels for {'this model' if model != ALL else 'all models'}: {more} more ({n} of the {MIN_LABELS} an interval "
                   "needs; judge label --more adds labels to every model in proportion to its items)") if items else None
            if items and metric == METRICS[0]:
                warnings.append(f"{what}: {why}; no corrected rate is given, and a gate on it fails")
            return Estimate(judge=judge, corrected=None, labels_only=None, labels=n, items=items, withheld=why, more_needed=more if items else None)
        strata = [Stratum(size, tuple(value(metric, level, r.label) for r in cell_labels[key]), value(metric, level, key[1]))
                  for key, size in sorted(cells.items())]
        y = np.array([value(metric, level, r.label) for r in rows])
        w = np.array([weights[r.item] for r in rows])
        corrected, alone, same = estimate(strata, y, w)
        if n < FEW_LABELS and metric == METRICS[0]:
            warnings.append(f"{what}: only {n} labels; the intervals are valid but wide (label at least {FEW_LABELS}, better 50)")
        if same:
            shown_as = "exact (Clopper-Pearson) over the labels" if y[0] in (0.0, 1.0) else "normal ones: read them with care"
            warnings.append(f"{what}: all {n} labels give the same {metric.replace('_', ' ')} ({y[0]:g}), so the labels show no variation; "
                            f"the labels-only intervals shown are {shown_as}, the corrected ones take each stratum's variance as never 0")
        return Estimate(judge=judge, corrected=corrected, labels_only=alone, labels=n, items=items, labels_to_halve=labels_to_halve(n, items))

    def _agreement(self, level: str, rows: list[SheetRow], weights) -> dict[str, LabelAgreement]:
        out = {}
        for lbl in LABELS if level == CLAIM else ANSWER_LABELS:
            predicted = [r for r in rows if self.judged[r.item][1] == lbl]
            hits = sum(r.label == lbl for r in predicted)
            truly = [r for r in rows if r.label == lbl]
            precision = round(hits / len(predicted), 6) if predicted else None
            recall = recall_ci = None
            if truly:  # weighted (strata are drawn at different rates); exact interval on the effective counts
                w = np.array([weights[r.item] for r in truly])
                found = np.array([self.judged[r.item][1] == lbl for r in truly])
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
                    shown = _with_ci(c) if c or not e.get("withheld") else f"- (too few labels: {e.get('more_needed')} more)"
                    rates.append([level, model, metric.replace("_", " "), e.get("judge"), shown, _with_ci(a), f"{e['labels']} of {e['items']}",
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


def _directions(models: dict[str, dict[str, Estimate]], noun: str, warnings: list[str]) -> None:
    """A plain sentence where a model's correction goes against the judge's raw rate in the other direction from
    all models' (issue 49 item 3), or where the raw rate lies outside the corrected interval."""
    overall = models[ALL][METRICS[0]]
    base = overall.corrected.estimate - overall.judge if overall.corrected and overall.judge is not None else 0.0
    for model, metrics in models.items():
        e = metrics[METRICS[0]]
        if not e.corrected or e.judge is None:
            continue
        c, raw = e.corrected, e.judge
        delta = c.estimate - raw
        way = "fewer" if delta < 0 else "more"
        if model != ALL and abs(delta) > 0.005 and abs(base) > 0.005 and (delta > 0) != (base > 0):
            warnings.append(f"{noun}s of {model}: the labels find {way} hallucinations than the judge (corrected {c.estimate:.3f} against its "
                            f"{raw:.3f}), where over all models they find {'more' if base > 0 else 'fewer'}: the judge errs the other way on "
                            f"this model's {noun}s; read its corrected rate [{c.low:.3f}, {c.high:.3f}] (on {e.labels} labels), not the raw one")
        elif not c.low <= raw <= c.high:
            warnings.append(f"{noun}s of {model}: the judge's raw hallucination rate {raw:.3f} is outside the corrected interval "
                            f"[{c.low:.3f}, {c.high:.3f}] (on {e.labels} labels): the labels find {way} hallucinations than the judge says")


def _with_ci(x) -> str:
    return "-" if not x else f"{x['estimate']:.3f} {_ci(x)}"


def _ci(x) -> str:
    if not x:
        return "-"
    lo, hi = (x["low"], x["high"]) if isinstance(x, dict) else x
    return f"[{lo:.3f}, {hi:.3f}]"
