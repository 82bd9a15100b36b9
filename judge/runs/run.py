"""An opened run directory: ``Run.open(path)`` reads its config and manifest once, and loads its records,
recorded answers, summary and calls at most once, when first asked. Results stream from results.jsonl
each time they are iterated (memory does not grow with the run). Scoring, agreement, compare and the
reports all take a Run. It is also what the Python API (judge.api.evaluate) hands back: ``summary``,
``scores``, ``claims(label=..., model=...)``, ``report_path`` and ``failures``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cached_property
from pathlib import Path

from pydantic import BaseModel

from judge.models import Answer, Record, Span
from judge.problems import DatasetError
from judge.results import ClaimResult, RecordResult
from judge.config import RunConfig
from judge.runs.inputs import answers_index, records_by_id
from judge.runs.reading import validated
from judge.runs.store import RunStore, read_json_object
from judge.verdicts import CLAIM_LABELS


class JudgedClaim(BaseModel):
    """One claim of one answer as the run judged it: where it comes from, and its ClaimResult (verdicts,
    candidates, checks, evidence spans with ``source[start:end] == excerpt``)."""

    record_id: str
    model: str  # the model under test whose answer the claim is from
    result: ClaimResult

    @property
    def text(self) -> str:
        return self.result.text

    @property
    def label(self) -> str:
        return self.result.label

    @property
    def evidence(self) -> list[Span]:
        return self.result.evidence


class Run:
    def __init__(self, store: RunStore):
        self.store = store
        self.path = store.path

    @classmethod
    def open(cls, path: Path | str) -> Run:
        return cls(RunStore.open(Path(path)))

    @cached_property
    def config(self) -> RunConfig:
        return self.store.config()

    @cached_property
    def manifest(self) -> dict:
        """run.json, without records_selected (a count; in a run written before selected.ids, the ids themselves)."""
        manifest = self.store.manifest()
        manifest.pop("records_selected", None)
        return manifest

    @cached_property
    def summary_model(self):
        """summary.json read through its type (judge.runs.summary.Summary), None before the run finished; a
        field that does not fit (an edited file) is one RunDirError line naming it, exit 2."""
        from judge.runs.summary import load_summary

        return load_summary(self.path / "summary.json")

    @cached_property
    def summary(self) -> dict:
        """summary.json as a JSON object ({} before the run finished), every field checked by its type."""
        return self.summary_model.dump() if self.summary_model is not None else {}

    def summary_part(self, key: str, model: type[BaseModel]) -> BaseModel | None:
        """summary.json's ``key`` read as ``model`` (None when absent). A value that does not fit, a file edited
        by hand or written by another version, is the run directory's problem: one line naming the file and
        the field, never a traceback."""
        value = (self.summary or {}).get(key)
        if value is None:
            return None
        return validated(model, value, self.path / "summary.json", (key,))

    @cached_property
    def records(self) -> dict[str, Record]:
        """The dataset's records by id (raises DatasetError when the dataset is gone or broken)."""
        return records_by_id(self.config)  # looked up on disk, never held whole

    @cached_property
    def recorded(self) -> dict[tuple[str, str, str], Answer]:
        """Recorded answers by (record id, model, answer text), for their gold claims."""
        return answers_index(self.config)

    @cached_property
    def gold_inputs(self) -> tuple[dict[str, Record], dict[tuple[str, str, str], Answer]]:
        """Records and recorded answers, or none when the dataset has moved since the run (the gold-based
        figures are then absent, not wrong)."""
        try:
            return self.records, self.recorded
        except (DatasetError, OSError):
            return {}, {}

    @cached_property
    def calls(self) -> list[dict]:
        return self.store.calls()

    def results(self) -> Iterator[RecordResult]:
        return self.store.iter_finished()

    @cached_property
    def scores(self) -> dict:
        """scores.json (written by the reports; {} when the run was never scored)."""
        path = self.path / "scores.json"
        return read_json_object(path) if path.exists() else {}

    @property
    def corrected(self) -> dict | None:
        """The rates corrected by human labels (``judge score RUN --labels FILE``, judge.api.score): per level,
        model and metric, the judge's raw rate, the corrected rate and the labels-only rate with 95% intervals;
        None when the run was scored without labels."""
        return (self.scores or {}).get("corrected")

    @property
    def report_path(self) -> Path:
        return self.path / "report.html"

    @property
    def health(self):
        """The judges' health on their control claims (judge.controls.health.HealthReport), None before the
        run finished: recall per label with exact intervals, the gate's status per judge, the controls' cost."""
        from judge.controls.health import HealthReport

        return self.summary_part("judge_health", HealthReport) if (self.summary or {}).get("judge_health") else None

    @property
    def failures(self) -> list[str]:
        """Why this run must not pass (the CLI's exit 3): empty when it may."""
        from judge.runs.decision import decide

        if self.summary_model is None:
            return [f"{self.path} has no summary.json: the run did not finish (judge run CONFIG --resume {self.path})"]
        return decide(self.summary_model).failures

    def claims(self, label: str | Iterable[str] | None = None, model: str | None = None) -> Iterator[JudgedClaim]:
        """The answers' claims in dataset order, optionally only those with ``label`` (one or several) or from
        answers of ``model``; streamed from results.jsonl."""
        labels = {label} if isinstance(label, str) else set(label) if label is not None else None
        unknown = sorted((labels or set()) - set(CLAIM_LABELS))
        if unknown:
            raise ValueError(f"unknown label(s) {', '.join(unknown)}; expected some of {', '.join(CLAIM_LABELS)}")
        for r in self.results():
            for a in r.answers:
                if model is not None and a.model != model:
                    continue
                for c in a.claims:
                    if labels is None or c.label in labels:
                        yield JudgedClaim(record_id=r.record_id, model=a.model, result=c)
