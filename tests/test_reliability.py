"""Reliability: a short fault soak (the full one is bench/soak.py), SIGKILLs and resumes, hostile inputs,
secrets, and the cache when it cannot be used."""

import json
import os
import threading
from pathlib import Path

import pytest

from judge.verdicts import LABELS
from judge.testing.soak import PRICE, comparable, faulty_judge, kill_resume, make_dataset, restart_when, run_cli as soak_run, write_config
from tests.conftest import BUNDLED_SAMPLE, ROOT, cli_inproc

BUNDLED_ANSWERS = ROOT / "judge" / "data" / "he_sample_answers.jsonl"


@pytest.mark.slow
def test_short_fault_soak_loses_nothing_and_accounts_for_every_token(scripted_server, tmp_path):
    server = scripted_server(faulty_judge(seed=11), keep_bodies=False)
    data, answers = make_dataset(BUNDLED_SAMPLE, BUNDLED_ANSWERS, tmp_path, answers=60)
    config = write_config(tmp_path, data, answers, server, tmp_path / "cache")
    runs = tmp_path / "runs"
    done = threading.Event()
    restart = restart_when(server, runs, 15, done)
    result, _ = soak_run(config, runs)
    done.set()
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout)
    assert 15 <= restart.get("restarted_at", 0) < 30, "the server was restarted in the middle of the run"
    lines = Path(summary["run_dir"], "results.jsonl").read_text().splitlines()
    ids = [json.loads(line)["record_id"] for line in lines]
    assert len(ids) == len(set(ids)) == 30  # every record exactly once
    claims = [c for line in lines for a in json.loads(line)["answers"] for c in a["claims"]]
    assert claims
    for c in claims:
        assert c["label"] in LABELS or (c["label"] == "judge_error" and c["verdicts"][0]["error"])
    faults = server.stats.statuses
    assert faults.get(429, 0) + faults.get(500, 0) + faults.get(-1, 0) > 0  # faults were really served
    usage = summary["usage"]
    assert usage["prompt_tokens"] == server.stats.prompt_tokens and usage["completion_tokens"] == server.stats.completion_tokens
    expected_cost = (server.stats.prompt_tokens * PRICE["input_per_million"] + server.stats.completion_tokens * PRICE["output_per_million"]) / 1e6
    assert usage["cost_usd"] == pytest.approx(expected_cost)
    requests, prompt_tokens = server.stats.requests, server.stats.prompt_tokens
    again, _ = soak_run(config, runs)
    assert again.returncode == 0
    rerun = json.loads(again.stdout)["usage"]
    # A rerun of a finished config is answered from the cache, except the calls that ended in an error (errors
    # are never cached: under CPU load a call can exhaust its retries on timeouts). Those, and only those, are
    # asked again, and what they spend is accounted for like any call.
    assert rerun["calls"] == usage["errors"]
    assert rerun["cache_hits"] == usage["calls"] + usage["cache_hits"] - usage["errors"]
    assert server.stats.prompt_tokens - prompt_tokens == rerun["prompt_tokens"]
    if usage["errors"] == 0:
        assert server.stats.requests == requests  # wholly from the cache


