"""Issue 28.2: the file system is safe by construction (judge/files.py). No write into a run directory follows
a link or lands in a file with a second name; readers (score, compare, agreement, merge) never rewrite a run's
files; an output path is never an input or a file of a run directory; init writes only new files; merge
counts each run, and so each call, once. Each class is tried at every file name and every command that
writes, not one instance."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli import app
from judge.files import RUN_FILES
from tests.conftest import ROOT

DETERMINISTIC = ROOT / "configs" / "deterministic.yaml"
OUTSIDE = b"precious data outside the run\n{\"torn"  # no final newline: a reader that cut torn tails would cut it


def cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def refused(result, *expect: str) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    out = result.output.strip()
    assert "Traceback" not in out
    for e in expect:
        assert e in out, (e, out)
    return out


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


def _plant_link(run_dir: Path, name: str, tmp_path: Path) -> Path:
    """``name`` in the run replaced by a link to a file outside it, holding the run's own bytes (so a reader
    through the link still reads a valid run) and, for files that are appended to, a torn tail."""
    outside = tmp_path / f"outside-{name}"
    original = run_dir / name
    data = original.read_bytes() if original.exists() else b""
    outside.write_bytes(data + (OUTSIDE if name in ("run.log",) else b""))
    original.unlink(missing_ok=True)
    original.symlink_to(outside)
    return outside


@pytest.mark.parametrize("name", [n for n in RUN_FILES if n not in ("run.json",)])
def test_resume_never_writes_through_a_link_at_any_run_file_name(run_copy, tmp_path, name):
    outside = _plant_link(run_copy, name, tmp_path)
    before = outside.read_bytes()
    refused(cli("run", DETERMINISTIC, "--limit", "2", "--resume", run_copy, "--no-progress"), str(run_copy / name), "symbolic link")
    assert outside.read_bytes() == before


def test_resume_never_writes_into_a_file_with_a_second_name(run_copy, tmp_path):
    outside = tmp_path / "outside.log"
    os.link(run_copy / "run.log", outside)
    before = outside.read_bytes()
    refused(cli("run", DETERMINISTIC, "--limit", "2", "--resume", run_copy, "--no-progress"), "run.log", "hard link")
    assert outside.read_bytes() == before


@pytest.mark.parametrize("name", ["results.jsonl", "calls.jsonl", "summary.json", "scores.json", "report.md", "report.html"])
def test_score_and_compare_never_change_what_a_link_in_the_run_points_at(run_copy, finished_run, tmp_path, name):
    """score reads through a link (the run stays readable) but writes only by replacing the name: the file the
    link pointed at keeps every byte, a torn tail included."""
    outside = _plant_link(run_copy, name, tmp_path)
    with open(outside, "ab") as f:
        f.write(b"{\"torn" if name.endswith(".jsonl") else b"")
    before = outside.read_bytes()
    for args in (("score", run_copy), ("compare", finished_run, run_copy), ("agreement", run_copy, "--out", tmp_path / f"a-{name}.json")):
        result = cli(*args)
        assert result.exit_code in (0, 1, 2, 3) and isinstance(result.exception, (SystemExit, type(None))), (args, result.output, result.exception)
        assert outside.read_bytes() == before, args


def test_readers_never_cut_a_torn_tail_the_next_writer_does(run_copy):
    results = run_copy / "results.jsonl"
    whole = results.read_bytes()
    results.write_bytes(whole + b'{"record_id": "half')
    assert cli("score", run_copy).exit_code in (0, 3)
    assert cli("compare", run_copy, run_copy).exit_code in (0, 2)
    assert results.read_bytes() == whole + b'{"record_id": "half'  # readers skip it and leave it
    assert cli("run", DETERMINISTIC, "--limit", "2", "--resume", run_copy, "--no-progress").exit_code in (0, 3)
    assert results.read_bytes().endswith(b"\n") and b'"half' not in results.read_bytes()  # the writer, under the lock, cut it


@pytest.mark.parametrize("target", ["results.jsonl", "calls.jsonl", "summary.json", "report.md", "new.md"])
def test_compare_md_is_never_a_file_of_a_run_or_an_input(run_copy, finished_run, target):
    before = {p.name: p.read_bytes() for p in run_copy.iterdir() if p.is_file()}
    refused(cli("compare", run_copy, finished_run, "--md", run_copy / target), "--md", "write the output elsewhere")
    assert {p.name: p.read_bytes() for p in run_copy.iterdir() if p.is_file()} == before


def test_compare_md_and_agreement_out_never_write_through_a_link(finished_run, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    for args, flag in ((("compare", finished_run, finished_run, "--md"), "--md"), (("agreement", finished_run, "--out"), "--out")):
        link = tmp_path / f"link-{flag[2:]}.json"
        link.symlink_to(victim)
        refused(cli(*args, link), flag)
        dangling = tmp_path / f"dangling-{flag[2:]}.json"
        dangling.symlink_to(tmp_path / "nowhere" / "x.json")
        refused(cli(*args, dangling), flag)
        assert not (tmp_path / "nowhere").exists()
    assert victim.read_text() == "keep me"
    ok = tmp_path / "compare.md"
    assert cli("compare", finished_run, finished_run, "--md", ok).exit_code == 0 and ok.read_text().strip()


@pytest.mark.parametrize("name", ["judge.yaml", "example.jsonl", "models.yaml"])
@pytest.mark.parametrize("dangling", [True, False])
def test_init_refuses_a_link_at_any_file_it_writes(tmp_path, name, dangling):
    project = tmp_path / "project"
    project.mkdir()
    target = tmp_path / "elsewhere" / "file"
    if not dangling:
        target.parent.mkdir()
        target.write_text("keep me")
    (project / name).symlink_to(target)
    refused(cli("init", project), name)
    assert (target.read_text() == "keep me") if not dangling else not target.parent.exists()
    assert sorted(p.name for p in project.iterdir()) == [name]  # nothing else written either
    linked = tmp_path / "linked-project"
    linked.symlink_to(project)
    (project / name).unlink()
    refused(cli("init", linked), "symbolic link")


def test_merge_counts_each_run_and_each_call_once(finished_run, tmp_path):
    copy = Path(shutil.copytree(finished_run, tmp_path / "copy"))
    runs = tmp_path / "runs"
    for args in ((finished_run, finished_run), (finished_run, copy)):
        refused(cli("merge", *args, "--runs-dir", runs), "same run", "count twice")
    assert not runs.exists()
    result = cli("merge", finished_run, "--runs-dir", runs, "--json")
    assert result.exit_code in (0, 3), result.output
    (merged,) = runs.iterdir()
    calls = (finished_run / "calls.jsonl").read_bytes() if (finished_run / "calls.jsonl").exists() else b""
    assert ((merged / "calls.jsonl").read_bytes() if (merged / "calls.jsonl").exists() else b"") == calls
    refused(cli("merge", merged, finished_run, "--runs-dir", tmp_path / "runs2"), "same run")  # a merged run already holds it
    ids = {json.loads((d / "run.json").read_text())["run_id"] for d in (finished_run, merged)}
    assert len(ids) == 2
