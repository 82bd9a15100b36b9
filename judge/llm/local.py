"""The embedded local provider: llama.cpp in a child process, registered with litellm as ``local/<name>``.

llama.cpp is native code, and a build that does not fit the CPU dies with SIGILL, so each embedded model runs
in its own long-lived child (judge/llm/local_worker.py): a crash is an error for that call
(:class:`LocalModelCrashed`), and the next call starts a fresh child. One call at a time per model (llama.cpp
is not re-entrant), decoding under a grammar (judge/llm/grammar.py). Needs the ``local`` extra.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from judge.llm.errors import (
    LLMError,
    LocalModelCrashed,
    LocalModelTimeout,
    LocalModelUnavailable,
)
from judge.llm.activity import doing, task_word
from judge.llm.grammar import EMBEDDED_RATIONALE_CHARS
from judge.llm.local_worker import runtime
from judge.llm.weights import EMBEDDED, INSTALL_HINT, PORTABLE_REBUILD, model_path

CRASH_TEST_ENV = "JUDGE_LOCAL_CRASH_TEST"  # "SIGILL" or "qwen2.5-0.5b:SIGILL": the child kills itself (tests)
# A double quote beside a Hebrew letter is a gershayim (ש"ח, ד"ר) or a quotation mark (אמר כי "הקו ... השיא").
# An embedded model writes its reply under a JSON grammar, where an unescaped " can only end the string: Gemma
# copying ש"ח ended its answer at ש, and one opening a Hebrew quotation ended it at "the mayor said that". In
# the data it reads (user messages) such a quote is the gershayim's own character, U+05F4, which JSON takes as
# it is; matching folds every double quote mark (judge.text.normalize.DOUBLE_QUOTES), so spans stay exact.
# Instructions (system), its own earlier JSON (assistant) and an attribute's quotes (id="...") are left alone.
_HEBREW_QUOTE = re.compile('(?<=[\u05d0-\u05ea])"(?!>)|(?<!=)"(?=[\u05d0-\u05ea])')
# Part of an embedded model's cache key (judge.llm.port): answers cached before the rule above (cut at ש) or
# before EMBEDDED_RATIONALE_CHARS changed are not served as this decoding's.
DECODING = f"hebrew-quotes-1;rationale-{EMBEDDED_RATIONALE_CHARS}"


def model_view(message: dict) -> dict:
    """A message as an embedded model reads it: in data (a user message), a " beside a Hebrew letter given the
    gershayim's own character."""
    content = message.get("content") or ""
    return {"role": message["role"], "content": _HEBREW_QUOTE.sub("\u05f4", content) if message["role"] == "user" else content}
_registered = False


class _Child:
    """One embedded model's worker process; restarted on the next call after it died."""

    def __init__(self, name: str):
        self.name = name
        self.lock = threading.Lock()
        self.proc: subprocess.Popen | None = None
        self.stderr = None

    def _start(self) -> subprocess.Popen:
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[2])  # the judge that spawned it, checkout or wheel
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        # llama.cpp's OpenMP threads spin while they wait: on a busy machine two spinning threads on two cores
        # took 578 s for a call one thread did in 75 s (load average 8-10); waiting passively, two took 69 s
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        if self.stderr is not None:
            self.stderr.close()  # the last child's
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the child; read after a crash)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "judge.llm.local_worker", self.name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=env,
            text=True,
            encoding="utf-8",
            start_new_session=True,  # a Ctrl-C in the terminal is the parent's to handle
        )
        return self.proc

    def request(self, payload: dict, timeout: float | None = None) -> dict:
        """The child's reply; a child that takes longer than ``timeout`` is killed (it would go on using
        the CPU for an answer nobody waits for) and restarted on the next call."""
        with self.lock:
            proc = self.proc if self.proc is not None and self.proc.poll() is None else self._start()
            try:
                proc.stdin.write(json.dumps(payload) + "\n")
                proc.stdin.flush()
                ready, _, _ = select.select([proc.stdout], [], [], timeout)
                if not ready:
                    proc.kill()
                    proc.wait()
                    self.proc = None
                    raise LocalModelTimeout(f"the embedded model local/{self.name} took longer than {timeout:g} s (its timeout); stopped")
                line = proc.stdout.readline()
            except (BrokenPipeError, OSError):
                line = ""
            if line:
                return json.loads(line)
            raise self._crashed(proc)

    def _crashed(self, proc: subprocess.Popen) -> LocalModelCrashed:
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        self.proc = None
        if code < 0:
            try:
                how = signal.Signals(-code).name
            except ValueError:
                how = f"signal {-code}"
            return LocalModelCrashed(f"the embedded model local/{self.name} crashed ({how}): {PORTABLE_REBUILD}")
        tail = ""
        if self.stderr is not None:
            self.stderr.seek(0)
            lines = self.stderr.read().decode("utf-8", "replace").strip().splitlines()
            tail = f": {lines[-1][:300]}" if lines else ""
        return LocalModelCrashed(f"the embedded model local/{self.name} exited with code {code}{tail}")

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()  # the worker ends at EOF
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc = None


