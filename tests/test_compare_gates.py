"""Gates that cannot be checked fail (issue 11): a metric missing in either run is exit 1 unless --allow-missing."""

import json
from pathlib import Path

import pytest
import yaml

from judge.testing.server import Reply
from tests.conftest import cli_inproc, tree_digest
from tests.test_compare import config_with_judge, labeller, run


def failing_run(tmp_path: Path, server, name: str) -> str:
    """A run whose every judge call fails (HTTP 400, not retried): every claim is a judge_error."""
    path = config_with_judge(tmp_path, server, name, "judge-x", "fam-x")
    config = yaml.safe_load(path.read_text())
    config["models"]["judge-x"]["max_attempts"] = 1
    path.write_text(yaml.safe_dump(config, allow_unicode=True))
    result = cli_inproc("run", str(path), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress")
    run_dir = next(line for line in result.stdout.splitlines() if '"run_dir"' in line).split('"')[3]
    claims = [c for line in Path(run_dir, "results.jsonl").read_text().splitlines() for a in json.loads(line)["answers"] for c in a["claims"]]
    assert claims and all(c["label"] == "judge_error" for c in claims)
    return run_dir


@pytest.fixture(scope="module")
def base_and_broken(tmp_path_factory):
    """A run judged supported and one whose every judge call failed; built once, only read by the tests."""
    from judge.testing.server import ScriptedServer

    tmp_path = tmp_path_factory.mktemp("base_and_broken")
    good, bad = ScriptedServer(labeller(lambda t: "supported")).start(), ScriptedServer([Reply(status=400)]).start()
    try:
        base = run(config_with_judge(tmp_path, good, "base", "judge-x", "fam-x"), tmp_path)
        broken = failing_run(tmp_path, bad, "broken")
    finally:
        good.stop()
        bad.stop()
    before = tree_digest(base, broken)
    yield base, broken
    assert tree_digest(base, broken) == before, "a test wrote into a shared run"


def test_a_gate_over_a_missing_metric_fails_unless_allowed(base_and_broken):
    base, broken = base_and_broken
    result = cli_inproc("compare", base, broken, "--gate", "faithfulness:0.05")
    assert result.returncode == 1, result.stdout + result.stderr
    line = next(x for x in result.stdout.splitlines() if x.startswith("FAIL faithfulness"))
    assert "not available in both runs" in line and "run B" in line and "--allow-missing" in line
    out = json.loads(cli_inproc("compare", base, broken, "--gate", "faithfulness:0.05", "--json").stdout)
    assert out["failed"] and out["gates"][0]["missing"]
    allowed = cli_inproc("compare", base, broken, "--gate", "faithfulness:0.05", "--allow-missing")
    assert allowed.returncode == 0 and "allowed by --allow-missing" in allowed.stdout
    # a metric present in both runs is gated as before: the judge-error rate went from 0 to 1
    errors = cli_inproc("compare", base, broken, "--gate", "judge_error_rate:0.5", "--allow-missing", "--json")
    assert errors.returncode == 1 and json.loads(errors.stdout)["gates"][0]["worsening"] == pytest.approx(1.0)


def test_run_with_baseline_gate_over_a_missing_metric(base_and_broken, scripted_server, tmp_path):
    base, _ = base_and_broken
    path = config_with_judge(tmp_path, scripted_server([Reply(status=400)]), "again", "judge-y", "fam-y")
    config = yaml.safe_load(path.read_text())
    config["models"]["judge-y"]["max_attempts"] = 1
    path.write_text(yaml.safe_dump(config, allow_unicode=True))
    args = ["run", str(path), "--runs-dir", str(tmp_path / "runs"), "--no-progress", "--baseline", base, "--gate", "faithfulness:0.1"]
    result = cli_inproc(*args)
    # every judge call failed: the run itself cannot pass (exit 3, before the gate's 1), and the gate still says why
    assert result.returncode == 3 and "FAIL faithfulness" in result.stdout, result.stdout + result.stderr
    assert "run failed: every claim" in result.stderr
    allowed = cli_inproc(*args, "--allow-missing")  # the gate may allow a missing metric; the failed run is still 3
    assert allowed.returncode == 3 and "allowed by --allow-missing" in allowed.stdout
    alone = cli_inproc("compare", base, base, "--allow-missing")
    assert alone.returncode == 2 and "--allow-missing needs --gate" in alone.stderr
