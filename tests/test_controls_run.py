"""Controls in real runs: mixed into the judges' calls through the scripted server, measured apart from the
answers, gated by min_control_accuracy (exit 3), reproducible from the cache, re-judged by rejudge."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from judge.controls.make import ControlsConfig
from judge.controls.mix import ControlPlan
from judge.datasets import load
from judge.testing.scripts import claim_text, pipeline_model
from tests.conftest import BUNDLED_SAMPLE, run_cli
from tests.test_pipeline import BUNDLED_ANSWERS, results_of, write_config


def _truth() -> dict[str, str]:
    """Every claim's true label: the bundled answers' gold claims and every control the run can make."""
    truth = {g.text.strip(): g.label for a in load(BUNDLED_ANSWERS, "answers") for g in a.gold_claims}
    records = load(BUNDLED_SAMPLE)
    plan = ControlPlan.for_run(ControlsConfig(), records, [r.id for r in records])
    for r in records:
        truth.update({c.text.strip(): c.label for c in plan.controls_pool(r)})
    return truth


def _run(config: Path, tmp_path: Path, *extra: str):
    result = run_cli("run", str(config), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress", *extra)
    return result, (json.loads(result.stdout) if result.stdout.strip().startswith("{") else None)


def _default_gate(config: Path) -> Path:
    """The config as a user writes it: no min_control_accuracy key, so the default applies."""
    data = yaml.safe_load(config.read_text())
    data.pop("min_control_accuracy", None)
    config.write_text(yaml.safe_dump(data, allow_unicode=True))
    return config


def _health(summary: dict, judge: str) -> dict:
    return next(j for j in summary["judge_health"]["judges"] if j["judge"] == judge)


def test_a_judge_that_calls_everything_supported_fails_its_controls_and_the_run_exits_3(scripted_server, tmp_path):
    server = scripted_server(pipeline_model())  # "supported" to every claim
    config = _default_gate(write_config(tmp_path, server, adjudicate={"judges": ["judge-b"]}))
    result, summary = _run(config, tmp_path)
    assert result.returncode == 3, result.stderr
    h = _health(summary, "judge-b")
    assert h["passed"] is False and h["status"] == "lenient" and h["controls"] >= 3
    assert "judge judge-b failed its controls" in result.stderr
    assert "controls supported" in result.stderr and ("contradicted" in result.stderr or "unsupported" in result.stderr)
    # the terminal summary says it too, before the table
    result = run_cli("run", str(config), "--runs-dir", str(tmp_path / "runs2"), "--no-progress")
    assert result.returncode == 3
    assert result.stdout.index("WARNING: judge judge-b failed its controls") < result.stdout.index("model under test")


def test_a_judge_answering_from_the_truth_passes_and_controls_stay_out_of_the_answers(scripted_server, tmp_path):
    truth = _truth()
    server = scripted_server(pipeline_model(lambda cid, request: truth.get(claim_text(request, cid).strip(), "supported")))
    config = _default_gate(write_config(tmp_path, server, adjudicate={"judges": ["judge-b"], "triage": False}))
    result, summary = _run(config, tmp_path)
    assert result.returncode == 0, result.stderr
    h = _health(summary, "judge-b")
    assert h["passed"] is True and h["accuracy"] == 1.0 and h["status"] == "trustworthy" and h["controls"] >= 3
    results = results_of(summary["run_dir"])
    controls = [c for r in results for c in r.controls]
    assert len(controls) == h["controls"]
    assert {c.control.label for c in controls} == {"supported", "contradicted", "unsupported"}
    control_texts = {c.control.text for c in controls}
    answers = {(a.record_id, a.model): a.answer for a in load(BUNDLED_ANSWERS, "answers")}
    source = {s.doc_id: s.text for rec in load(BUNDLED_SAMPLE) for s in rec.sources}
    for r in results:
        for a in r.answers:
            assert a.answer == answers[(r.record_id, a.model)]
            assert not control_texts & {c.text for c in a.claims}  # never among an answer's claims
        for c in r.controls:  # offered the same kind of candidates, spans exact
            assert c.candidates and all(source[p.doc_id][p.start_char : p.end_char] == p.excerpt for x in c.candidates for p in x.parts)
    # the controls went into the same judge calls as the claims: no call holds controls only
    bodies = [json.dumps(b, ensure_ascii=False) for b in server.stats.bodies if "verdicts" in json.dumps(b)]
    for text in control_texts:
        holding = [b for b in bodies if json.dumps(text, ensure_ascii=False)[1:-1][:40] in b]
        assert holding, text
    # the answers' numbers are those of the same run without controls
    off, off_summary = _run(write_config(tmp_path, server, adjudicate={"judges": ["judge-b"], "triage": False}, controls={"enabled": False}), tmp_path)
    assert off.returncode == 0, off.stderr
    assert off_summary["by_model"] == summary["by_model"] and off_summary["overall"] == summary["overall"]
    assert off_summary["judge_health"]["judges"][0]["controls"] == 0


def test_controls_are_byte_identical_from_the_cache_and_rejudged_per_judge(scripted_server, tmp_path):
    truth = _truth()
    server = scripted_server(pipeline_model(lambda cid, request: truth.get(claim_text(request, cid).strip(), "supported")))
    config = write_config(tmp_path, server, min_control_accuracy=0)
    first, s1 = _run(config, tmp_path)
    calls = server.stats.requests
    second, s2 = _run(config, tmp_path)
    third, s3 = _run(config, tmp_path)
    assert first.returncode == second.returncode == third.returncode == 0
    assert server.stats.requests == calls  # every call, controls included, answered from the cache
    assert s2["usage"]["cache_hits"] == s1["usage"]["calls"] and s2["usage"]["calls"] == 0
    assert Path(s2["run_dir"], "results.jsonl").read_bytes() == Path(s3["run_dir"], "results.jsonl").read_bytes()
    assert [c.model_dump() | {"verdicts": None} for r in results_of(s1["run_dir"]) for c in r.controls] == [
        c.model_dump() | {"verdicts": None} for r in results_of(s3["run_dir"]) for c in r.controls
    ]
    rejudged = run_cli("rejudge", s1["run_dir"], "--judge", "deterministic", "--runs-dir", str(tmp_path / "runs"), "--json")
    assert rejudged.returncode in (0, 3), rejudged.stderr
    r = json.loads(rejudged.stdout)
    (det,) = [j for j in r["judge_health"]["judges"] if j["judge"] == "deterministic"]
    assert det["controls"] == _health(s1, "deterministic")["controls"]
    assert det["accuracy"] == _health(s1, "deterministic")["accuracy"]  # same claims, same deterministic verdicts
    agreement = run_cli("agreement", s1["run_dir"], r["run_dir"], "--out", str(tmp_path / "agreement"), "--json")
    assert agreement.returncode == 0, agreement.stderr
    per_judge = json.loads(agreement.stdout)["per_judge"]
    assert per_judge["judge-b"]["controls"]["accuracy"] == 1.0  # it answered from the truth
    assert per_judge["deterministic"]["controls"]["n"] == det["controls"]
