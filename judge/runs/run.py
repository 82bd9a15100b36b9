"""An opened run directory: ``Run.open(path)`` reads its config and manifest once, and loads its records,
recorded answers, summary and calls at most once, when first asked. Results stream from results.jsonl
each time they are iterated (memory does not grow with the run). Scoring, agreement, compare and the
reports all take a Run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path

from judge.models import Answer, Record
from judge.problems import DatasetError
from judge.results import RecordResult
from judge.runs.config import RunConfig
from judge.runs.inputs import answers_index, records_by_id
from judge.runs.store import RunStore


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
        return self.store.manifest()

    @cached_property
    def summary(self) -> dict:
        path = self.path / "summary.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}

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