@pytest.mark.slow
def test_three_sigkills_and_resumes_give_the_uninterrupted_results(scripted_server, tmp_path):
    # The two runs must end with the same verdicts, so no call may run out of retries in one and not the other:
    # a 4 s timeout (hangs last 6 s) that CPU load on a shared machine cannot exhaust 8 times over, where 1 s could.
    server = scripted_server(faulty_judge(seed=5, timeout=4.0), keep_bodies=False)
    data, answers = make_dataset(BUNDLED_SAMPLE, BUNDLED_ANSWERS, tmp_path, answers=40)
    straight = write_config(tmp_path, data, answers, server, tmp_path / "cache-a", name="straight", timeout=4.0)
    killed = write_config(tmp_path, data, answers, server, tmp_path / "cache-b", name="killed", timeout=4.0)
    result, _ = soak_run(straight, tmp_path / "runs-a")
    assert result.returncode == 0, result.stderr[-2000:]
    reference = Path(json.loads(result.stdout)["run_dir"])
    served = server.stats.prompt_tokens
    run_dir = kill_resume(killed, tmp_path / "runs-b", kill_after_lines=[3, 8, 14])
    assert comparable(run_dir) == comparable(reference)
    ids = [json.loads(line)["record_id"] for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 20
    # issue 17.9: the totals are what calls.jsonl holds, the calls of records lost to a kill included
    calls = [json.loads(line) for line in (run_dir / "calls.jsonl").read_text().splitlines()]
    spent = [c for c in calls if not c["cached"]]
    usage = json.loads((run_dir / "summary.json").read_text())["usage"]
    assert usage["calls"] == len(spent) and usage["cache_hits"] == len(calls) - len(spent)
    assert usage["prompt_tokens"] == sum(c["prompt_tokens"] for c in spent)
    assert usage["completion_tokens"] == sum(c["completion_tokens"] for c in spent)
    assert usage["cost_usd"] == pytest.approx(sum(c["cost_usd"] for c in spent))
    in_results = sum(json.loads(line)["usage"]["prompt_tokens"] for line in (run_dir / "results.jsonl").read_text().splitlines())
    assert in_results <= usage["prompt_tokens"] <= server.stats.prompt_tokens - served  # only calls in flight at a kill go unrecorded


# --- hostile and broken inputs -------------------------------------------------------------------------------


def _records(**changes):
    records = json.loads(BUNDLED_SAMPLE.read_text(encoding="utf-8"))
    records[0].update(changes)
    return records


def _run_deterministic(tmp_path, records=None, answers=None, cache=None):
    data = tmp_path / "data.json"
    data.write_text(json.dumps(records or _records(), ensure_ascii=False), encoding="utf-8")
    ans = tmp_path / "answers.jsonl"
    ans.write_text(answers if answers is not None else BUNDLED_ANSWERS.read_text(encoding="utf-8"), encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text(f"name: hostile\ndataset: {{path: {data}}}\nanswers: {{path: {ans}}}\ndecompose: {{method: sentences}}\n"
                      f"adjudicate: {{judges: [deterministic]}}\ncache_dir: {cache or tmp_path / 'cache'}\n")
    return cli_inproc("run", str(config), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress")


@pytest.mark.slow
def test_a_two_million_character_source(tmp_path):
    from judge.search import Index

    records = _records()
    filler = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 35_100
    records[0]["source_text"] = filler + records[0]["source_text"]
    shift = len(filler)
    for c in records[0]["claims"]:
        for a in c["attribution"]:
            a["start_char"] += shift
            a["end_char"] += shift
            a["sentence_id"] = None
    assert len(records[0]["source_text"]) > 2_000_000
    result = _run_deterministic(tmp_path, records)
    assert result.returncode == 0, result.stderr[-2000:]
    index = Index(records[0]["source_text"])
    best = index.search(records[0]["claims"][0]["text"])[0]
    assert records[0]["source_text"][best.start_char : best.end_char] == best.excerpt and best.start_char >= shift


def test_nul_bytes_and_mixed_newlines_keep_offsets_exact(tmp_path):
    from judge.search import search

    source = "First line.\r\nSecond line with a NUL\x00 inside.\rThird line,\n  and the claim is here: 42 apples."
    for cand in search("the claim is here: 42 apples", source) + search("NUL inside", source):
        assert source[cand.start_char : cand.end_char] == cand.excerpt
    records = _records(source_text=source, claims=[], reference_answer="", human_ratings=[])
    answers = json.dumps({"record_id": records[0]["id"], "model": "m", "answer": "Second line with a NUL\x00 inside.\r\nThe claim: 42 apples."}) + "\n"
    result = _run_deterministic(tmp_path, records, answers)
    assert result.returncode == 0, result.stderr[-2000:]


def test_an_answer_with_no_claims(tmp_path):
    answers = "".join(json.dumps({"record_id": rid, "model": "m", "answer": text}) + "\n" for rid, text in (("he-pkg-001", ""), ("he-pkg-002", "   ")))
    result = _run_deterministic(tmp_path, answers=answers)
    assert result.returncode == 3 and "nothing was judged" in result.stderr, result.stderr[-2000:]  # written, but no pass
    summary = json.loads(result.stdout)
    assert summary["overall"]["claims"] == 0 and summary["answers"] == 2 and summary["overall"]["faithfulness"] is None


def test_duplicate_record_ids_are_refused(tmp_path):
    records = json.loads(BUNDLED_SAMPLE.read_text(encoding="utf-8"))
    records[2]["id"] = records[0]["id"]
    result = _run_deterministic(tmp_path, records)
    assert result.returncode == 2 and "duplicates are refused" in result.stderr and records[0]["id"] in result.stderr


def test_a_judge_of_unknown_family_is_refused_before_any_call(scripted_server, tmp_path):
    server = scripted_server()
    data = tmp_path / "c.yaml"
    data.write_text(f"name: x\ndataset: {{path: {BUNDLED_SAMPLE}}}\nanswers: {{path: {BUNDLED_ANSWERS}}}\n"
                    f"models: {{mystery: {{model: hosted_vllm/mystery-model-9, api_base: '{server.base_url}'}}}}\n"
                    f"adjudicate: {{judges: [mystery]}}\ncache_dir: {tmp_path / 'cache'}\n")
    result = cli_inproc("run", str(data), "--runs-dir", str(tmp_path / "runs"))
    assert result.returncode == 2 and "cannot tell the model family" in result.stderr and "family:" in result.stderr
    assert server.stats.requests == 0 and "Traceback" not in result.stderr


def test_a_run_directory_of_another_version_is_refused(tmp_path):
    result = _run_deterministic(tmp_path)
    run_dir = Path(json.loads(result.stdout)["run_dir"])
    manifest = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps({**manifest, "schema_version": 0}))
    for cmd in (["score", str(run_dir)], ["compare", str(run_dir), str(run_dir)]):
        out = cli_inproc(*cmd)
        assert out.returncode == 2 and "another version" in out.stderr and "Traceback" not in out.stderr
    os.remove(run_dir / "run.json")
    out = cli_inproc("score", str(run_dir))
    assert out.returncode == 2 and "not a run directory" in out.stderr


def test_a_corrupt_or_read_only_cache_runs_on_without_it(tmp_path):
    from judge.llm import CallCache

    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "cache.db").write_bytes(b"this is not a sqlite database" * 100)
    cache = CallCache(corrupt)
    assert not cache.enabled and "cannot" in cache.disabled_reason
    assert cache.get("k") is None  # runs on: a miss, no crash
    if os.geteuid() != 0:  # root ignores permissions; the not-a-directory case covers it
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        assert not CallCache(ro / "c").enabled
    result = _run_deterministic(tmp_path, cache=corrupt)
    assert result.returncode == 0 and json.loads(result.stdout)["run"]["cache"]["enabled"] is False


@pytest.mark.slow
def test_canary_keys_never_reach_runs_logs_or_reports(scripted_server, tmp_path, monkeypatch):
    from judge.testing.scripts import pipeline_model

    canaries = {"JUDGE_CANARY_A": "sk-canaryAAAA" + "1" * 24, "ANTHROPIC_API_KEY": "sk-ant-canary-" + "2" * 24, "OPENAI_API_KEY": "sk-canaryOOO" + "3" * 24}
    for k, v in canaries.items():
        monkeypatch.setenv(k, v)
    server = scripted_server(pipeline_model())
    config = tmp_path / "c.yaml"
    config.write_text(
        f"name: canary\ndataset: {{path: {BUNDLED_SAMPLE}}}\nanswers: {{path: {BUNDLED_ANSWERS}}}\n"
        f"models: {{j: {{model: openai/j, api_base: '{server.base_url}', family: fam-j, api_key_env: JUDGE_CANARY_A}}}}\n"
        f"decompose: {{method: sentences}}\nadjudicate: {{judges: [j, deterministic], triage: false}}\ncache_dir: {tmp_path / 'cache'}\ncontrols: {{gate: false}}\n"
    )
    env = {**os.environ, **canaries}
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "judge.cli", "run", str(config), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress"],
                            capture_output=True, text=True, cwd=ROOT, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert server.stats.requests > 0
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "report.html" for p in written) and any(p.name == "run.log" for p in written)
    for p in written:
        blob = p.read_bytes()
        for v in canaries.values():
            assert v.encode() not in blob, f"{v} leaked into {p}"
        if p.suffix == ".json":  # masking never corrupts a file: a key's run of 1s also matches 0.3611111111
            json.loads(blob)
        elif p.suffix == ".jsonl":
            [json.loads(line) for line in blob.splitlines()]
    json.loads(result.stdout)  # --json stays JSON
    for v in canaries.values():
        assert v not in result.stdout and v not in result.stderr
