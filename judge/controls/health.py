"""Judge health: how each judge did on the control claims, and a plain verdict a person can act on.

Per judge: accuracy on its controls with a seeded bootstrap 95% interval, recall per control label (and
per kind of control: copy, reworded, number, date, entity, negation, unrelated), what it answered instead
when wrong, and its label distribution on the real claims next to it. A judge error on a control counts as
a miss (a judge that cannot answer cannot be trusted either). The verdict names the failure:
"lenient: calls 9 of 10 contradicted controls supported", "strict: ...", "unreliable: ...", or
"trustworthy on controls". Below ``min_accuracy`` a judge fails, and the run exits 3.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Literal

import numpy as np
from pydantic import BaseModel

from judge.controls.make import CONTROL_LABELS
from judge.results import RecordResult

BOOTSTRAP = 1000
MIN_CONTROLS = 3  # fewer and no verdict is given
LABEL_FLOOR = 0.5  # a label recalled less often than this is named in the verdict
LENIENT_ANSWERS = ("supported", "partially_supported")
Status = Literal["trustworthy", "lenient", "strict", "unreliable", "too_few"]


class ControlObservation(BaseModel):
    """One judge's verdict on one control."""

    judge: str
    control_id: str
    label: str  # the control's known label
    kind: str
    answered: str  # the judge's label, or "judge_error"


class LabelRecall(BaseModel):
    label: str
    controls: int
    correct: int
    recall: float
    answered_instead: dict[str, int] = {}  # the judge's other answers on these controls, most frequent first


class JudgeHealth(BaseModel):
    judge: str
    controls: int
    correct: int
    errors: int
    accuracy: float | None
    accuracy_ci95: list[float] | None
    by_label: list[LabelRecall]
    by_kind: list[LabelRecall]
    real_labels: dict[str, int] = {}  # its verdicts on the real claims
    status: Status
    verdict: str
    passed: bool | None  # None when no minimum is set or there are too few controls


class HealthReport(BaseModel):
    min_accuracy: float | None
    judges: list[JudgeHealth]

    @property
    def failed(self) -> list[JudgeHealth]:
        return [j for j in self.judges if j.passed is False]

    def lines(self) -> list[str]:
        """One plain line per judge (terminal, report.md): accuracy with its interval, the verdict, pass/fail."""
        out = []
        for j in self.judges:
            if j.accuracy is None:
                out.append(f"{j.judge}: no controls")
                continue
            ci = f" [{j.accuracy_ci95[0]:.2f}, {j.accuracy_ci95[1]:.2f}]" if j.accuracy_ci95 else ""
            mark = {True: "passed", False: "FAILED", None: "not gated"}[j.passed]
            out.append(f"{j.judge}: accuracy {j.accuracy:.2f}{ci} on {j.controls} controls, {mark}; {j.verdict}")
        return out

    def table(self) -> tuple[list[str], list[list]]:
        """Headers and rows of the judge-health table that report.md and report.html both render."""
        headers = ["judge", "controls", "accuracy", "95% CI", *(f"{lbl} recall" for lbl in CONTROL_LABELS), "gate", "verdict"]
        rows = []
        for j in self.judges:
            recall = {r.label: r.recall for r in j.by_label}
            ci = f"[{j.accuracy_ci95[0]:.2f}, {j.accuracy_ci95[1]:.2f}]" if j.accuracy_ci95 else "n/a"
            gate = {True: "passed", False: "FAILED", None: "not gated"}[j.passed]
            rows.append([j.judge, j.controls, j.accuracy, ci, *(recall.get(lbl) for lbl in CONTROL_LABELS), gate, j.verdict])
        return headers, rows

    def failure_lines(self) -> list[str]:
        """One line per failed judge, naming what it failed: what the summary and the exit-3 message say."""
        return [
            f"judge {j.judge} failed its controls: accuracy {j.accuracy:.2f} < {self.min_accuracy:.2f} on {j.controls}; {j.verdict}"
            for j in self.failed
        ]


def observations(result: RecordResult) -> list[ControlObservation]:
    """Every judge's verdict on each control of a record (triage's settlements under the name "triage")."""
    return [
        ControlObservation(
            judge="triage" if v.how == "triage" else v.judge,
            control_id=c.control.id,
            label=c.control.label,
            kind=c.control.kind,
            answered=v.label,
        )
        for c in result.controls
        for v in c.verdicts
    ]


