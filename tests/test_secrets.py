"""Issue 28.3: a configured key is masked in every form it can come back in (judge/redact.py): any 8+
character fragment of it, of its reversed form, of its hex form and of its base64 forms, wherever a provider
puts it (an error, a successful answer, a rationale, a decomposed claim) and wherever judge would carry it
(results, calls, summary, reports, run.log, the cache, the terminal, the next provider's prompt). The oracle
below builds the forms itself, independently of the code under test."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judge.testing.scripts import pipeline_model
from judge.testing.server import Reply, schema_of
from tests.conftest import BUNDLED_SAMPLE, ROOT

ANSWERS = ROOT / "judge" / "data" / "he_sample_answers.jsonl"
KEYS = {"JUDGE_SECRET_JUDGE": "hunter2-canary-Zq7Lm3Wx9Pb4Rt6Yv8Nc2Kd5", "JUDGE_SECRET_DECOMPOSER": "sk-ant-api03-canary" + "Hs8Gf2Jk" * 3}


@pytest.fixture
def no_other_secrets(monkeypatch):
    """Only the key a test configures: a secret-named variable or a watched name another test left in this
    process would mask fragments of its own in the text under test."""
    from judge import redact

    monkeypatch.setattr(redact, "_watched", set())
    monkeypatch.setattr(redact, "_values", set())


def _forms(key: str) -> list[str]:
    raw = key.encode()
    out = [key, key[::-1], raw.hex(), raw.hex().upper()]
    for skip in range(3):
        out += [base64.b64encode(raw[skip:]).decode().rstrip("="), base64.urlsafe_b64encode(raw[skip:]).decode().rstrip("=")]
    return out


def echoes(key: str) -> list[str]:
    """What echoing providers were seen to send back: the first 16 and last 4 characters, base64, reversed, hex."""
    return [f"{key[:16]}...{key[-4:]}", base64.b64encode(key.encode()).decode(), key[::-1], key.encode().hex(),
            base64.b64encode(key[3:27].encode()).decode(), key[5:14]]


def leaks(text: str, key: str) -> list[str]:
    """Every 8-character window of any form of ``key`` found in ``text``."""
    return sorted({f[i : i + 8] for f in _forms(key) for i in range(len(f) - 7) if f[i : i + 8] in text})


def _files_text(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_bytes().decode("utf-8", "replace") for p in folder.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_every_form_of_an_echoed_key_is_masked_in_run_files_cache_terminal_and_the_next_prompt(scripted_server, tmp_path):
    """The decomposer's provider echoes its key in the claims it returns (every form, in each claim); the
    judge's provider echoes its key in every rationale. Nothing of either key, in any form, reaches the run
    directory, the cache, the terminal, or the judge's provider (which sees the decomposer's claims)."""
    plain = pipeline_model()
    judge_key, decomposer_key = KEYS["JUDGE_SECRET_JUDGE"], KEYS["JUDGE_SECRET_DECOMPOSER"]

    def decomposer(request, n):
        reply = plain(request, n)
        if reply.body and "claims" in reply.body:
            for i, claim in enumerate(reply.body["claims"]):
                claim["text"] = f"{claim['text']} {echoes(decomposer_key)[i % 6]}"
        return reply

    def judge(request, n):
        reply = plain(request, n)
        for verdict in (reply.body or {}).get("verdicts", []):
            verdict["rationale"] = "your key: " + " ".join(echoes(judge_key))
        return reply

    d_server, j_server = scripted_server(decomposer), scripted_server(judge)
    config = tmp_path / "c.yaml"
    config.write_text(
        f"name: echo\ndataset: {{path: {BUNDLED_SAMPLE}}}\nanswers: {{path: {ANSWERS}}}\nlimit: 2\n"
        f"models:\n  j: {{model: openai/j, family: fam-j, api_key_env: JUDGE_SECRET_JUDGE, api_base: '{j_server.base_url}'}}\n"
        f"  d: {{model: openai/d, family: fam-d, api_key_env: JUDGE_SECRET_DECOMPOSER, api_base: '{d_server.base_url}'}}\n"
        f"decompose: {{method: llm, model: d}}\nadjudicate: {{judges: [j], triage: false}}\ncontrols: {{enabled: false}}\n"
        f"max_error_rate: 1\ncache_dir: {tmp_path / 'cache'}\n"
    )
    result = subprocess.run([sys.executable, "-m", "judge.cli", "run", str(config), "--runs-dir", str(tmp_path / "runs"), "--no-progress"],
                            capture_output=True, text=True, cwd=ROOT, env={**os.environ, **KEYS}, timeout=300)
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert j_server.stats.requests > 0 and d_server.stats.requests > 0
    run_dir = next((tmp_path / "runs").iterdir())
    assert "[redacted]" in (run_dir / "results.jsonl").read_text()  # the echoes were really there, and masked
    judge_prompts = json.dumps(j_server.stats.bodies)
    places = {**{f"run/{k}": v for k, v in _files_text(run_dir).items()}, **{f"cache/{k}": v for k, v in _files_text(tmp_path / "cache").items()},
              "stdout": result.stdout, "stderr": result.stderr, "the judge's prompts": judge_prompts}
    for key in KEYS.values():
        for where, text in places.items():
            assert not leaks(text, key), (where, leaks(text, key))
    again = subprocess.run([sys.executable, "-m", "judge.cli", "run", str(config), "--runs-dir", str(tmp_path / "runs2"), "--no-progress", "--json"],
                           capture_output=True, text=True, cwd=ROOT, env={**os.environ, **KEYS}, timeout=300)
    for key in KEYS.values():  # a rerun from the cache: the cached answers were masked before they were stored
        assert not leaks(again.stdout + again.stderr, key)
        assert not any(leaks(t, key) for t in _files_text(tmp_path / "runs2").values())


def _ping_models(tmp_path: Path, base_url: str) -> Path:
    models = tmp_path / "models.yaml"
    models.write_text(f"models:\n  m: {{model: openai/m, family: fam-m, api_key_env: JUDGE_SECRET_JUDGE, api_base: '{base_url}', "
                      "max_attempts: 1, max_retry_seconds: 2, timeout: 5}\n")
    return models


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["answer", "error"])
def test_judge_ping_never_prints_an_echoed_key(scripted_server, tmp_path, mode):
    key = KEYS["JUDGE_SECRET_JUDGE"]

    def script(request, n):
        if mode == "error":
            return Reply(status=401, echo_key=True)
        assert schema_of(request) is not None
        return Reply(body={"label": "supported", "rationale": " ".join(echoes(key))})

    server = scripted_server(script)
    for as_json in ((), ("--json",)):
        result = subprocess.run([sys.executable, "-m", "judge.cli", "ping", str(_ping_models(tmp_path, server.base_url)), "m",
                                 "--cache-dir", str(tmp_path / "cache"), *as_json],
                                capture_output=True, text=True, cwd=ROOT, env={**os.environ, **KEYS}, timeout=120)
        assert result.returncode == (0 if mode == "answer" else 2), result.stderr
        assert not leaks(result.stdout + result.stderr, key), leaks(result.stdout + result.stderr, key)
    assert not any(leaks(t, key) for t in _files_text(tmp_path / "cache").values()) if (tmp_path / "cache").exists() else True


@pytest.mark.parametrize("entry", [
    "api_key: {key}", "apikey: {key}", "api_key_env: {key}", "token: {key}", "api_base: 'http://user:{key}@[::1/v1'",
    "price: {key}",
])
def test_errors_about_a_key_written_into_a_models_file_never_echo_it(tmp_path, entry):
    key = KEYS["JUDGE_SECRET_DECOMPOSER"]
    models = tmp_path / "models.yaml"
    models.write_text("models:\n  m: {model: openai/gpt-4o, " + entry.format(key=key) + "}\n")
    config = tmp_path / "run.yaml"
    config.write_text(f"dataset: {{path: {BUNDLED_SAMPLE}}}\nmodels_file: {models}\n")
    for args in (("doctor", "--models", models), ("families", "--config", models), ("ping", models, "m"), ("run", config)):
        result = subprocess.run([sys.executable, "-m", "judge.cli", *map(str, args)], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert result.returncode == 2 and "Traceback" not in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert not leaks(result.stdout + result.stderr, key), (args, result.stderr)  # not configured: no env to mask from


@settings(deadline=None, derandomize=True, max_examples=80)
@given(key=st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=8, max_size=60),
       start=st.integers(0, 60), length=st.integers(8, 60), form=st.integers(0, 9),
       before=st.text(max_size=20), after=st.text(max_size=20))
def test_property_any_fragment_of_any_form_is_masked(key, start, length, form, before, after):
    from judge.redact import redact_secrets

    forms = _forms(key)
    shape = forms[form % len(forms)]
    fragment = shape[start % max(1, len(shape) - 7):][:length]
    if len(fragment) < 8:
        return
    text = before + fragment + after
    from judge import redact

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(redact, "_watched", set())  # only this key: none another test left in this process
        mp.setattr(redact, "_values", set())
        mp.setenv("JUDGE_PROPERTY_API_KEY", key)
        redact.watch_env("JUDGE_PROPERTY_API_KEY")
        masked = redact_secrets(text)
        mp.delenv("JUDGE_PROPERTY_API_KEY")
        untouched = redact_secrets(text)
    assert fragment not in masked
    assert all(w in before or w in after for w in leaks(masked, key))  # what is left was the data's own
    assert untouched == text  # no key configured: data untouched


def test_json_files_are_masked_in_their_strings_never_their_numbers(no_other_secrets, monkeypatch):
    """A key with a run of one digit matches the digits of a number: masking there corrupted summary.json
    (0.36[redacted]). JSON is masked in its string values only, escapes decoded first."""
    from judge import redact
    from judge.redact import MASK, redact_json_text

    key = "sk-canary" + "1" * 24
    monkeypatch.setenv("JUDGE_NUMBERS_API_KEY", key)
    redact.watch_env("JUDGE_NUMBERS_API_KEY")
    doc = {"accuracy": 13 / 36, "ids": [11111111111], "echo": f"bad key {key}", "quoted": f'"{key[::-1]}" \\ \u00e9',
           key[3:20]: "a key as a key"}
    for text in (json.dumps(doc, ensure_ascii=False, indent=1), json.dumps(doc), json.dumps(doc, ensure_ascii=True)):
        masked = redact_json_text(text)
        back = json.loads(masked)
        assert back["accuracy"] == 13 / 36 and back["ids"] == [11111111111]
        assert key not in masked and key[::-1] not in masked and key[3:20] not in masked
        assert back["echo"].startswith("bad key ") and MASK in back["echo"] and MASK in back["quoted"]
    assert redact_json_text('{"a": 1}') == '{"a": 1}'


def test_a_run_config_is_masked_in_its_strings_never_its_numbers(no_other_secrets, monkeypatch, tmp_path):
    """The neighbour of the JSON case: config.yaml holds numbers too, and a masked one (max_cost_usd
    0.1111111111 beside a key of 1s) read back as text and failed the config of every later score or resume."""
    from judge.config import load_run_config
    from judge.runs.store import RunStore

    key = "sk-canary" + "1" * 24
    monkeypatch.setenv("JUDGE_NUMBERS_API_KEY", key)
    config = tmp_path / "c.yaml"
    config.write_text(f"name: n\ndataset: {{path: {BUNDLED_SAMPLE}}}\nmax_cost_usd: 0.1111111111\n"
                      f"models: {{m: {{model: openai/m, api_base: 'http://127.0.0.1:9/v1?k={key}', family: fam-m, api_key_env: JUDGE_NUMBERS_API_KEY}}}}\n", encoding="utf-8")
    store = RunStore.create(tmp_path / "runs", "n", load_run_config(config), {})
    written = (store.path / "config.yaml").read_text(encoding="utf-8")
    assert key not in written and "[redacted]" in written
    again = RunStore.open(store.path).config()
    assert again.max_cost_usd == 0.1111111111
