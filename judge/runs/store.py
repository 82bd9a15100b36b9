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
from collections.abc import Iterator
from pathlib import Path

import yaml

from judge.llm.redact import redact_secrets  # defence in depth: no configured key is written, whatever its path
from judge.results import RESULTS_SCHEMA_VERSION, RecordResult
from judge.runs.config import RUN_NAME, RunConfig

RUN_FORMAT = "judge-run"
_NAME = re.compile(RUN_NAME)


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
        return self.write_parts(name, [text])

    def write_parts(self, name: str, parts) -> Path:
        """A file written piece by piece, then moved into place (a plain name, never a path)."""
        if "/" in name or "\\" in name or name.startswith("."):
            raise RunDirError(f"{name!r} is not a plain file name")
        path = self.path / name
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            for part in parts:
                f.write(redact_secrets(part))
        os.replace(tmp, path)
        return path

    # -- results ----------------------------------------------------------------------------------------
    def _cut_torn_tail(self) -> None:
        """A kill in mid-write leaves a last line without its newline: cut it off (that record is redone)."""
        if not self.results_path.exists():
            return
        with open(self.results_path, "r+b") as f:
            size = f.seek(0, os.SEEK_END)
            if size == 0:
                return
            f.seek(size - 1)
            if f.read(1) == b"\n":
                return
            back = min(size, 1 << 16)
            while True:  # find the last newline, reading backwards in blocks
                f.seek(size - back)
                block = f.read(back)
                at = block.rfind(b"\n")
                if at >= 0 or back == size:
                    f.truncate(size - back + at + 1 if at >= 0 else 0)
                    return
                back = min(size, back * 2)

    def iter_finished(self) -> Iterator[RecordResult]:
        """Every complete result, read one line at a time (memory does not grow with the run)."""
        self._cut_torn_tail()
        if not self.results_path.exists():
            return
        with open(self.results_path, "rb") as f:
            for i, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    yield RecordResult.model_validate_json(line)
                except ValueError:
                    raise RunDirError(f"{self.results_path}: line {i} is not a result of this version of judge") from None

    def finished(self) -> list[RecordResult]:
        return list(self.iter_finished())

    def finished_ids(self) -> set[str]:
        return {r.record_id for r in self.iter_finished()}

    def append(self, result: RecordResult) -> None:
        line = redact_secrets(result.model_dump_json()) + "\n"
        with open(self.results_path, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def rewrite_in_order(self, order: list[str]) -> int:
        """Result lines sorted by the dataset's record order, one per record id, written atomically (the lines
        are moved as bytes, not parsed into objects). Returns how many records there are."""
        self._cut_torn_tail()
        if not self.results_path.exists():
            return 0
        rank = {rid: i for i, rid in enumerate(order)}
        lines: dict[str, bytes] = {}
        with open(self.results_path, "rb") as f:
            for line in f:
                if line.strip():
                    lines[json.loads(line)["record_id"]] = line
        ranked = sorted(lines, key=lambda rid: (rank.get(rid, len(order)), rid))
        tmp = self.results_path.with_name(self.results_path.name + ".tmp")
        with open(tmp, "wb") as f:
            for rid in ranked:
                f.write(lines[rid])
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.results_path)
        return len(ranked)

    def append_call(self, record) -> None:
        """One model call (a judge.llm.CallRecord) to calls.jsonl: latency and cost per model, kept out of
        results.jsonl so that results stay free of wall-clock values."""
        with open(self.path / "calls.jsonl", "a", encoding="utf-8") as f:
            f.write(redact_secrets(record.model_dump_json()) + "\n")

    def calls(self) -> list[dict]:
        path = self.path / "calls.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    def write_summary(self, summary: dict) -> None:
        self._write_atomic(self.path / "summary.json", json.dumps(summary, ensure_ascii=False, indent=1) + "\n")

    def log(self, message: str) -> None:
        with open(self.log_path, "a", encoding="utf-8") as f:
            f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {redact_secrets(message)}\n")

    @staticmethod
    def _write_atomic(path: Path, text: str) -> None:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(redact_secrets(text), encoding="utf-8")
        os.replace(tmp, path)
