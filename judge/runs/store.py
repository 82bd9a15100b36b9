"""The run directory: ``runs/<timestamp>-<name>/`` with the resolved config, results.jsonl, summary.json and
run.log. Every file write of a run goes through here.

results.jsonl gets one line per finished record, appended and flushed (and fsynced) as it finishes, so a
kill loses nothing already finished; a torn last line (a kill mid-write) is cut off on resume. When a run
completes, the lines are rewritten in dataset order (atomically), so the same config and cache give
byte-identical results.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import yaml

from judge.results import RESULTS_SCHEMA_VERSION, RecordResult
from judge.runs.config import RunConfig

RUN_FORMAT = "judge-run"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class RunDirError(ValueError):
    """A run directory that cannot be used (missing, from another version, or a bad name)."""


def safe_name(name: str) -> str:
    if not _NAME.match(name) or ".." in name:
        raise RunDirError(f"run name {name!r} is not allowed: use letters, digits, '.', '_' and '-' (no paths)")
    return name


class RunStore:
    def __init__(self, path: Path):
        self.path = path
        self.results_path = path / "results.jsonl"
        self.log_path = path / "run.log"

    # -- creating and opening ---------------------------------------------------------------------------
    @classmethod
    def create(cls, runs_root: Path, name: str, config: RunConfig, meta: dict) -> RunStore:
        safe_name(name)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        path = runs_root / f"{stamp}-{name}"
        n = 1
        while path.exists():
            n += 1
            path = runs_root / f"{stamp}-{name}-{n}"
        path.mkdir(parents=True)
        store = cls(path)
        store.write_config(config, meta)
        return store

    @classmethod
    def open(cls, path: Path) -> RunStore:
        store = cls(path)
        manifest = path / "run.json"
        if not manifest.exists():
            raise RunDirError(f"{path} is not a run directory of this tool (no run.json)")
        info = json.loads(manifest.read_text(encoding="utf-8"))
        if info.get("format") != RUN_FORMAT or info.get("schema_version") != RESULTS_SCHEMA_VERSION:
            raise RunDirError(
                f"{path} was written by another version of judge (format {info.get('format')!r}, schema "
                f"{info.get('schema_version')!r}; this version reads schema {RESULTS_SCHEMA_VERSION}): refusing to misread it"
            )
        return store

    def write_config(self, config: RunConfig, meta: dict) -> None:
        """The resolved config (model configs hold env-var names, never keys) and a manifest."""
        data = config.model_dump(mode="json", exclude_none=True)
        self._write_atomic(self.path / "config.yaml", yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
        manifest = {"format": RUN_FORMAT, "schema_version": RESULTS_SCHEMA_VERSION, **meta}
        self._write_atomic(self.path / "run.json", json.dumps(manifest, ensure_ascii=False, indent=1) + "\n")

    def config(self) -> RunConfig:
        data = yaml.safe_load((self.path / "config.yaml").read_text(encoding="utf-8"))
        return RunConfig.model_validate(data)

    def manifest(self) -> dict:
        return json.loads((self.path / "run.json").read_text(encoding="utf-8"))

    def update_manifest(self, **fields) -> None:
        manifest = {**self.manifest(), **fields}
        self._write_atomic(self.path / "run.json", json.dumps(manifest, ensure_ascii=False, indent=1) + "\n")

    def write_text(self, name: str, text: str) -> Path:
        """A report or score file inside the run directory (a plain name, never a path)."""
        if "/" in name or "\\" in name or name.startswith("."):
            raise RunDirError(f"{name!r} is not a plain file name")
        path = self.path / name
        self._write_atomic(path, text)
        return path

    # -- results ----------------------------------------------------------------------------------------
    def finished(self) -> list[RecordResult]:
        """Every complete result line; a torn last line (a kill mid-write) is cut off the file."""
        if not self.results_path.exists():
            return []
        raw = self.results_path.read_bytes()
        complete, newline, torn = raw.rpartition(b"\n")
        if torn:
            with open(self.results_path, "r+b") as f:
                f.truncate(len(complete) + len(newline))
        results = []
        for i, line in enumerate(complete.split(b"\n") if newline else [], start=1):
            if not line.strip():
                continue
            try:
                results.append(RecordResult.model_validate_json(line))
            except ValueError:
                raise RunDirError(f"{self.results_path}: line {i} is not a result of this version of judge") from None
        return results

    def append(self, result: RecordResult) -> None:
        line = result.model_dump_json() + "\n"
        with open(self.results_path, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def rewrite_in_order(self, order: list[str]) -> list[RecordResult]:
        """Results sorted by the dataset's record order, one per record id, written atomically."""
        by_id = {r.record_id: r for r in self.finished()}
        ranked = sorted(by_id.values(), key=lambda r: (order.index(r.record_id) if r.record_id in order else len(order), r.record_id))
        self._write_atomic(self.results_path, "".join(r.model_dump_json() + "\n" for r in ranked))
        return ranked

    def append_call(self, record) -> None:
        """One model call (a judge.llm.CallRecord) to calls.jsonl: latency and cost per model, kept out of
        results.jsonl so that results stay free of wall-clock values."""
        with open(self.path / "calls.jsonl", "a", encoding="utf-8") as f:
            f.write(record.model_dump_json() + "\n")

    def calls(self) -> list[dict]:
        path = self.path / "calls.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    def write_summary(self, summary: dict) -> None:
        self._write_atomic(self.path / "summary.json", json.dumps(summary, ensure_ascii=False, indent=1) + "\n")

    def log(self, message: str) -> None:
        with open(self.log_path, "a", encoding="utf-8") as f:
            f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {message}\n")

    @staticmethod
    def _write_atomic(path: Path, text: str) -> None:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
