"""Verdicts that cost no model call, against gold labels; and the evidence ceiling (docs/scores.md).

Free verdicts: the share triage settled and the share no model was asked about, and per label the precision
gold gives them (a free verdict is only worth having where it is about 1). Evidence ceiling: of the gold-
supported claims with support spans, the share whose whole gold support was offered to the judges (each span
at least half covered): a perfect judge in candidate mode cannot do better on them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from judge.verdicts import CLAIM_LABELS
from judge.search.evaluate import FOUND_SHARE
from judge.verdicts import SUPPORTED

Spans = list[tuple[str | None, int, int]]


def _same_doc(a: str | None, b: str | None) -> bool:
    return a is None or b is None or a == b


def offered_covers(gold: Spans, offered: Spans, share: float = FOUND_SHARE) -> bool:
    """Every gold span has at least ``share`` of its characters inside the offered spans (their union)."""
    if not gold:
        return False
    for doc, start, end in gold:
        covered: set[int] = set()
        for odoc, ostart, oend in offered:
            if _same_doc(doc, odoc) and ostart < end and start < oend:
                covered.update(range(max(start, ostart), min(end, oend)))
        if len(covered) < share * (end - start):
            return False
    return True


@dataclass
class LabelPrecision:
    """How often each label a verdict source gave agrees with gold."""

    given: Counter = field(default_factory=Counter)
    right: Counter = field(default_factory=Counter)

    def add(self, predicted: str, gold: str) -> None:
        self.given[predicted] += 1
        self.right[predicted] += predicted == gold

    def result(self, claims: int) -> dict:
        settled = sum(self.given.values())
        return {
            "settled": settled,
            "coverage": settled / claims if claims else None,
            "precision": sum(self.right.values()) / settled if settled else None,
            "per_label": {
                lbl: {"given": self.given[lbl], "precision": self.right[lbl] / self.given[lbl]}
                for lbl in CLAIM_LABELS
                if self.given[lbl]
            },
        }


def _no_model_call(verdicts: list) -> bool:
    return bool(verdicts) and all(v.how in ("triage", "deterministic") for v in verdicts)


@dataclass
class FreeShare:
    """Over every claim of a run, gold or not: the share settled with no model call (issue 24.5)."""

    claims: int = 0
    triage: int = 0
    no_model_call: int = 0

    def add(self, verdicts: list) -> None:
        self.claims += 1
        self.triage += any(v.how == "triage" for v in verdicts)
        self.no_model_call += _no_model_call(verdicts)

    def result(self) -> dict:
        share = (lambda n: n / self.claims if self.claims else None)  # noqa: E731
        return {"claims": self.claims, "triage": self.triage, "triage_share": share(self.triage),
                "no_model_call": self.no_model_call, "no_model_call_share": share(self.no_model_call)}


@dataclass
class FreeVerdicts:
    """Accumulates, claim by claim, the verdicts that cost no model call: their share of all the run's claims
    (``add_claim``), and their precision on the claims with a gold label (``add``)."""

    claims: int = 0
    triage: LabelPrecision = field(default_factory=LabelPrecision)
    deterministic: LabelPrecision = field(default_factory=LabelPrecision)  # the deterministic judge's own labels
    no_model: LabelPrecision = field(default_factory=LabelPrecision)  # claims no model was asked about: panel label
    run: FreeShare = field(default_factory=FreeShare)

    def add_claim(self, verdicts: list) -> None:
        """Any claim of the run, with or without a gold label."""
        self.run.add(verdicts)

    def add(self, gold: str, panel_label: str, verdicts: list) -> None:
        """``verdicts``: the claim's JudgeVerdicts (``how`` tells triage, deterministic, model, error)."""
        self.claims += 1
        for v in verdicts:
            if v.how == "triage":
                self.triage.add(v.label, gold)
            elif v.how == "deterministic":
                self.deterministic.add(v.label, gold)
        if _no_model_call(verdicts):
            self.no_model.add(panel_label, gold)

    def result(self) -> dict | None:
        """None when there is no claim at all; the gold part only where claims have a gold label."""
        out = {"run": self.run.result()} if self.run.claims else {}
        if self.claims:
            out |= {
                "claims": self.claims,
                "triage": self.triage.result(self.claims),
                "deterministic": self.deterministic.result(self.claims),
                "no_model_call": self.no_model.result(self.claims),
            }
        return out or None


@dataclass
class EvidenceCeiling:
    """Accumulates, over gold-supported claims with gold spans, whether their support was offered."""

    claims: int = 0
    offered: int = 0
    judged_right: int = 0  # the panel said supported
    judged_right_when_offered: int = 0

    def add(self, gold_sets: list[Spans], offered: Spans, panel_label: str) -> None:
        if not any(gold_sets):
            return
        self.claims += 1
        was_offered = any(offered_covers(g, offered) for g in gold_sets if g)
        right = panel_label == SUPPORTED
        self.offered += was_offered
        self.judged_right += right
        self.judged_right_when_offered += right and was_offered

    def result(self) -> dict | None:
        if not self.claims:
            return None
        return {
            "claims": self.claims,
            "ceiling": self.offered / self.claims,
            "judges_accuracy": self.judged_right / self.claims,
            "judges_accuracy_when_offered": self.judged_right_when_offered / self.offered if self.offered else None,
        }