_CHILDREN: dict[str, _Child] = {}
_CHILDREN_LOCK = threading.Lock()


def _child(name: str) -> _Child:
    with _CHILDREN_LOCK:
        if name not in _CHILDREN:
            _CHILDREN[name] = _Child(name)
        return _CHILDREN[name]


@atexit.register
def close_all() -> None:
    """Stop every worker (they also stop on their own when this process dies: their stdin closes)."""
    for child in list(_CHILDREN.values()):
        child.close()


def _crash_requested(name: str) -> str | None:
    value = os.environ.get(CRASH_TEST_ENV, "")
    target, _, sig = value.rpartition(":")
    return sig if value and target in ("", name) else None


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


def complete(name: str, messages: list[dict], optional_params: dict, timeout: float | None = None) -> dict:
    """One chat completion as an OpenAI-style dict (tool call when the request offered a tool)."""
    if name not in EMBEDDED:
        raise LocalModelUnavailable(f"unknown embedded model local/{name}; known: {', '.join('local/' + n for n in EMBEDDED)}")
    schema, tool = _schema_and_tool(optional_params)
    kwargs: dict[str, Any] = dict(
        messages=[model_view(m) for m in messages],
        temperature=optional_params.get("temperature", 0.0),
        max_tokens=optional_params.get("max_tokens") or 512,
        seed=optional_params.get("seed", 0),
    )
    crash = _crash_requested(name)
    if crash is None:
        if runtime() is None:
            raise LocalModelUnavailable(INSTALL_HINT)
        model_path(name)  # assembled and verified here, so a refusal is a plain error, not a child's
    child = _child(name)
    loading = child.proc is None or child.proc.poll() is not None
    # The child decodes under the schema (judge/llm/grammar.py: every array bounded, no silent fall-back to
    # "any JSON"); llama.cpp's binding is imported only there.
    word = task_word("judging" if schema else "writing")  # the stage's word: "answering" while the answerer answers
    what = f"local/{name}: loading, then {word}" if loading else f"local/{name}: {word}"
    with doing(what):
        reply = child.request({"kwargs": kwargs, "schema": schema, "crash": crash}, timeout)
    if "error" in reply:
        raise (LocalModelUnavailable if reply.get("unavailable") else LLMError)(reply["error"])
    out = reply["ok"]
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
        def completion(self, model: str, messages: list, *args: Any, optional_params: dict | None = None, timeout=None, **kwargs: Any):
            name = model.split("/", 1)[1] if model.startswith("local/") else model
            seconds = timeout if isinstance(timeout, (int, float)) else None
            return lm.ModelResponse(**complete(name, messages, optional_params or {}, seconds))

        async def acompletion(self, model: str, messages: list, *args: Any, optional_params: dict | None = None, timeout=None, **kwargs: Any):
            return await asyncio.to_thread(self.completion, model, messages, optional_params=optional_params, timeout=timeout)

    handler = LocalChat()
    lm.custom_provider_map = [p for p in lm.custom_provider_map if p.get("provider") != "local"] + [
        {"provider": "local", "custom_handler": handler}
    ]
    _registered = True
