"""The Python API: evaluate a config and read the verdicts as typed objects, without the CLI or pytest.

    import judge
    run = judge.evaluate("configs/deterministic.yaml")                 # or a dict, or a RunConfig
    for c in run.claims(label=["unsupported", "contradicted"]):
        print(c.record_id, c.model, c.label, c.text, [e.excerpt for e in c.evidence])
    print(run.summary["overall"]["faithfulness"], run.report_path, run.failures)

``records`` (plain-format dicts: id, question, source or sources, answer or answers) replace the config's
dataset; ``answers`` ({record id: text} or {record id: {model: text}}) attach answers to them. They are
written once, under the runs directory, so the run can be re-scored and resumed like any other.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judge.boundary import MAX_FLAG, SURROGATE, check_text, check_value
from judge.datasets.plain import PlainRecord
from judge.problems import DatasetError, Problem, problems_from_validation, shown
from judge.config import ConfigError, RunConfig, run_config_from_dict
from judge.runs.run import Run
from judge.runs.store import RunDirError

INPUTS_DIR = ".inputs"  # under the runs directory: records given in memory, content-addressed


def _plain_records(records: Iterable[Mapping[str, Any]], answers: Mapping[str, Any] | None) -> list[dict]:
    if isinstance(records, (str, bytes, Mapping)) or hasattr(records, "model_dump"):
        raise ConfigError(f"records: expected a list of records (mappings in the plain format), found one {type(records).__name__}")
    out = []
    for i, r in enumerate(records):
        if hasattr(r, "model_dump"):
            r = r.model_dump(exclude_none=True)
        if not isinstance(r, Mapping):
            raise ConfigError(f"records[{i}]: expected a mapping in the plain format (id, question, source, answer), found {type(r).__name__}")
        out.append(dict(r))
    for i, record in enumerate(out):  # the input boundary, before anything is used or written: one line each
        check_value(record, "records", _label(record, i))
    if answers is not None:
        if not isinstance(answers, Mapping):
            raise ConfigError(f"answers: expected a mapping of record id to answer, found {type(answers).__name__}")
        check_value(dict(answers), "answers")
        by_id = {r["id"]: r for r in out if isinstance(r.get("id"), str)}
        for rid, given in answers.items():
            if rid not in by_id:
                raise ConfigError(f"answers: record {rid[:80]!r} is not among the records")
            record = by_id[rid]
            if "answer" in record or "answers" in record:
                raise ConfigError(f"answers: record {rid[:80]!r} already has an answer; give it in one place")
            record["answers" if isinstance(given, Mapping) else "answer"] = dict(given) if isinstance(given, Mapping) else given
    problems: list[Problem] = []
    for i, record in enumerate(out):
        try:
            json.dumps(record, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise DatasetError([Problem(file="records", record_id=_label(record, i), message=f"not a JSON value: {e}")]) from None
        try:  # the plain format's own model, before anything is written: every problem named as the caller gave it
            PlainRecord.model_validate(record)
        except ValidationError as e:
            problems.extend(problems_from_validation(e, "records", _label(record, i)))
    if problems:
        raise DatasetError(problems)
    return out


def _label(record: Mapping, i: int) -> str:
    rid = record.get("id")
    return rid if isinstance(rid, str) and 0 < len(rid) <= 200 and not SURROGATE.search(rid) else f"records[{i}]"


def _as_given(problem: Problem, data_path: Path) -> Problem:
    """A problem of the records file written for the run, named as the caller gave the records: ``records``,
    and ``records[i]`` for a record the file could only call by its line."""
    if Path(problem.file).resolve() != data_path.resolve():
        return problem
    rid = problem.record_id
    if rid is not None and (line := re.fullmatch(r"line (\d+)", rid)):
        rid = f"records[{int(line.group(1)) - 1}]"
    return problem.model_copy(update={"file": "records", "record_id": rid})


def _write_inputs(records: list[dict], runs_dir: Path) -> Path:
    """The records as a plain JSONL file named by its content: the same records are written once. Never taken
    back: another evaluation of the same records may be reading it."""
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    path = runs_dir / INPUTS_DIR / f"{hashlib.sha256(text.encode()).hexdigest()[:16]}.jsonl"
    if path.exists():
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")  # one per writer: concurrent evaluations race safely
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        raise RunDirError(f"{runs_dir}: cannot write the records there ({e.strerror or type(e).__name__})") from None
    return path


def _config(config: str | Path | Mapping | RunConfig, data_path: Path | None) -> RunConfig:
    from judge.config import DatasetRef, load_run_config

    if isinstance(config, RunConfig):
        cfg = config
    elif isinstance(config, Mapping):
        data = dict(config)
        if data_path is not None:  # the records given replace the config's dataset and its answers file
            data["dataset"] = {"path": str(data_path), "format": "plain"}
            data.pop("answers", None)
        return run_config_from_dict(data, Path.cwd())
    else:
        cfg = load_run_config(config)
    if data_path is not None:
        cfg = cfg.model_copy(update={"dataset": DatasetRef(path=str(data_path), format="plain"), "answers": None})
    return cfg


def evaluate(
    config: str | Path | Mapping | RunConfig,
    *,
    records: Iterable[Mapping[str, Any]] | None = None,
    answers: Mapping[str, Any] | None = None,
    runs_dir: str | Path = "runs",
    name: str | None = None,
    limit: int | None = None,
    use_cache: bool = True,
    reports: bool = True,
) -> Run:
    """Run a config (``judge run``) and return the run, scored and with its reports unless ``reports`` is
    False. A model that cannot be called, or bad input, raises before the first record; a run that finished
    but cannot pass (judge errors, a failed stage) is returned with ``failures`` saying why."""
    from judge.runs.runner import execute

    for where, value in (("config", config), ("runs_dir", runs_dir), ("name", name)):
        check_text(where, value)  # a NUL byte or a lone surrogate: one line, never a raw ValueError from the OS
    if answers is not None and records is None:
        raise ConfigError("answers need records: give both (plain-format records, and answers by record id)")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_FLAG):
        raise ConfigError(f"limit: expected a whole number of records from 1 to {MAX_FLAG:,}, found {shown(limit)}")
    runs_root = Path(runs_dir)
    data_path = _write_inputs(_plain_records(records, answers), runs_root) if records is not None else None
    cfg = _config(config, data_path)
    if limit is not None:
        cfg = cfg.model_copy(update={"limit": limit})
    try:
        store, _ = execute(cfg, runs_root=runs_root, name=name or cfg.name, use_cache=use_cache)
    except DatasetError as e:
        if data_path is None:
            raise
        raise DatasetError([_as_given(p, data_path) for p in e.problems]) from None
    if reports:
        from judge.report import write_reports

        write_reports(store.path)
    return Run.open(store.path)


def score(run: Run | str | Path, labels: Iterable[str | Path] | None = None) -> Run:
    """Score a finished run again (``judge score``) and return it; ``labels``: filled labelling sheets (judge
    label), whose human labels correct its rates (``Run.corrected``). Bad labels raise DatasetError, one
    problem per line."""
    from judge.report import write_reports

    path = run.path if isinstance(run, Run) else Path(run)
    write_reports(path, [Path(p) for p in labels] if labels is not None else None)
    return Run.open(path)


async def aevaluate(config: str | Path | Mapping | RunConfig, **kwargs) -> Run:
    """:func:`evaluate` off the event loop (the run drives its own loop in a worker thread)."""
    return await asyncio.to_thread(evaluate, config, **kwargs)
