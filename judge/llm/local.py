"""The embedded local provider: llama.cpp in-process, registered with litellm as ``local/<name>``.

One model instance per process behind a lock (llama.cpp is not re-entrant); decoding is constrained by the
JSON schema the caller asks for (instructor's json_schema mode, or the tool's parameters), so the output
always parses. Needs the ``local`` extra; without it a clear error says how to install it or what to use
instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
import time
import uuid
from typing import Any

from judge.llm.errors import LocalModelUnavailable
from judge.llm.weights import EMBEDDED, INSTALL_HINT, model_path

_LOCK = threading.Lock()
_MODELS: dict[str, Any] = {}
_registered = False
CONTEXT_TOKENS = 8192


def load_llama(name: str):
    """The process's one llama.cpp instance of ``local/<name>`` (loaded on first use)."""
    with _LOCK:
        if name not in _MODELS:
            try:
                from llama_cpp import Llama
            except ImportError:
                raise LocalModelUnavailable(INSTALL_HINT) from None
            path = model_path(name)
            with _quiet_stderr():  # llama.cpp prints load notes from C even with verbose=False
                _MODELS[name] = Llama(model_path=str(path), n_ctx=CONTEXT_TOKENS, n_threads=None, seed=0, verbose=False)
        return _MODELS[name]


@contextlib.contextmanager
def _quiet_stderr():
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, ValueError, OSError):
        yield
        return
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), fd)
            yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


def _schema_and_tool(optional_params: dict) -> tuple[dict | None, str | None]:
    tools = optional_params.get("tools") or []
    if tools:
        fn = tools[0].get("function", {})
        return fn.get("parameters"), fn.get("name")
    fmt = optional_params.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("schema"), None
    if fmt.get("type") == "json_object":
        return fmt.get("schema") or {}, None
    return None, None


def grammar_friendly(schema):
    """The schema without string length bounds, which llama.cpp's grammar compiler expands into one rule per
    character (a maxLength of a few thousand exceeds its limits). Lengths are still enforced: instructor
    validates the answer against the full model and re-asks."""
    if isinstance(schema, dict):
        return {k: grammar_friendly(v) for k, v in schema.items() if k not in ("maxLength", "minLength")}
    if isinstance(schema, list):
        return [grammar_friendly(v) for v in schema]
    return schema


def complete(name: str, messages: list[dict], optional_params: dict) -> dict:
    """One chat completion as an OpenAI-style dict (tool call when the request offered a tool)."""
    if name not in EMBEDDED:
        raise LocalModelUnavailable(f"unknown embedded model local/{name}; known: {', '.join('local/' + n for n in EMBEDDED)}")
    llm = load_llama(name)
    schema, tool = _schema_and_tool(optional_params)
    kwargs: dict[str, Any] = dict(
        messages=[{"role": m["role"], "content": m.get("content") or ""} for m in messages],
        temperature=optional_params.get("temperature", 0.0),
        max_tokens=optional_params.get("max_tokens") or 512,
        seed=optional_params.get("seed", 0),
    )
    if schema is not None:
        kwargs["response_format"] = {"type": "json_object", "schema": grammar_friendly(schema)}
    with _LOCK:
        out = llm.create_chat_completion(**kwargs)
    text = out["choices"][0]["message"].get("content") or ""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    finish = out["choices"][0].get("finish_reason") or "stop"
    if tool:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": f"call_{uuid.uuid4().hex[:8]}", "type": "function", "function": {"name": tool, "arguments": text}}],
        }
        finish = "tool_calls" if finish == "stop" else finish
    usage = out.get("usage") or {}
    return {
        "id": out.get("id", f"local-{uuid.uuid4().hex[:8]}"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": f"local/{name}",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": usage.get("prompt_tokens", 0),
            "completion_tokens": usage.get("completion_tokens", 0),
            "total_tokens": usage.get("total_tokens", 0),
        },
    }


def ensure_registered() -> None:
    """Register the ``local`` provider with litellm (once per process)."""
    global _registered
    if _registered:
        return
    from judge.llm.litellm_setup import litellm

    lm = litellm()

    class LocalChat(lm.CustomLLM):
        def completion(self, model: str, messages: list, *args: Any, optional_params: dict | None = None, **kwargs: Any):
            name = model.split("/", 1)[1] if model.startswith("local/") else model
            return lm.ModelResponse(**complete(name, messages, optional_params or {}))

        async def acompletion(self, model: str, messages: list, *args: Any, optional_params: dict | None = None, **kwargs: Any):
            return await asyncio.to_thread(self.completion, model, messages, optional_params=optional_params)

    handler = LocalChat()
    lm.custom_provider_map = [p for p in lm.custom_provider_map if p.get("provider") != "local"] + [
        {"provider": "local", "custom_handler": handler}
    ]
    _registered = True
