"""Whether a finished run judged anything worth reading: the reasons it exits 3 (DESIGN.md, exit codes).

A failing model call marks its claim and the run goes on; but a run whose every judge call failed, whose
decomposer never worked, or that judged nothing at all must not look like a passed one. The tally is made
in the same pass over results.jsonl as the summary, and keeps the first error of each (stage, model) so the
terminal can name the cause ("AuthenticationError: ...") instead of a bare error count.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from judge.results import RecordResult
from judge.verdicts import JUDGE_ERROR, TRIAGE

Stage = Literal["generate", "decompose", "judge"]
UNIT = {"generate": "answer", "decompose": "answer", "judge": "claim"}  # what a stage's attempts are counted in
FIRST_ERROR_CHARS = 300


class StageErrors(BaseModel):
    """One stage of one model: how often it failed, out of how many tries, and the first error's text."""

    stage: Stage
    model: str
    failed: int = 0
    tried: int = 0
    first: str | None = None

    @property
    def always(self) -> bool:
        return self.tried > 0 and self.failed == self.tried

    def line(self) -> str:
        unit = UNIT[self.stage]
        return f"{self.stage} with {self.model}: {self.failed} of {self.tried} {unit}s failed; first error: {self.first}"


class Outcome(BaseModel):
    """The run's error accounting and, in ``reasons``, why it cannot pass (empty: it can)."""

    records: int = 0
    claims: int = 0
    judged: int = 0  # claims whose panel label is not judge_error
    error_rate: float | None = None  # judge_error claims / claims
    max_error_rate: float = 0.0
    errors: list[StageErrors] = []  # only stages that failed at least once
    reasons: list[str] = []

    def failure_lines(self) -> list[str]:
        """The reasons, then the first error of every failing stage and model (the cause)."""
        if not self.reasons:
            return []
        return [f"run failed: {r}" for r in self.reasons] + [f"  {e.line()}" for e in self.errors]


class OutcomeTally:
    """Fed every RecordResult once (summarize's loop); :meth:`outcome` gives the verdict on the run."""

    def __init__(self, max_error_rate: float = 0.0):
        self.max_error_rate = max_error_rate
        self.records = self.claims = self.judge_errors = 0
        self.stages: dict[tuple[str, str], StageErrors] = {}

    def _count(self, stage: Stage, model: str, error: str | None) -> None:
        s = self.stages.setdefault((stage, model), StageErrors(stage=stage, model=model))
        s.tried += 1
        if error:
            s.failed += 1
            if s.first is None:
                s.first = error[:FIRST_ERROR_CHARS]

    def add(self, result: RecordResult) -> None:
        self.records += 1
        for a in result.answers:
            if a.decomposition.model is not None and a.answer.strip():  # an LLM decomposer was asked (and may have fallen back)
                self._count("decompose", a.decomposition.model, a.decomposition.fallback_reason)
            self._count("generate", a.model, a.generation_error)
            for c in a.claims:
                self.claims += 1
                self.judge_errors += c.label == JUDGE_ERROR
                for v in c.verdicts:
                    if v.how != TRIAGE:
                        self._count("judge", v.judge, v.error if v.label == JUDGE_ERROR else None)

    def outcome(self) -> Outcome:
        errors = [s for s in self.stages.values() if s.failed]
        rate = self.judge_errors / self.claims if self.claims else None
        reasons = []
        if not self.records:
            reasons.append("no record finished")
        elif not self.claims:
            reasons.append("nothing was judged: no answer gave a claim")
        elif self.judge_errors == self.claims:
            reasons.append(f"every claim ({self.claims}) ended in judge_error")
        elif rate is not None and rate > self.max_error_rate:
            reasons.append(
                f"{self.judge_errors} of {self.claims} claims ({rate:.1%}) ended in judge_error; max_error_rate is "
                f"{self.max_error_rate:g}"
            )
        if self.max_error_rate < 1:  # 1 tolerates any failure, so long as some claim was judged
            reasons += [f"{s.stage} failed for every {UNIT[s.stage]} with {s.model}" for s in errors if s.always]
        return Outcome(
            records=self.records, claims=self.claims, judged=self.claims - self.judge_errors, error_rate=rate,
            max_error_rate=self.max_error_rate, errors=sorted(errors, key=lambda s: (s.stage, s.model)), reasons=reasons,
        )

