"""Absolute thresholds on one run (``judge run --max-hallucination 0.1``, the config's ``thresholds:``, the
pytest plugin's ``assert_grounded``): a gate on the run's own numbers, no baseline needed. Each bound is
checked overall and for every model under test (MODEL+VARIANT with prompt variants), so one bad prompt
variant fails even when the others carry the average. A bound on a metric the run could not compute (no
judged claim) fails: a gate that cannot be checked must not pass. Exit 1, like any gate; checked by
judge.runs.decision, where every exit code is decided."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field



class Thresholds(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    max_hallucination_rate: float | None = Field(None, ge=0, le=1)  # (unsupported + contradicted) / judged claims
    min_faithfulness: float | None = Field(None, ge=0, le=1)  # (supported + 0.5 partially) / judged claims

    @property
    def any(self) -> bool:
        return self.max_hallucination_rate is not None or self.min_faithfulness is not None

