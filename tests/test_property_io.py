"""Issue 36, property-based: the classes of items 7-21 driven through every command that meets them, with
generated cases rather than one instance each:

- any output path of any output flag (a device, a pipe with no reader, a socket, a folder, a name too long,
  a link loop, a dangling link, a missing folder, a new file): no traceback, a refusal in one line, and the
  target left the kind of file it was (a device is never replaced by a regular file, a link never followed);
- any unreadable input path of any reader (a link loop, a name too long, EIO after the open, a folder, a
  missing file, an endless stream): exit 2, one line naming it;
- a hostile number (5,000 digits, NaN, Infinity, 1e999) spliced into any file kind judge reads: no traceback,
  exit 0 to 3, a refusal names the field;
- an id or text carrying line breaks, ESC and bidi overrides: no line of the output starts with the forged
  text, and no raw ESC or bidi override reaches the terminal.

The examples are derandomized (CI sees the same cases); JUDGE_PROPERTY_EXAMPLES=N runs a longer set."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from judge.starter import EXAMPLE
from tests.test_boundary import ANSWERS, CORPUS, ROW, _jsonl, cli
from tests.test_io_doors import _config, finished  # noqa: F401 (finished: a module-scoped fixture, one finished run per module)

EXAMPLES = int(os.environ.get("JUDGE_PROPERTY_EXAMPLES", "0")) or None
SETTINGS = dict(deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
NUMBERS = ["9" * 5000, "-" + "9" * 5000, "NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1e309"]
MARK = "JUDGES VERIFIED"
BREAKS = ["\n", "\r", "\r\n", "\u2028", "\x85", "\x1b[2J\n", "\n\u202e"]


def _no_traceback(args, result) -> None:
    event(f"{args[0]} exit {result.exit_code}")
    assert result.exit_code in (0, 1, 2, 3), (args, result.exit_code, result.output[-1500:], repr(result.exception))
    assert result.exception is None or isinstance(result.exception, SystemExit), (args, repr(result.exception))
    assert "Traceback" not in result.output, (args, result.output[-1500:])


# -- outputs ------------------------------------------------------------------------------------------------

TARGETS = ["dev null", "pipe, no reader", "socket", "folder", "name too long", "link loop", "dangling link", "missing folder", "new file"]


def _target(kind: str, work: Path):
    """(the path, what it must still be afterwards: a check on os.lstat, or None), and a resource to close."""
    if kind == "dev null":
        return Path("/dev/null"), lambda st: stat.S_ISCHR(st.st_mode), None
    if kind == "pipe, no reader":
        os.mkfifo(work / "fifo")
        return work / "fifo", lambda st: stat.S_ISFIFO(st.st_mode), None
    if kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(work / "s.sock"))
        return work / "s.sock", lambda st: stat.S_ISSOCK(st.st_mode), s
    if kind == "folder":
        (work / "folder").mkdir()
        return work / "folder", lambda st: stat.S_ISDIR(st.st_mode), None
    if kind == "name too long":
        return work / ("x" * 300), None, None
    if kind == "link loop":
        os.symlink(work / "l2", work / "l1")
        os.symlink(work / "l1", work / "l2")
        return work / "l1", lambda st: stat.S_ISLNK(st.st_mode), None
    if kind == "dangling link":
        os.symlink(work / "nowhere.md", work / "dangling")
        return work / "dangling", lambda st: stat.S_ISLNK(st.st_mode), None
    if kind == "missing folder":
        return work / "no" / "such" / "out.md", None, None
    return work / "out.md", None, None


@settings(max_examples=EXAMPLES or 40, **SETTINGS)
@given(kind=st.sampled_from(TARGETS), flag=st.integers(0, 5))
def test_property_any_output_path_in_any_output_flag(finished, tmp_path_factory, kind, flag):
    work = tmp_path_factory.mktemp("out")
    rows, corpus = _jsonl(work / "rows.jsonl", [ROW]), _jsonl(work / "corpus.jsonl", CORPUS)
    data = _jsonl(work / "data.jsonl", EXAMPLE)
    target, still, resource = _target(kind, work)
    before = os.stat("/dev/null")
    args = [("compare", finished, finished, "--gate", "none", "--md", target), ("align", rows, corpus, "--out", target),
            ("align", rows, corpus, "--out", work / "kept.jsonl", "--report", target),
            ("longcontext", rows, corpus, "--out", target, "--num-docs", "2"), ("agreement", finished, "--out", target),
            ("validate", data, "--repair", "--write", target)][flag]
    try:
        result = cli(*args)
    finally:
        if resource is not None:
            resource.close()
    _no_traceback(args, result)
    if result.exit_code == 2:
        assert result.output.strip().count("\n") == 0 or args[0] == "validate", result.output
    if still is not None:
        assert still(os.lstat(target)), (kind, args)
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev


# -- inputs -------------------------------------------------------------------------------------------------

SOURCES = ["link loop", "name too long", "EIO", "folder", "missing", "endless stream"]


def _source(kind: str, work: Path) -> Path:
    if kind == "link loop":
        os.symlink(work / "i2", work / "i1")
        os.symlink(work / "i1", work / "i2")
        return work / "i1"
    if kind == "name too long":
        return work / ("y" * 300)
    if kind == "EIO":
        return Path("/proc/self/mem")  # a regular file whose read fails after the open
    if kind == "folder":
        (work / "in").mkdir()
        return work / "in"
    if kind == "endless stream":
        return Path("/dev/zero")
    return work / "missing.jsonl"


@settings(max_examples=EXAMPLES or 50, **SETTINGS)
@given(kind=st.sampled_from(SOURCES), reader=st.integers(0, 16))
def test_property_any_unreadable_input_in_any_reader(finished, tmp_path_factory, kind, reader):
    work = tmp_path_factory.mktemp("in")
    bad = _source(kind, work)
    rows, corpus = _jsonl(work / "rows.jsonl", [ROW]), _jsonl(work / "corpus.jsonl", CORPUS)
    data = _jsonl(work / "data.jsonl", EXAMPLE)
    out = work / "out.jsonl"
    cases = [("validate", bad), ("validate", ANSWERS, "--records", bad), ("agreement-humans", bad), ("search-eval", bad),
             ("align", bad, corpus, "--out", out), ("align", rows, bad, "--out", out), ("longcontext", bad, corpus, "--out", out),
             ("longcontext", rows, bad, "--out", out), ("flashrag-eval", bad, "--corpus", corpus), ("flashrag-eval", rows, "--corpus", bad),
             ("flashrag-eval", rows, "--corpus", corpus, "--predictions", bad), ("run", bad), ("families", "--config", bad),
             ("run", _config(work, bad), "--runs-dir", work / "runs", "--no-progress"), ("score", bad), ("compare", finished, bad),
             ("doctor", "--models", bad)]
    args = cases[reader]
    result = cli(*args, env={"JUDGE_MAX_RECORD_MB": "1"})
    _no_traceback(args, result)
    assert result.exit_code == 2, (kind, args, result.output[-800:])
    lines = [line for line in result.output.splitlines() if line.strip() and not line.startswith(("┌", "│", "└", " "))]
    assert lines and len(lines) <= 2, (kind, args, result.output[-800:])


# -- numbers ------------------------------------------------------------------------------------------------

_NUMBER = re.compile(rb"(?<![\w.\"])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w\"])")


@settings(max_examples=EXAMPLES or 50, **SETTINGS)
@given(st.data())
def test_property_a_hostile_number_in_any_file_kind(finished, tmp_path_factory, data):
    work = tmp_path_factory.mktemp("num")
    run = work / "run"
    shutil.copytree(finished, run)
    rows, corpus = _jsonl(work / "rows.jsonl", [ROW]), _jsonl(work / "corpus.jsonl", CORPUS)
    plain = _jsonl(work / "data.jsonl", [{**r, "meta": {"n": 1, "x": 0.5}} for r in EXAMPLE])
    preds = work / "preds.json"
    preds.write_text(json.dumps({"r1": "a", "n": 1}), encoding="utf-8")
    trec = work / "run.trec"
    trec.write_text("q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\n", encoding="utf-8")
    config = _config(work, plain, record_concurrency=2, search={"k": 5})
    kinds = {
        "dataset": (plain, ("validate", plain)),
        "dataset in a run": (plain, ("run", config, "--runs-dir", work / "runs", "--no-progress")),
        "config": (config, ("run", config, "--runs-dir", work / "runs", "--no-progress")),
        "rows": (rows, ("align", rows, corpus, "--out", work / "o.jsonl")),
        "rows of flashrag-eval": (rows, ("flashrag-eval", rows, "--corpus", corpus)),
        "predictions": (preds, ("flashrag-eval", rows, "--corpus", corpus, "--predictions", preds)),
        "summary.json": (run / "summary.json", ("score", run)),
        "run.json": (run / "run.json", ("compare", run, run)),
        "results.jsonl": (run / "results.jsonl", ("score", run)),
    }
    name = data.draw(st.sampled_from(sorted(kinds)), label="file kind")
    path, args = kinds[name]
    raw = path.read_bytes()
    spots = list(_NUMBER.finditer(raw))
    if not spots:
        return
    spot = data.draw(st.sampled_from(spots), label="number")
    value = data.draw(st.sampled_from(NUMBERS), label="value").encode()
    path.write_bytes(raw[: spot.start()] + value + raw[spot.end():])
    result = cli(*args)
    _no_traceback(args, result)
    if result.exit_code == 2:
        assert str(path.name) in result.output, (name, result.output[-800:])


def test_a_hostile_number_in_a_trec_run_is_always_refused(tmp_path):
    from judge.datasets.beir import load_run
    from judge.problems import DatasetError

    for value in NUMBERS:
        for column in (3, 4):  # rank, score
            cols = ["q1", "Q0", "d1", "1", "2.5", "t"]
            cols[column] = value
            run = tmp_path / "run.trec"
            run.write_text(" ".join(cols) + "\n", encoding="utf-8")
            if column == 3 and value.lstrip("-").isdigit() and not value.startswith("-") and len(value) < 20:
                continue
            with pytest.raises(DatasetError) as info:
                load_run(run)
            assert "\n" not in str(info.value) and "line 1" in str(info.value)


# -- ids and texts that would forge or reorder a line ------------------------------------------------------


@settings(max_examples=EXAMPLES or 25, **SETTINGS)
@given(br=st.sampled_from(BREAKS), where=st.sampled_from(["id", "answer", "question", "source"]), broken=st.booleans())
def test_property_data_never_forges_a_line(tmp_path_factory, br, where, broken):
    work = tmp_path_factory.mktemp("forge")
    record = {"id": "q1", "question": "Who founded the club?", "source": "Alice founded the club in 1990.",
              "answer": "Bob founded the club in 1990."}
    record[where] = record[where] + br + MARK + " \u202e every claim grounded"
    if broken:
        record["answer"] = 5  # a refused record: its id goes into a problem line
    data = _jsonl(work / "data.jsonl", [record])
    for args in (("validate", data), ("run", _config(work, data), "--runs-dir", work / "runs", "--no-progress")):
        result = cli(*args)
        _no_traceback(args, result)
        for line in result.output.splitlines():
            assert not line.lstrip("│ ").startswith(MARK), (args, result.output[-1500:])
        assert "\u202e" not in result.output and "\x1b" not in result.output, (args, result.output[-1500:])
    for report in (work / "runs").glob("*/report.md"):
        text = report.read_text(encoding="utf-8")
        assert "\u202e" not in text and not any(line.startswith(MARK) for line in text.splitlines())
