"""What the embedded models are doing now, for the progress line: on 2 cores a judge call takes a minute and
assembling weights several seconds, and a bar that sits at 0/3 with no word looks hung.

One process-wide slot per thread that is doing something; the progress bar reads ``current()`` when it
redraws. Pure bookkeeping: nothing here prints.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_DOING: dict[int, str] = {}


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
