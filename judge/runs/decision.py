"""A run's exit code, decided once (DESIGN.md "Exit codes"): from its summary (judge.runs.summary.Summary), its
absolute thresholds (judge.thresholds), the regression gates' result and the judges' trust (their health on the
controls and their calibration, both in the summary). Every command that finishes a run (``judge run``,
``rejudge``, ``merge``) and ``judge.evaluate``'s ``Run.failures`` ask :func:`decide`; nothing else works out
whether a run passes.

- 3 (``failures``): the run finished but cannot pass: records left unfinished, a judge that failed its control
  claims or could not be verified (controls.floor, ``require: calibrated``), the outcome's reasons (too many
  claims in judge_error, a stage failed for every record, nothing judged; each with its first error), or its
  scoring failed. Exit 3 comes before exit 1: a gate read on a run that cannot pass says nothing.
- 1 (``broken``, ``gates_failed``): a threshold broken overall or by a model under test (a bound that cannot be
  checked, no judged claim, fails), or a regression gate against a baseline failed.
- 0: finished, and every gate passed.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel

from judge.errors import EXIT_FAILED, EXIT_GATE, EXIT_OK, GateFailed, JudgesFailed
from judge.runs.summary import Rates, Summary
from judge.thresholds import Thresholds
from judge.verdicts import HALLUCINATED, is_judged


class Decision(BaseModel):
    """Why a run exits as it does: ``code`` from the lines (empty: it passes)."""

    failures: list[str] = []  # exit 3
    broken: list[str] = []  # thresholds broken: exit 1
    gates_failed: bool = False  # a regression gate failed: exit 1

    @property
    def code(self) -> int:
        return EXIT_FAILED if self.failures else EXIT_GATE if self.broken or self.gates_failed else EXIT_OK

    def enforce(self) -> None:
        """End the command with the code: JudgesFailed (exit 3, every failure's line), GateFailed (exit 1, the
        command has printed why), or nothing."""
        if self.code == EXIT_FAILED:
            raise JudgesFailed("\n".join(self.failures))
        if self.code == EXIT_GATE:
            raise GateFailed()


def run_failures(summary: Summary | None) -> list[str]:
    """Every reason a finished run must not pass (exit 3), from its summary: records left unfinished, judges
    that failed their control claims or could not be verified on them (controls.floor), then the outcome's
    reasons with each failing model's first error."""
    if summary is None:
        return []
    lines = []
    run = summary.run
    if run is not None and not run.complete:  # stopped early (max_cost_usd, lost Ray tasks): not a finished run
        why = f" ({run.stopped_early})" if run.stopped_early else ""
        lines.append(f"run failed: incomplete, {run.records_finished} of {run.records_selected} records "
                     f"finished{why}; finish it with --resume")
    if summary.judge_health is not None:
        lines += summary.judge_health.failure_lines()
    if summary.outcome is not None:
        lines += summary.outcome.failure_lines()
    return lines


def _rates(value) -> Rates | None:
    return value if isinstance(value, Rates) or value is None else Rates.model_validate(value)


def threshold_failures(rates: Summary | Mapping, thresholds: Thresholds) -> list[str]:
    """One line per bound broken, overall or by a model under test (with several); empty when every bound holds.
    ``rates``: the run's summary, or a mapping with its ``overall`` and ``by_model`` (rates re-asked and settled)."""
    if isinstance(rates, Summary):
        overall, by_model = rates.overall, rates.by_model
    else:
        overall, by_model = _rates(rates.get("overall") or None), {k: _rates(v) for k, v in (rates.get("by_model") or {}).items()}
    rows = [("overall", overall)] + (list(by_model.items()) if len(by_model) > 1 else [])
    failures = []
    for name, bound, metric, worse in (
        ("max hallucination rate", thresholds.max_hallucination_rate, "hallucination_rate", lambda v, b: v > b),
        ("min faithfulness", thresholds.min_faithfulness, "faithfulness", lambda v, b: v < b),
    ):
        if bound is None:
            continue
        for who, r in rows:
            value = getattr(r, metric) if r is not None else None
            labels = r.labels if r is not None else {}
            judged = sum(n for lbl, n in labels.items() if is_judged(lbl))
            counts = f"{sum(labels.get(lbl, 0) for lbl in HALLUCINATED)} hallucinated of {judged} judged claims"
            if value is None:
                failures.append(f"{name} {bound}: {who} has no judged claim, so it cannot be checked")
            elif worse(value, bound):
                failures.append(f"{name} {bound}: {who} is {value:.4f} ({counts})")
    return failures


def decide(summary: Summary | None, *, thresholds: Thresholds | None = None, settled: Mapping | None = None, gates_failed: bool = False,
           scoring_failed: str | None = None) -> Decision:
    """The run's exit code and its reasons. ``thresholds`` are checked on the summary's rates, or on ``settled``
    (``overall`` and ``by_model`` with the flagged claims re-asked: judge.scoring.confirm.settled_summary) where
    given; ``gates_failed``: a regression gate against a baseline failed; ``scoring_failed``: the line of a
    scoring that failed (no scores.json, no reports)."""
    broken = []
    if thresholds is not None and thresholds.any and summary is not None:
        broken = threshold_failures({"overall": summary.overall, "by_model": summary.by_model, **(settled or {})}, thresholds)
    return Decision(failures=run_failures(summary) + ([scoring_failed] if scoring_failed else []), broken=broken, gates_failed=gates_failed)
