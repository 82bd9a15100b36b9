"""Issue 17.3: every expected user mistake ends in one plain line naming what is wrong and exit 2, never a
traceback: config files that cannot be read, run directories that cannot be written or are corrupt, bad
JUDGE_* values. The commands run in-process through typer's runner (the real CLI, error boundary included)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli import app
from tests.conftest import ROOT

DETERMINISTIC = ROOT / "configs" / "deterministic.yaml"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
ROOT_SKIP = "running as root: permission bits do not stop root from writing, so a read-only folder cannot be made this way"


def cli(*args: str, env: dict | None = None):
    return CliRunner().invoke(app, [str(a) for a in args], env=env)


def refused(result, *expect: str) -> str:
    """Exit 2 through the boundary (no exception escaped), the message naming what is wrong."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception  # no exception escaped the boundary
    assert "Traceback" not in result.output
    for e in expect:
        assert e in result.output, (e, result.output)
    return result.output


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    result = cli("run", DETERMINISTIC, "--limit", "2", "--runs-dir", runs, "--no-progress")
    assert result.exit_code in (0, 3), result.output
    (run_dir,) = runs.iterdir()
    return run_dir


@pytest.fixture
def run_copy(finished_run, tmp_path) -> Path:
    return Path(shutil.copytree(finished_run, tmp_path / "run"))


