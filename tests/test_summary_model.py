"""Issue 48.5: a run's outcome typed and decided once. summary.json is written and read through one type
(judge.runs.summary.Summary), byte for byte as before (every pinned summary.json round-trips unchanged); a field
edited by hand is one line naming it, exit 2, for every command that reads the run; the exit code is decided
by judge.runs.decision.decide for the CLI and for judge.evaluate's Run.failures alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import judge
from judge.cli import app
from judge.errors import EXIT_FAILED, EXIT_GATE, EXIT_OK
from judge.runs.decision import decide
from judge.runs.run import Run
from judge.runs.store import RunDirError
from judge.runs.summary import Summary
from judge.thresholds import Thresholds
from tests.conftest import ROOT

PINNED = ROOT / "tests" / "fixtures" / "pinned"
DETERMINISTIC = ROOT / "configs" / "deterministic.yaml"


def cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.mark.parametrize("case", sorted(p.parent.name for p in PINNED.glob("*/summary.json")))
def test_every_pinned_summary_round_trips_through_the_model_byte_for_byte(case):
    text = (PINNED / case / "summary.json").read_text(encoding="utf-8")
    summary = Summary.model_validate(json.loads(text))
    assert json.dumps(summary.dump(), ensure_ascii=False, indent=1) + "\n" == text


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    result = cli("run", DETERMINISTIC, "--limit", "2", "--runs-dir", runs, "--no-progress")
    assert result.exit_code in (0, 3), result.output
    (run_dir,) = runs.iterdir()
    return run_dir


def _edited(finished: Path, tmp_path: Path, edit) -> Path:
    import shutil

    run_dir = tmp_path / finished.name
    shutil.copytree(finished, run_dir)
    data = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    edit(data)
    (run_dir / "summary.json").write_text(json.dumps(data), encoding="utf-8")
    return run_dir


@pytest.mark.parametrize("edit, field", [
    (lambda d: d["overall"].update(claims="many"), "overall.claims"),
    (lambda d: d["run"].update(complete="perhaps"), "run.complete"),
    (lambda d: d["outcome"].update(reasons=5), "outcome.reasons"),
    (lambda d: d["judge_health"].update(judges="none"), "judge_health.judges"),
])
def test_an_edited_summary_field_is_one_line_naming_it_exit_2(finished, tmp_path, edit, field):
    run_dir = _edited(finished, tmp_path, edit)
    with pytest.raises(RunDirError, match=rf"summary.json: field {field}: "):
        Run.open(run_dir).summary
    for args in (("label", run_dir, "--n", "2"), ("baseline", "save", run_dir, "--name", "x", "--baselines-dir", tmp_path / "b")):
        result = cli(*args)
        assert result.exit_code == 2, result.output
        assert f"field {field}:" in result.output and "Traceback" not in result.output


def test_the_summary_read_back_is_the_one_written(finished):
    run = Run.open(finished)
    assert run.summary == json.loads((finished / "summary.json").read_text(encoding="utf-8"))
    assert run.summary_model.complete and run.summary_model.run.records_finished == 2


def _summary(**fields) -> Summary:
    base = {"overall": {"claims": 4, "labels": {"supported": 3, "unsupported": 1}, "faithfulness": 0.75, "hallucination_rate": 0.25},
            "run": {"records_selected": 2, "records_finished": 2, "complete": True}}
    return Summary.model_validate({**base, **fields})


def test_decide_orders_the_codes_failed_before_gate_before_ok():
    ok = _summary()
    assert decide(ok).code == EXIT_OK
    assert decide(ok, thresholds=Thresholds(max_hallucination_rate=0.3)).code == EXIT_OK
    broken = decide(ok, thresholds=Thresholds(max_hallucination_rate=0.2))
    assert broken.code == EXIT_GATE and broken.broken == ["max hallucination rate 0.2: overall is 0.2500 (1 hallucinated of 4 judged claims)"]
    settled = {"overall": {"claims": 4, "labels": {"supported": 4}, "faithfulness": 1.0, "hallucination_rate": 0.0}}
    assert decide(ok, thresholds=Thresholds(max_hallucination_rate=0.2), settled=settled).code == EXIT_OK  # re-asked: noise
    assert decide(ok, gates_failed=True).code == EXIT_GATE
    stopped = _summary(run={"records_selected": 3, "records_finished": 2, "complete": False, "stopped_early": "max_cost_usd"})
    failed = decide(stopped, thresholds=Thresholds(max_hallucination_rate=0.2), gates_failed=True)
    assert failed.code == EXIT_FAILED and failed.failures[0].startswith("run failed: incomplete, 2 of 3 records finished (max_cost_usd)")
    assert decide(ok, scoring_failed="scoring x failed").failures == ["scoring x failed"]
    assert decide(_summary(overall=None), thresholds=Thresholds(min_faithfulness=0.5)).broken == [
        "min faithfulness 0.5: overall has no judged claim, so it cannot be checked"]


def test_evaluate_failures_and_the_cli_exit_come_from_one_decision(tmp_path):
    records = [{"id": "r1", "question": "Capital?", "source": "Lima is the capital of Peru.", "answer": ""}]  # nothing judged: exit 3
    run = judge.evaluate(DETERMINISTIC, records=records, runs_dir=tmp_path / "runs", reports=False)
    assert run.failures == decide(run.summary_model).failures and run.failures
    assert decide(run.summary_model).code == EXIT_FAILED
