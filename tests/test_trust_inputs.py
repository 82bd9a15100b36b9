"""Issue 50 (items 1, 4, 5, 6, 11, 12, 13, 14): the files the trust features read are inputs too. Each
reproduction of the issue, through the command line."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from judge.starter import EXAMPLE
from tests.test_boundary import _jsonl, cli, one_line
from tests.test_io_doors import _config, finished  # noqa: F401 (finished: a module-scoped fixture, one finished run per module)


# -- item 11: a device in place of a run's file --------------------------------------------------------------


@pytest.mark.parametrize("name", ["summary.json", "scores.json", "run.json", "results.jsonl", "calls.jsonl", "selected.ids"])
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_in_place_of_a_run_file_is_one_line_never_read(tmp_path, finished, name, device):
    run = tmp_path / "run"
    shutil.copytree(finished, run)
    if (run / name).exists():
        (run / name).unlink()
    os.symlink(device, run / name)
    commands = [("compare", run, run), ("baseline", "save", run, "--name", "b", "--baselines-dir", tmp_path / "bl"),
                ("merge", run, "--runs-dir", tmp_path / "merged")]
    if name != "scores.json":  # score writes scores.json anew (replacing the link, never reading it)
        commands.insert(0, ("score", run))
    must = {"score": {"summary.json", "run.json", "results.jsonl"}, "compare": {"summary.json", "scores.json", "results.jsonl"},
            "baseline": {"summary.json", "run.json"}, "merge": {"summary.json", "run.json", "results.jsonl", "calls.jsonl"}}
    for args in commands:
        result = cli(*args)
        if name in must[args[0]] or result.exit_code != 0:  # read: refused in one line, never read whole; or never read at all
            out = one_line(result, name if not (args[0] == "compare" and name == "run.json") else str(run))
            assert "MemoryError" not in out


def test_a_fifo_and_a_sparse_giant_in_place_of_summary_json_are_one_line(tmp_path, finished):
    run = tmp_path / "run"
    shutil.copytree(finished, run)
    (run / "summary.json").unlink()
    os.mkfifo(run / "summary.json")
    one_line(cli("score", run), "summary.json", "a pipe")
    (run / "summary.json").unlink()
    with open(run / "summary.json", "wb") as f:
        f.truncate(10**12)  # a terabyte of zeros that takes no disk
    one_line(cli("compare", run, run), "summary.json", "MB")
    (run / "summary.json").unlink()
    with open(run / "results.jsonl", "ab") as f:
        f.truncate(10**12)  # one endless line of NULs after the results
    one_line(cli("compare", finished, run), "results.jsonl", "limit for one record")


# -- item 14: BASELINE.json nested 100,000 deep ----------------------------------------------------------------


def test_a_deep_baseline_marker_is_listed_as_corrupt_with_exit_2(tmp_path, finished):
    good = cli("baseline", "save", finished, "--name", "main", "--baselines-dir", tmp_path / "bl")
    assert good.exit_code == 0, good.output
    deep = tmp_path / "bl" / "deep"
    deep.mkdir()
    (deep / "BASELINE.json").write_text("[" * 100_000 + "]" * 100_000)
    listed = cli("baseline", "list", "--baselines-dir", tmp_path / "bl")
    assert listed.exit_code == 2 and "Traceback" not in listed.output and "RecursionError" not in listed.output, listed.output
    assert "main: " in listed.output and "deep: " in listed.output and "nested deeper than 64" in listed.output
    as_json = cli("baseline", "list", "--baselines-dir", tmp_path / "bl", "--json")
    assert as_json.exit_code == 2 and "nested deeper than 64" in as_json.output, as_json.output
    (deep / "BASELINE.json").write_text(json.dumps({"overall": [1, 2], "records": "x"}))  # an edited marker of the wrong shapes
    listed = cli("baseline", "list", "--baselines-dir", tmp_path / "bl")
    assert listed.exit_code == 0 and "deep: x records" in listed.output, listed.output


# -- item 12: merge and label read finished runs only ------------------------------------------------------------


def test_a_shard_killed_mid_run_is_refused_by_merge_and_an_unfinished_run_by_label(tmp_path):
    data = _jsonl(tmp_path / "data.jsonl", [{**EXAMPLE[i % len(EXAMPLE)], "id": f"r{i}"} for i in range(8)])
    config = _config(tmp_path, data)
    for shard in ("0/2", "1/2"):
        result = cli("run", config, "--runs-dir", tmp_path / "runs", "--no-progress", "--shard", shard, "--name", f"s{shard[0]}")
        assert result.exit_code == 0, result.output
    s0, s1 = sorted((tmp_path / "runs").iterdir())
    whole = cli("merge", s0, s1, "--runs-dir", tmp_path / "merged", "--json")
    assert whole.exit_code == 0, whole.output
    # shard 1 as a kill leaves it: two of its four results written, no summary.json
    lines = (s1 / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (s1 / "results.jsonl").write_text("".join(lines[:2]), encoding="utf-8")
    (s1 / "summary.json").unlink()
    out = one_line(cli("merge", s0, s1, "--runs-dir", tmp_path / "merged2"), str(s1), "did not finish", "2 of its 4 selected records are missing")
    assert not (tmp_path / "merged2").exists(), out
    one_line(cli("label", s1, "--n", "2"), str(s1), "did not finish", "finished run directory")
    assert not (s1 / "labels.jsonl").exists()
    # a summary edited to say incomplete is refused the same way
    summary = json.loads((s0 / "summary.json").read_text(encoding="utf-8"))
    summary["run"]["complete"] = False
    (s0 / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    one_line(cli("label", s0, "--n", "2"), "says incomplete")


# -- item 6: summary.json's usage is read typed --------------------------------------------------------------


@pytest.mark.parametrize("field,value", [("cost_usd", '<meta http-equiv="refresh" content="0;url=http://127.0.0.1:9/">'),
                                         ("calls", "\n\n# fake heading\n"), ("cost_usd", "0.01"), ("prompt_tokens", [1]),
                                         ("cost_usd", -1), ("cache_hits", 1.5)])
def test_an_edited_usage_in_summary_json_is_one_line_and_never_reaches_a_report(tmp_path, finished, field, value):
    run = tmp_path / "run"
    shutil.copytree(finished, run)
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    summary["usage"][field] = value
    (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    for name in ("report.html", "report.md"):
        (run / name).unlink()
    result = cli("score", run)
    if value == "0.01":  # a number written as text is still that number
        assert result.exit_code == 0, result.output
        assert "cost $0.0100" in (run / "report.md").read_text(encoding="utf-8")
        return
    one_line(result, "summary.json", f"usage.{field}")
    assert not (run / "report.html").exists() and not (run / "report.md").exists()
    one_line(cli("baseline", "save", run, "--name", "b", "--baselines-dir", tmp_path / "bl"), "summary.json", f"usage.{field}")