def bootstrap_ci(hits: list[int], seed: int = 0, resamples: int = BOOTSTRAP) -> list[float] | None:
    """Percentile 95% interval of the mean of 0/1 outcomes, resampled with a seeded generator."""
    if len(hits) < 2:
        return None
    rng = np.random.default_rng(seed)
    values = np.asarray(hits, dtype=float)
    means = values[rng.integers(0, len(values), size=(resamples, len(values)))].mean(axis=1)
    return [float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))]


def _recalls(rows: list[ControlObservation], key: str, order: Iterable[str]) -> list[LabelRecall]:
    out = []
    for value in order:
        mine = [r for r in rows if getattr(r, key) == value]
        if not mine:
            continue
        correct = sum(r.answered == r.label for r in mine)
        instead = Counter(r.answered for r in mine if r.answered != r.label)
        out.append(
            LabelRecall(label=value, controls=len(mine), correct=correct, recall=correct / len(mine), answered_instead=dict(instead.most_common()))
        )
    return out


def _verdict(by_label: list[LabelRecall], accuracy: float, errors: int, n: int, passing: bool) -> tuple[Status, str]:
    """The status and the sentence: the worst-recalled labels, and which way the judge leans on them."""
    weak = sorted((r for r in by_label if r.recall < LABEL_FLOOR), key=lambda r: r.recall)
    if not weak and passing:
        return "trustworthy", f"trustworthy on controls ({accuracy:.0%} of {n})"
    parts = []
    for r in weak:
        top, times = next(iter(r.answered_instead.items()), ("?", 0))
        parts.append(f"calls {times} of {r.controls} {r.label} controls {top.replace('_', ' ')}")
    if errors:
        parts.append(f"{errors} judge errors on controls")
    lenient = any(r.label != "supported" and next(iter(r.answered_instead), "") in LENIENT_ANSWERS for r in weak)
    strict = any(r.label == "supported" for r in weak)
    status: Status = "lenient" if lenient and not strict else "strict" if strict and not lenient else "unreliable"
    detail = "; ".join(parts) or f"accuracy {accuracy:.0%} on {n} controls"
    return status, f"{status}: {detail}"


def judge_health(
    observations: Iterable[ControlObservation],
    real_labels: dict[str, Counter] | None = None,
    min_accuracy: float | None = None,
    seed: int = 0,
) -> HealthReport:
    """Every judge's health from its verdicts on the controls (and its label counts on real claims)."""
    by_judge: dict[str, list[ControlObservation]] = {}
    for o in observations:
        by_judge.setdefault(o.judge, []).append(o)
    real_labels = real_labels or {}
    judges = []
    for name in sorted(set(by_judge) | set(real_labels)):
        rows = by_judge.get(name, [])
        hits = [int(r.answered == r.label) for r in rows]
        n = len(rows)
        errors = sum(r.answered == "judge_error" for r in rows)
        accuracy = sum(hits) / n if n else None
        by_label = _recalls(rows, "label", CONTROL_LABELS)
        kinds = list(dict.fromkeys(r.kind for r in rows))
        if n < MIN_CONTROLS:
            status, verdict, passed = "too_few", f"too few controls to tell ({n} < {MIN_CONTROLS})", None
        else:
            passing = min_accuracy is None or accuracy >= min_accuracy
            status, verdict = _verdict(by_label, accuracy, errors, n, passing)
            passed = None if not min_accuracy else passing  # 0 reports only: nothing to pass
        judges.append(
            JudgeHealth(
                judge=name,
                controls=n,
                correct=sum(hits),
                errors=errors,
                accuracy=accuracy,
                accuracy_ci95=bootstrap_ci(hits, seed),
                by_label=by_label,
                by_kind=_recalls(rows, "kind", sorted(kinds)),
                real_labels=dict(sorted(real_labels.get(name, Counter()).items())),
                status=status,
                verdict=verdict,
                passed=passed,
            )
        )
    return HealthReport(min_accuracy=min_accuracy, judges=judges)
