"""The port's errors carry no key: a provider that echoes one in its error is masked in the message too."""

from __future__ import annotations

from judge import redact
from judge.llm.errors import LLMCallError


def test_a_call_error_never_echoes_a_key_in_its_message(monkeypatch):
    monkeypatch.setattr(redact, "_watched", set())
    monkeypatch.setattr(redact, "_values", set())
    key = "Zq7x9Lm2Vb8Nc4Rt6Yw1"
    redact.watch_value(key)
    error = LLMCallError("judge-a", f"401 Unauthorized: invalid key {key}", 1)
    assert key not in error.cause and key not in str(error)
    assert str(error).startswith("judge-a: 401 Unauthorized: invalid key ") and str(error).endswith("(after 1 attempt)")
