"""A run's selection on disk (issue 29.1): the ids a run takes live in selected.ids, never in memory or in
run.json; --resume reads them from there (and moves them there from the run.json of a run written before);
a damaged file is refused naming its line; the control plan holds only a count, and an answer chosen for
controls stays chosen whatever else the run selects."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli import app
from judge.controls.make import ControlsConfig
from judge.controls.mix import ControlPlan
from judge.runs.inputs import RecordStream
from judge.runs.selection import ToDo, stream_todo
from judge.testing.soak import make_dataset
from tests.conftest import ROOT

SAMPLE, ANSWERS = ROOT / "judge" / "data" / "he_sample.json", ROOT / "judge" / "data" / "he_sample_answers.jsonl"


def cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def results_of(run_dir: Path) -> list[str]:
    return (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """Twelve records (the bundled ones under new ids) and the deterministic judge."""
    here = tmp_path_factory.mktemp("data")
    records, answers = make_dataset(SAMPLE, ANSWERS, here, 24)
    config = here / "run.yaml"
    config.write_text(f"name: sel\ndataset: {{path: {records}}}\nanswers: {{path: {answers}}}\ndecompose: {{method: sentences}}\n"
                      f"adjudicate: {{judges: [deterministic]}}\ncache_dir: {here / 'cache'}\n", encoding="utf-8")
    return config


@pytest.fixture(scope="module")
def config(data) -> Path:
    return data


@pytest.fixture(scope="module")
def finished(tmp_path_factory, config) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    result = cli("run", config, "--limit", "6", "--runs-dir", runs, "--no-progress")
    assert result.exit_code in (0, 3), result.output
    (run_dir,) = runs.iterdir()
    return run_dir


def test_the_selection_is_a_file_of_ids_and_run_json_holds_its_count(finished):
    ids = [json.loads(line) for line in (finished / "selected.ids").read_text(encoding="utf-8").splitlines()]
    assert len(ids) == 6 and len(set(ids)) == 6
    assert json.loads((finished / "run.json").read_text())["records_selected"] == 6
    assert [json.loads(line)["record_id"] for line in results_of(finished)] == ids, "results in the selection's order"


def _cut_to_half(run_dir: Path) -> None:
    lines = results_of(run_dir)
    (run_dir / "results.jsonl").write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")
    (run_dir / "summary.json").unlink()


def test_resume_takes_the_selection_from_the_file_whatever_limit_says_now(finished, config, tmp_path):
    run_dir = Path(shutil.copytree(finished, tmp_path / "run"))
    _cut_to_half(run_dir)
    result = cli("run", config, "--limit", "6", "--resume", run_dir, "--no-progress")
    assert result.exit_code in (0, 3), result.output
    assert results_of(run_dir) == results_of(finished), "the same six records, each once, byte-identical"


def test_a_run_written_before_the_file_resumes_from_its_run_json_list(finished, config, tmp_path):
    run_dir = Path(shutil.copytree(finished, tmp_path / "run"))
    ids = [json.loads(line) for line in (run_dir / "selected.ids").read_text(encoding="utf-8").splitlines()]
    (run_dir / "selected.ids").unlink()
    manifest = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps({**manifest, "records_selected": ids}))
    _cut_to_half(run_dir)
    result = cli("run", config, "--limit", "6", "--resume", run_dir, "--no-progress")
    assert result.exit_code in (0, 3), result.output
    assert results_of(run_dir) == results_of(finished)
    assert json.loads((run_dir / "run.json").read_text())["records_selected"] == 6, "the list moved into selected.ids"
    assert (run_dir / "selected.ids").read_text(encoding="utf-8") == (finished / "selected.ids").read_text(encoding="utf-8")


@pytest.mark.parametrize("damage", ["cut", "junk", "number", "missing"])
def test_a_damaged_selection_is_refused_naming_the_file_and_line(finished, config, tmp_path, damage):
    run_dir = Path(shutil.copytree(finished, tmp_path / "run"))
    path = run_dir / "selected.ids"
    text = path.read_text(encoding="utf-8").splitlines()
    if damage == "missing":
        path.unlink()
    else:
        text[2] = {"cut": text[2][:3], "junk": "\x00\xff{", "number": "17"}[damage]
        path.write_text("\n".join(text) + "\n", encoding="utf-8")
    before = {p.name: p.read_bytes() for p in run_dir.iterdir() if p.is_file() and p.name != "run.lock"}
    result = cli("run", config, "--limit", "6", "--resume", run_dir, "--no-progress")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "selected.ids" in result.output
    if damage != "missing":
        assert "line 3" in result.output
    after = {p.name: p.read_bytes() for p in run_dir.iterdir() if p.is_file() and p.name not in ("run.lock", "run.log")}
    assert after == {k: v for k, v in before.items() if k != "run.log"}, "a refused resume changes no result or manifest"


def test_the_to_do_stream_yields_each_selected_unfinished_record_once_in_dataset_order(data):
    records = RecordStream(data.parent / "records.json")
    ids = [r.id for r in records]
    selected, finished = ids[1::2], ids[1:6]
    todo = ToDo(iter(selected), iter(finished + finished))  # a repeated finished id counts once
    assert (todo.selected, todo.finished) == (len(selected), len(set(selected) & set(finished)))
    got = [r.id for r in stream_todo(records, todo)]
    assert got == [i for i in ids if i in set(selected) - set(finished)]


def test_the_control_plan_holds_a_count_only_and_a_records_choice_does_not_depend_on_the_selection(data):
    records = RecordStream(data.parent / "records.json")
    ids = [r.id for r in records]
    controls = ControlsConfig(enabled=True, per_label=2)
    plan = ControlPlan.for_run(controls, records, iter(ids))
    assert plan.records == len(ids)
    other = ControlPlan.for_run(controls, records, iter(ids[6:]))  # another selection (a later shard): a larger chance
    assert other.chance >= plan.chance
    assert all(other.chosen(i, 0) for i in ids if plan.chosen(i, 0)), "an answer chosen stays chosen when more are asked"
    assert plan.chosen(ids[-1], 0) == ControlPlan.for_run(controls, records, iter(ids)).chosen(ids[-1], 0)


def test_a_run_killed_before_its_selection_was_written_resumes_with_the_same_selection(finished, config, tmp_path):
    """run.json is written before selected.ids: a kill between them leaves neither the file nor its count, and
    the resume selects again (the same data, limit and shard); a file removed later (its count is there) is refused."""
    run_dir = Path(shutil.copytree(finished, tmp_path / "run"))
    (run_dir / "selected.ids").unlink()
    manifest = json.loads((run_dir / "run.json").read_text())
    del manifest["records_selected"]
    (run_dir / "run.json").write_text(json.dumps(manifest))
    _cut_to_half(run_dir)
    result = cli("run", config, "--limit", "6", "--resume", run_dir, "--no-progress")
    assert result.exit_code in (0, 3), result.output
    assert results_of(run_dir) == results_of(finished)
    assert (run_dir / "selected.ids").read_text(encoding="utf-8") == (finished / "selected.ids").read_text(encoding="utf-8")
