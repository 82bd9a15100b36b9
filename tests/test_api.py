"""The Python API (issue 13.5): judge.evaluate runs a config and hands back the run, whose claims come typed
with their verdicts and exact evidence spans; it never imports pytest. The pytest plugin runs through it and
fails where `judge run` exits 3."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections import Counter

import pytest

from judge.testing.server import Reply
from tests.conftest import BUNDLED_SAMPLE, ROOT

DETERMINISTIC = ROOT / "configs" / "deterministic.yaml"

APOLLO = [
    {"id": "apollo", "question": "When did Apollo 11 land?",
     "source": "Apollo 11 landed on the Moon on July 20, 1969. Neil Armstrong was the first to step out."},
    {"id": "rain", "question": "Why is the sky blue?", "source": "Rayleigh scattering makes the sky look blue."},
]
ANSWERS = {"apollo": "Apollo 11 landed on July 20, 1969. It carried three astronauts to Mars.",
           "rain": {"model-a": "Rayleigh scattering makes the sky look blue."}}


def test_evaluate_in_a_fresh_interpreter_without_pytest(tmp_path):
    code = f"""
import sys, json
sys.modules["pytest"] = None  # importing pytest now fails: the API must not need it
import judge
run = judge.evaluate({str(DETERMINISTIC)!r}, runs_dir={str(tmp_path / "runs")!r})
out = {{"labels": {{}}, "path": str(run.path), "report": str(run.report_path), "failures": run.failures}}
for c in run.claims():
    out["labels"][c.label] = out["labels"].get(c.label, 0) + 1
out["contradicted"] = [c.text for c in run.claims(label="contradicted")]
print(json.dumps(out))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    # the labels the API yields are those of results.jsonl, claim for claim
    written = Counter()
    for line in (tmp_path / "runs").glob("*/results.jsonl").__next__().read_text().splitlines():
        for a in json.loads(line)["answers"]:
            written.update(c["label"] for c in a["claims"])
    assert out["labels"] == dict(written) and sum(written.values()) > 0
    assert out["contradicted"] and len(out["contradicted"]) == written["contradicted"]
    assert out["report"].endswith("report.html") and out["failures"] == []


def test_records_and_answers_in_memory(tmp_path):
    import judge

    run = judge.evaluate({"name": "mine", "adjudicate": {"judges": ["deterministic"]}}, records=APOLLO, answers=ANSWERS,
                         runs_dir=tmp_path / "runs")
    claims = list(run.claims())
    assert {c.model for c in claims} == {"answer", "model-a"}
    mars = [c for c in claims if "Mars" in c.text]
    assert len(mars) == 1 and mars[0].label in ("unsupported", "contradicted")
    assert [c.text for c in run.claims(label=["unsupported", "contradicted"])] == [mars[0].text]
    assert [c.record_id for c in run.claims(model="model-a")] == ["rain"]
    sources = {r["id"]: r["source"] for r in APOLLO}
    supported = [c for c in claims if c.label == "supported"]
    assert supported and all(c.evidence for c in supported)
    for c in supported:  # offsets are sacred
        for e in c.evidence:
            assert sources[c.record_id][e.start_char:e.end_char] == e.excerpt
    assert run.scores and run.report_path.exists() and run.summary["records"] == 2
    again = judge.evaluate({"name": "mine", "adjudicate": {"judges": ["deterministic"]}}, records=APOLLO, answers=ANSWERS,
                           runs_dir=tmp_path / "runs")
    assert again.path != run.path and len(list((tmp_path / "runs" / ".inputs").iterdir())) == 1  # inputs written once


def test_aevaluate_from_a_running_event_loop(tmp_path):
    import judge

    async def main():
        return await judge.aevaluate(DETERMINISTIC, runs_dir=tmp_path / "runs", limit=1)

    run = asyncio.run(main())
    assert run.summary["records"] == 1


def test_bad_records_name_the_record_and_field(tmp_path):
    import judge
    from judge.problems import DatasetError
    from judge.config import ConfigError

    with pytest.raises(DatasetError) as e:
        judge.evaluate({"adjudicate": {"judges": ["deterministic"]}}, records=[{"id": "x1", "question": "q", "answer": "a"}],
                       runs_dir=tmp_path / "runs")
    assert any("x1" in str(p) and "source" in str(p) for p in e.value.problems)
    with pytest.raises(ConfigError, match="record 'nope' is not among the records"):
        judge.evaluate({"adjudicate": {"judges": ["deterministic"]}}, records=APOLLO, answers={"nope": "x"}, runs_dir=tmp_path / "runs")


def _users_failing_test(pytester, monkeypatch, call: str) -> str:
    """A user's test file with one test making ``call`` on the fixture, run in a subprocess; it must fail. Its output."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # this checkout's judge, whatever an editable install points at
    pytester.makepyfile(f"def test_user(judge_grounding):\n    judge_grounding.{call}\n")
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    return result.stdout.str()


@pytest.mark.slow
def test_the_plugin_fails_a_run_whose_judge_failed(pytester, scripted_server, monkeypatch):
    server = scripted_server(lambda request, n: Reply(status=401))
    config = pytester.path / "broken.yaml"
    config.write_text(
        f"name: broken\ndataset: {{path: {BUNDLED_SAMPLE}}}\nanswers: {{path: {ROOT / 'judge' / 'data' / 'he_sample_answers.jsonl'}}}\n"
        f"models:\n  j: {{model: openai/j, family: fam-j, api_base: '{server.base_url}', max_attempts: 1, timeout: 5}}\n"
        f"decompose: {{method: sentences}}\nadjudicate: {{judges: [j], triage: false}}\ncontrols: {{enabled: false}}\n"
        f"cache_dir: {pytester.path / 'cache'}\n"
    )
    out = _users_failing_test(pytester, monkeypatch, f"assert_grounded({str(config)!r}, min_faithfulness=0.0)")
    assert "run failed: every claim" in out and "scripted status 401" in out and "report.html" in out


def test_the_plugins_failure_names_the_claims_and_the_report(pytester, monkeypatch):
    out = _users_failing_test(pytester, monkeypatch, f"assert_grounded({str(DETERMINISTIC)!r}, min_faithfulness=0.99)")
    assert "faithfulness" in out and "not grounded" in out and "CONTRADICTED" in out and "passage:" in out
    assert "report.html" in out


def test_api_edges(tmp_path):
    import concurrent.futures

    import judge
    from judge.api import _write_inputs
    from judge.pytest_plugin import assert_grounded
    from judge.config import ConfigError

    with pytest.raises(ConfigError, match="expected a list of records"):
        judge.evaluate({"adjudicate": {"judges": ["deterministic"]}}, records=APOLLO[0], runs_dir=tmp_path / "runs")
    with pytest.raises(ConfigError, match="limit"):
        judge.evaluate(DETERMINISTIC, limit=0, runs_dir=tmp_path / "runs")
    with concurrent.futures.ThreadPoolExecutor(8) as pool:  # evaluations of the same records at once
        paths = set(pool.map(lambda _: _write_inputs(APOLLO, tmp_path / "race"), range(16)))
    assert len(paths) == 1 and [p.name for p in (tmp_path / "race" / ".inputs").iterdir()] == [next(iter(paths)).name]
    run = judge.evaluate({"adjudicate": {"judges": ["deterministic"]}}, records=APOLLO, answers=ANSWERS, runs_dir=tmp_path / "runs")
    with pytest.raises(ValueError, match="unknown label"):
        list(run.claims(label="nonsense"))
    assert assert_grounded(run, min_faithfulness=0.1)["claims"] == len(list(run.claims()))  # a Run is accepted
