"""Absolute thresholds on one run (``judge run --max-hallucination 0.1``, the config's ``thresholds:``, the
pytest plugin's ``assert_grounded``): a gate on the run's own numbers, no baseline needed. Each bound is
checked overall and for every model under test (MODEL+VARIANT with prompt variants), so one bad prompt
variant fails even when the others carry the average. A bound on a metric the run could not compute (no
judged claim) fails: a gate that cannot be checked must not pass. Exit 1, like any gate."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from judge.verdicts import HALLUCINATED, is_judged


class Thresholds(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    max_hallucination_rate: float | None = Field(None, ge=0, le=1)  # (unsupported + contradicted) / judged claims
    min_faithfulness: float | None = Field(None, ge=0, le=1)  # (supported + 0.5 partially) / judged claims

    @property
    def any(self) -> bool:
        return self.max_hallucination_rate is not None or self.min_faithfulness is not None


def threshold_failures(summary: dict, thresholds: Thresholds) -> list[str]:
    """One line per bound broken, overall or by a model under test; empty when every bound holds."""
    rows = [("overall", summary.get("overall") or {})]
    if len(summary.get("by_model") or {}) > 1:
        rows += list(summary["by_model"].items())
    failures = []
    for name, bound, metric, worse in (
        ("max hallucination rate", thresholds.max_hallucination_rate, "hallucination_rate", lambda v, b: v > b),
        ("min faithfulness", thresholds.min_faithfulness, "faithfulness", lambda v, b: v < b),
    ):
        if bound is None:
            continue
        for who, r in rows:
            value = r.get(metric)
            labels = r.get("labels") or {}
            judged = sum(n for lbl, n in labels.items() if is_judged(lbl))
            counts = f"{sum(labels.get(lbl, 0) for lbl in HALLUCINATED)} hallucinated of {judged} judged claims"
            if value is None:
                failures.append(f"{name} {bound}: {who} has no judged claim, so it cannot be checked")
            elif worse(value, bound):
                failures.append(f"{name} {bound}: {who} is {value:.4f} ({counts})")
    return failures
