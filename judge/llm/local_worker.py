"""The child process that runs llama.cpp for one embedded model (``python -m judge.llm.local_worker NAME``).

llama.cpp is native code: on a CPU its build does not fit it dies with SIGILL, and a bug can SIGSEGV. Run
here, such a crash kills only this process; the parent (judge/llm/local.py) turns it into an error for the
call and starts a fresh child for the next one. Protocol: one JSON request per line on stdin, one JSON reply
per line on the process's original stdout (fd 1 is pointed at stderr, so nothing llama.cpp prints can
corrupt a reply). The model loads on the first request and stays loaded for the child's life.
"""

from __future__ import annotations

import json
import os
import signal
import sys


def _load(name: str):
    from llama_cpp import Llama

    from judge.env import number
    from judge.llm.weights import model_path

    threads = int(number("JUDGE_LOCAL_THREADS"))  # every usable CPU unless set (llama-cpp-python's default: half)
    return Llama(model_path=str(model_path(name)), n_ctx=int(number("JUDGE_LOCAL_CONTEXT")), n_threads=threads,
                 n_threads_batch=threads, seed=0, verbose=False)


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
            try:
                import llama_cpp  # noqa: F401
            except ImportError:
                return {"error": INSTALL_HINT, "unavailable": True}
            loaded[name] = _load(name)
        kwargs = dict(request["kwargs"])
        if request.get("schema") is not None:
            kwargs["grammar"] = _grammar(request["schema"])
        return {"ok": loaded[name].create_chat_completion(**kwargs)}
    except LocalModelUnavailable as e:  # weights missing or refused
        return {"error": str(e), "unavailable": True}
    except Exception as e:  # a bad request: an error for this call only
        return {"error": f"{type(e).__name__}: {e}"}


def _die_with_parent(every: float = 0.5) -> None:
    """A killed run (Ctrl-C, a timeout's SIGKILL) must not leave this child generating for minutes: stdin's
    end is read only between requests. A watchdog thread sees the parent process go (this child is handed to
    another parent) and ends the process. Not PR_SET_PDEATHSIG: that fires when the parent *thread* ends, and
    the port starts children from a pool thread that may end while the run goes on."""
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
