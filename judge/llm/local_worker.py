"""The child process that runs llama.cpp for one embedded model (``python -m judge.llm.local_worker NAME``), so
a native crash kills only it (judge/llm/local.py). One JSON request a line on stdin, one reply a line on the
original stdout (fd 1 points at stderr, so nothing llama.cpp prints can corrupt a reply).
"""

from __future__ import annotations

import json
import os
import signal
import sys


RUNTIMES = ("xllamacpp", "llama_cpp")  # preferred first: a prebuilt wheel (no compile), then the source build


def runtime() -> str | None:
    """The llama.cpp binding this machine has: ``xllamacpp`` (prebuilt) or ``llama_cpp`` (built from source,
    the fall-back); ``JUDGE_LOCAL_RUNTIME`` picks one where both are installed."""
    import importlib.util

    wanted = os.environ.get("JUDGE_LOCAL_RUNTIME", "").strip()
    names = (wanted,) if wanted in RUNTIMES else RUNTIMES
    return next((n for n in names if importlib.util.find_spec(n) is not None), None)


class _XLlama:
    """One model in xllamacpp's in-process llama.cpp server. The reply has the OpenAI chat shape, as
    llama-cpp-python's does; a response schema is decoded under the server's own JSON-schema sampler."""

    def __init__(self, path: str, context: int, threads: int):
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = path
        params.n_ctx = context
        params.n_parallel = 1
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.sampling.seed = 0
        self.server = xllamacpp.Server(params)

    def complete(self, kwargs: dict, schema: dict | None) -> dict:
        from judge.llm.grammar import grammar_schema

        body = dict(kwargs)
        if schema is not None:
            body["json_schema"] = grammar_schema(schema, lengths=True)  # one it cannot decode under: ValueError
        reply = self.server.handle_chat_completions(body)
        if isinstance(reply, dict) and "error" in reply and "choices" not in reply:
            raise ValueError(str(reply["error"])[:500])
        return reply


class _LlamaCpp:
    """One model in llama-cpp-python, decoded under our GBNF grammar (judge/llm/grammar.py)."""

    def __init__(self, path: str, context: int, threads: int):
        from llama_cpp import Llama

        self.llama = Llama(model_path=path, n_ctx=context, n_threads=threads, n_threads_batch=threads, seed=0, verbose=False)

    def complete(self, kwargs: dict, schema: dict | None) -> dict:
        if schema is not None:
            kwargs = {**kwargs, "grammar": _grammar(schema)}
        return self.llama.create_chat_completion(**kwargs)


def _load(name: str, which: str):
    from judge.env import number
    from judge.llm.weights import model_path

    threads = int(number("JUDGE_LOCAL_THREADS"))  # every usable CPU unless set (llama-cpp-python's default: half)
    backend = _XLlama if which == "xllamacpp" else _LlamaCpp
    return backend(str(model_path(name)), int(number("JUDGE_LOCAL_CONTEXT")), threads)


def _grammar(schema: dict):
    """The llama.cpp grammar for a response schema (judge/llm/grammar.py); a schema it cannot express is an
    error for the call, never a silent fall-back to "any JSON"."""
    from llama_cpp import LlamaGrammar

    from judge.llm.grammar import gbnf

    return LlamaGrammar.from_string(gbnf(schema), verbose=False)


def _reply(name: str, loaded: dict, request: dict) -> dict:
    from judge.llm.errors import LocalModelUnavailable
    from judge.llm.weights import INSTALL_HINT

    try:
        if name not in loaded:
            which = runtime()
            if which is None:
                return {"error": INSTALL_HINT, "unavailable": True}
            loaded[name] = _load(name, which)
        return {"ok": loaded[name].complete(dict(request["kwargs"]), request.get("schema"))}
    except LocalModelUnavailable as e:  # weights missing or refused
        return {"error": str(e), "unavailable": True}
    except Exception as e:  # a bad request: an error for this call only
        return {"error": f"{type(e).__name__}: {e}"}


def _die_with_parent(every: float = 0.5) -> None:
    """End this child when its parent goes (a killed run must not leave it generating; stdin's end is read only
    between requests). Not PR_SET_PDEATHSIG: it fires when the parent *thread* ends, and the port starts
    children from a pool thread."""
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()


def serve(name: str) -> None:
    _die_with_parent()
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    loaded: dict = {}
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("crash"):  # test hook: die the way a native crash would
            os.kill(os.getpid(), getattr(signal, request["crash"]))
        replies.write(json.dumps(_reply(name, loaded, request)) + "\n")
        replies.flush()


if __name__ == "__main__":
    serve(sys.argv[1])
