"""Behaviour pinned byte for byte: results.jsonl, summary.json and scores.json (and compare, agreement and
rejudge output) of the bundled deterministic config and of scripted-server configs, against files written
before the redesign of issue 12. A refactor must leave them identical; an intended change (a named bug fix)
regenerates them with ``JUDGE_PIN_WRITE=1 python -m pytest tests/test_pinned.py`` and says why in the commit.

Only what cannot repeat is masked: the run directory's path and wall-clock values (wall time, latency).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml

from judge.testing.scripts import claim_text, pipeline_model
from judge.testing.server import Reply
from tests.conftest import BUNDLED_SAMPLE, ROOT, cli_inproc

PINNED = ROOT / "tests" / "fixtures" / "pinned"
BUNDLED_ANSWERS = ROOT / "judge" / "data" / "he_sample_answers.jsonl"
WRITE = os.environ.get("JUDGE_PIN_WRITE") == "1"
VOLATILE = {"wall_seconds", "mean_latency_s", "latency_s", "config_hash", "key"}  # config_hash, key (a judge setup's): they hold tmp paths and the scripted server's port


def _mask(obj, paths: dict[str, str]):
    if isinstance(obj, dict):
        return {k: ("<volatile>" if k in VOLATILE and v is not None else _mask(v, paths)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_mask(v, paths) for v in obj]
    if isinstance(obj, str):
        for real, alias in paths.items():
            obj = obj.replace(real, alias)
    return obj


def _json_text(path: Path, paths: dict[str, str]) -> str:
    return json.dumps(_mask(json.loads(path.read_text(encoding="utf-8")), paths), ensure_ascii=False, indent=1) + "\n"


def _check(case: str, name: str, text: str) -> None:
    pinned = PINNED / case / name
    if WRITE:
        pinned.parent.mkdir(parents=True, exist_ok=True)
        pinned.write_text(text, encoding="utf-8")
        return
    assert pinned.exists(), f"{pinned} is missing: write it with JUDGE_PIN_WRITE=1"
    expected = pinned.read_text(encoding="utf-8")
    assert text == expected, f"{case}/{name} differs from the pinned output"


def _run(config: Path, tmp_path: Path, *extra: str, code: int = 0) -> Path:
    result = cli_inproc("run", str(config), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress", *extra)
    assert result.returncode == code, result.stderr
    return Path(json.loads(result.stdout)["run_dir"])


def _check_run(case: str, run_dir: Path, paths: dict[str, str] | None = None) -> None:
    paths = {str(run_dir): "<run_dir>", **(paths or {}), str(ROOT): "<root>"}
    _check(case, "results.jsonl", (run_dir / "results.jsonl").read_text(encoding="utf-8"))
    for name in ("summary.json", "scores.json"):
        _check(case, name, _json_text(run_dir / name, paths))


def _config(tmp_path: Path, name: str, **fields) -> Path:
    config = {"name": name, "dataset": {"path": str(BUNDLED_SAMPLE)}, "cache_dir": str(tmp_path / f"cache-{name}"), "controls": {"gate": False}, **fields}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


def _model(server, name: str, family: str) -> dict:
    return {"model": f"openai/{name}", "api_base": server.base_url, "family": family, "timeout": 3, "max_attempts": 2}


def test_the_bundled_deterministic_config(tmp_path):
    _check_run("deterministic", _run(ROOT / "configs" / "deterministic.yaml", tmp_path))


def test_reference_answers_against_the_human_raters(tmp_path):
    config = _config(tmp_path, "reference", answers={"reference": True}, decompose={"method": "sentences"},
                     adjudicate={"judges": ["deterministic"], "triage": False})
    _check_run("reference", _run(config, tmp_path))


def test_llm_decomposer_triage_and_a_model_judge_beside_the_deterministic_one(scripted_server, tmp_path):
    server = scripted_server(pipeline_model(lambda cid, req: "contradicted" if "כל 5 דקות" in claim_text(req, cid) else "supported"))
    config = _config(
        tmp_path, "scripted", answers={"path": str(BUNDLED_ANSWERS)},
        models={"decomposer": _model(server, "decomposer", "fam-a"), "judge-b": _model(server, "judge-b", "fam-b")},
        decompose={"method": "llm", "model": "decomposer"},
        adjudicate={"judges": ["judge-b", "deterministic"], "batch_claims": True, "triage": True},
    )
    run_dir = _run(config, tmp_path)
    _check_run("scripted", run_dir)
    # rejudge its claims with the deterministic judge alone
    result = cli_inproc("rejudge", str(run_dir), "--judge", "deterministic", "--runs-dir", str(tmp_path / "runs"), "--json")
    assert result.returncode == 0, result.stderr
    rejudged = Path(json.loads(result.stdout)["run_dir"])
    _check_run("rejudged", rejudged, {str(run_dir): "<old_run_dir>"})


def test_a_panel_of_three_one_claim_per_call_with_agreement_and_compare(scripted_server, tmp_path):
    rule_b = lambda t: "unsupported" if "5" in t or "2019" in t else "supported"  # noqa: E731
    rule_c = lambda t: "contradicted" if "2,000" in t or "5 דקות" in t else "partially_supported" if "10" in t else "supported"  # noqa: E731

    def label(cid, req):
        return (rule_b if req["model"].endswith("judge-b") else rule_c)(claim_text(req, cid))

    server = scripted_server(pipeline_model(label))
    config = _config(
        tmp_path, "panel", answers={"path": str(BUNDLED_ANSWERS)},
        models={"judge-b": _model(server, "judge-b", "fam-b"), "judge-c": _model(server, "judge-c", "fam-c")},
        decompose={"method": "sentences"},
        adjudicate={"judges": ["judge-b", "judge-c", "deterministic"], "batch_claims": False, "triage": False},
    )
    run_dir = _run(config, tmp_path)
    _check_run("panel", run_dir)
    agreement = cli_inproc("agreement", str(run_dir), "--out", str(tmp_path / "agreement.json"), "--json")
    assert agreement.returncode == 0, agreement.stderr
    _check("panel", "agreement.json", _json_text(tmp_path / "agreement.json", {str(run_dir): "<run_dir>"}))
    baseline = _run(ROOT / "configs" / "deterministic.yaml", tmp_path)
    compared = cli_inproc("compare", str(baseline), str(run_dir), "--gate", "faithfulness:0.05", "--gate", "accuracy:0.5", "--json")
    assert compared.returncode in (0, 1), compared.stderr
    out = tmp_path / "compare.json"
    out.write_text(compared.stdout, encoding="utf-8")
    _check("panel", "compare.json", _json_text(out, {str(run_dir): "<run_b>", str(baseline): "<run_a>"}))


def test_generated_answers_and_a_judge_that_fails(scripted_server, tmp_path):
    def script(request, n):
        if "judge-b" in request["model"]:
            return Reply(status=500)  # every call of this judge fails: judge_error, the run finishes
        return pipeline_model(lambda cid, req: "partially_supported", answer="הקו יפעל כל 10 דקות. הוא נפתח ב-2019.")(request, n)

    server = scripted_server(script)
    config = _config(
        tmp_path, "generated",
        models={"writer": _model(server, "writer", "fam-w"), "judge-b": _model(server, "judge-b", "fam-b"), "judge-c": _model(server, "judge-c", "fam-c")},
        generate={"models": ["writer"]}, decompose={"method": "sentences"},
        adjudicate={"judges": ["judge-b", "judge-c"], "triage": True},
    )
    _check_run("generated", _run(config, tmp_path, code=3))  # judge-b failed for every claim: written, exit 3
