"""What the embedded models are doing now, for the progress line (on 2 cores a judge call takes a minute, and a
bar at 0/3 with no word looks hung): one slot per busy thread, read by ``current()``; nothing here prints.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_LOCK = threading.Lock()
_DOING: dict[int | tuple[str, int], str] = {}
_CALLS = itertools.count()
# What the caller of a model is doing ("answering", "splitting the answer into claims"; "judging" where none
# says): set by the stage around its call, read where the call is made (a context variable: asyncio tasks and
# asyncio.to_thread carry it to the thread that waits on the embedded model).
_TASK: ContextVar[str] = ContextVar("judge_task", default="")


@contextmanager
def task(word: str) -> Iterator[None]:
    """The stage's word for the model calls made inside the block (see ``task_word``)."""
    token = _TASK.set(word)
    try:
        yield
    finally:
        _TASK.reset(token)


def task_word(default: str = "") -> str:
    """The word the stage set for this call, or ``default``."""
    return _TASK.get() or default


@contextmanager
def calling(what: str) -> Iterator[None]:
    """Say ``what`` while one model call is in flight: one slot per call, so concurrent calls on one thread
    (asyncio) each have theirs and none ends another's."""
    key = ("call", next(_CALLS))
    with _LOCK:
        _DOING[key] = what
    try:
        yield
    finally:
        with _LOCK:
            _DOING.pop(key, None)


@contextmanager
def doing(what: str) -> Iterator[None]:
    """Say ``what`` is going on while the block runs (nested: the inner word wins until it ends)."""
    key = threading.get_ident()
    with _LOCK:
        before = _DOING.get(key)
        _DOING[key] = what
    try:
        yield
    finally:
        with _LOCK:
            if before is None:
                _DOING.pop(key, None)
            else:
                _DOING[key] = before


def current() -> str:
    """What is going on now ('' when nothing is): the words of every busy thread, oldest first."""
    with _LOCK:
        return "; ".join(dict.fromkeys(_DOING.values()))