def test_config_not_utf8_or_a_directory(tmp_path):
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes("name: caf\xe9\n".encode("latin-1"))
    refused(cli("run", bad), str(bad), "not valid UTF-8")
    folder = tmp_path / "config.yaml"
    folder.mkdir()
    refused(cli("run", folder), str(folder), "is a directory")
    refused(cli("families", "--config", bad), str(bad), "not valid UTF-8")  # a models file too
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [\n")
    out = refused(cli("run", broken), str(broken), "not valid YAML at line 2")
    assert len(out.strip().splitlines()) == 1


def test_runs_dir_that_is_a_file_or_under_a_file(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    refused(cli("run", DETERMINISTIC, "--limit", "1", "--runs-dir", afile, "--no-progress"), str(afile), "is a file")
    refused(cli("run", DETERMINISTIC, "--limit", "1", "--runs-dir", afile / "sub", "--no-progress"), str(afile / "sub"), "cannot write")


def test_runs_dir_with_an_unwritable_parent():
    parent = Path("/sys")  # a read-only file system on Linux, for root too
    if not parent.is_dir() or os.access(parent, os.W_OK) and not IS_ROOT:
        pytest.skip("no read-only /sys on this system")
    refused(cli("run", DETERMINISTIC, "--limit", "1", "--runs-dir", parent / "judge-runs", "--no-progress"), "/sys/judge-runs", "cannot write")


@pytest.mark.skipif(IS_ROOT, reason=ROOT_SKIP)
def test_read_only_runs_dir_and_run_dir(tmp_path, run_copy):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    run_copy.chmod(0o555)
    try:
        refused(cli("run", DETERMINISTIC, "--limit", "1", "--runs-dir", ro, "--no-progress"), str(ro), "cannot write")
        refused(cli("score", run_copy), str(run_copy), "cannot write")
        refused(cli("run", DETERMINISTIC, "--limit", "2", "--resume", run_copy, "--no-progress"), str(run_copy), "cannot write")
    finally:
        ro.chmod(0o755)
        run_copy.chmod(0o755)


def test_run_dir_whose_files_cannot_be_written(run_copy):
    """What a read-only run directory does, made in a way that stops root too: the target names are folders."""
    (run_copy / "scores.json").unlink(missing_ok=True)
    (run_copy / "scores.json").mkdir()
    refused(cli("score", run_copy), str(run_copy / "scores.json"), "cannot write")
    (run_copy / "run.lock").unlink(missing_ok=True)
    (run_copy / "run.lock").mkdir()
    refused(cli("run", DETERMINISTIC, "--limit", "2", "--resume", run_copy, "--no-progress"), str(run_copy / "run.lock"), "cannot write")


@pytest.mark.parametrize("content,expect", [
    ("garbage{", "not JSON"),
    ("[1, 2]", "expected a JSON object, found list"),
    (b"\xff\xfe", "not JSON"),
])
def test_score_and_resume_on_a_corrupt_run_json(run_copy, content, expect):
    manifest = run_copy / "run.json"
    manifest.write_bytes(content if isinstance(content, bytes) else content.encode())
    refused(cli("score", run_copy), str(manifest), expect)
    refused(cli("run", DETERMINISTIC, "--limit", "2", "--resume", run_copy, "--no-progress"), str(manifest), expect)


@pytest.mark.parametrize("content,expect", [
    ("a: [\n", "not valid YAML"),
    ("[1, 2]\n", "expected a mapping, found list"),
    ("name: x\n", "field dataset"),
    (b"\xff\xfe", "not valid UTF-8"),
])
def test_score_on_a_corrupt_config_yaml(run_copy, content, expect):
    config = run_copy / "config.yaml"
    config.write_bytes(content if isinstance(content, bytes) else content.encode())
    out = refused(cli("score", run_copy), str(config), expect, "corrupt")
    assert len(out.strip().splitlines()) == 1


@pytest.mark.parametrize("name,value", [
    ("JUDGE_MAX_RECORD_MB", "abc"), ("JUDGE_MAX_RECORD_MB", "-1"), ("JUDGE_MAX_RECORD_MB", "inf"),
    ("JUDGE_MAX_PROBLEMS", "abc"), ("JUDGE_MAX_PROBLEMS", "0"), ("JUDGE_LOCAL_CONTEXT", "8k"),
])
def test_bad_numeric_environment_values(name, value):
    out = refused(cli("validate", ROOT / "judge" / "data" / "he_sample.json", env={name: value}), name, repr(value))
    assert len(out.strip().splitlines()) == 1


def test_retired_environment_variable_is_named_not_silently_ignored():
    result = cli("validate", ROOT / "judge" / "data" / "he_sample.json", "--json", env={"JUDGE_MAX_DATASET_MB": "abc"})
    assert result.exit_code == 0, result.output
    assert "JUDGE_MAX_DATASET_MB is set but no longer read" in result.output


def test_output_path_that_is_a_directory(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"id": "a1", "question": "q", "golden_answers": ["x"], "metadata": {"gold_doc_ids": ["3"]}}\n')
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "3", "title": "T", "text": "x y z"}\n')
    folder = tmp_path / "out"
    folder.mkdir()
    refused(cli("longcontext", rows, corpus, "--num-docs", "1", "--out", folder), str(folder), "is a directory")
    refused(cli("align", rows, tmp_path / "missing.jsonl", "--out", tmp_path / "o.jsonl"), "missing.jsonl", "cannot read")


HOLD = "import sys, time; from pathlib import Path; from judge.runs.store import RunStore; s = RunStore.open(Path(sys.argv[1]), lock=True); print('held', flush=True); time.sleep(120)"


def test_a_second_resume_is_refused_and_a_killed_holder_leaves_no_stale_lock(run_copy):
    """Issue 17.10: two --resume of one run directory both proceeded (67-72 calls instead of 40)."""
    import signal
    import subprocess
    import sys

    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(run_copy)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        resume = ("run", DETERMINISTIC, "--limit", "2", "--resume", run_copy, "--no-progress")
        out = refused(cli(*resume), str(run_copy), "in use by another judge process")
        assert len(out.strip().splitlines()) <= 2  # the family warning, then the one refusal line
        refused(cli("run", DETERMINISTIC, "--limit", "2", "--resume", run_copy, "--no-progress", "--json"), "in use")
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    result = cli(*resume)  # the kernel dropped the killed holder's lock
    assert result.exit_code in (0, 3), result.output
    again = cli(*resume)  # and this process released its own when the resume finished
    assert again.exit_code in (0, 3), again.output


# -- rich markup in data (issue 17.5) ------------------------------------------------------------------------

MARKUP = "[/x]"  # a closing tag with no opening one: rich raised MarkupError on it


def test_markup_in_model_names_genres_and_ids_is_printed_as_text(tmp_path):
    import json

    records = json.loads((ROOT / "judge" / "data" / "he_sample.json").read_text(encoding="utf-8"))
    records[0]["genre"] = MARKUP
    records[1]["genre"] = "[bold]loud[/bold]"
    data = tmp_path / "data.json"
    data.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    rows = [json.loads(line) for line in (ROOT / "judge" / "data" / "he_sample_answers.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row["model"] = MARKUP if row["model"] == rows[0]["model"] else f"[red]{row['model']}"
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")

    result = cli("validate", data)
    assert result.exit_code == 0, (result.output, result.exception)
    assert MARKUP in result.output and "[bold]loud[/bold]" in result.output  # shown as written, not as style
    result = cli("validate", answers, "--records", data)
    assert result.exit_code == 0, (result.output, result.exception)
    assert MARKUP in result.output

    config = tmp_path / "c.yaml"
    config.write_text(f"name: markup\ndataset: {{path: {data}}}\nanswers: {{path: {answers}}}\ndecompose: {{method: sentences}}\n"
                      f"adjudicate: {{judges: [deterministic]}}\ncache_dir: {tmp_path / 'cache'}\ncontrols: {{gate: false}}\n")
    result = cli("run", config, "--runs-dir", tmp_path / "runs", "--no-progress")
    assert result.exit_code == 0, (result.output, result.exception)
    assert MARKUP in result.output and "[red]" in result.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    result = cli("score", run_dir)
    assert result.exit_code == 0, (result.output, result.exception)


def test_readers_take_the_shared_lock_and_never_read_a_run_being_written(run_copy, tmp_path):
    """Issue 28.2: score, compare, merge and agreement read a run that a --resume was writing (and score
    wrote its reports beside the writer). Now a reader is refused while a writer holds run.lock, writes
    nothing, and a writer is refused while a reader holds it; after the writer ends, each reads as before."""
    import fcntl
    import signal
    import subprocess
    import sys

    before = {p.name: p.read_bytes() for p in run_copy.iterdir() if p.is_file()}
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(run_copy)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        for args in (("score", run_copy), ("compare", run_copy, run_copy), ("agreement", run_copy, "--out", tmp_path / "a.json"),
                     ("merge", run_copy, "--runs-dir", tmp_path / "merged")):
            refused(cli(*args), str(run_copy), "being written by another judge process")
        assert {p.name: p.read_bytes() for p in run_copy.iterdir() if p.is_file()} == before  # nothing written
        assert not (tmp_path / "merged").exists() and not (tmp_path / "a.json").exists()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert cli("score", run_copy).exit_code == 0
    fd = os.open(run_copy / "run.lock", os.O_RDONLY)  # a reader holding the shared lock: a writer is refused
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        refused(cli("run", DETERMINISTIC, "--limit", "2", "--resume", run_copy, "--no-progress"), "in use by another judge process")
        assert cli("score", run_copy).exit_code == 0  # readers share it
    finally:
        os.close(fd)
