"""Pre-flight: every model a run needs is checked before the first record, one plain line per problem."""

from __future__ import annotations

import socket

from judge.llm.config import ModelConfig
from judge.llm.preflight import check_model, preflight


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    return port


def test_missing_key_named_by_its_variable(monkeypatch):
    monkeypatch.delenv("JUDGE_TEST_NO_SUCH_KEY", raising=False)
    cfg = ModelConfig(model="anthropic/claude-3-5-haiku-latest", name="claude", api_key_env="JUDGE_TEST_NO_SUCH_KEY")
    lines = preflight([cfg])
    assert lines == ["model claude (anthropic/claude-3-5-haiku-latest): environment variable JUDGE_TEST_NO_SUCH_KEY (its api_key_env) is not set"]
    monkeypatch.setenv("JUDGE_TEST_NO_SUCH_KEY", "sk-test")
    assert preflight([cfg]) == []


def test_hosted_model_without_api_key_env_uses_providers_variables(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    status = check_model(ModelConfig(model="openai/gpt-4o-mini"))
    assert not status.usable and "OPENAI_API_KEY" in status.problem
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert check_model(ModelConfig(model="openai/gpt-4o-mini")).usable


def test_unreachable_server_refused_and_reachable_one_passes(scripted_server):
    down = ModelConfig(model="openai/scripted", name="down", api_base=f"http://127.0.0.1:{_closed_port()}/v1")
    (line,) = preflight([down])
    assert line.startswith("model down (openai/scripted): server http://127.0.0.1:") and "not reachable" in line
    server = scripted_server()
    up = ModelConfig(model="openai/scripted", name="up", api_base=server.base_url)
    assert preflight([up]) == []


def test_unknown_embedded_model_and_each_model_once():
    bad = ModelConfig(model="local/no-such-model", name="x")
    lines = preflight([bad, bad.model_copy(update={"name": "y"})])
    assert len(lines) == 1 and "unknown embedded model local/no-such-model" in lines[0]
