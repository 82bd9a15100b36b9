"""A cache of a function of texts bounded by the characters it holds, not by its number of entries.

A view of a source (its word forms, sentences, numbers) is tens of times the source's size, and a run over
every record of a file meets thousands of sources: ``lru_cache(maxsize=64)`` over 100 KB sources holds
hundreds of megabytes, and its peak grows with the input until the count is reached. Bounding the cache
by the characters of the texts it was called with keeps a run's memory flat in the input: a claim costs a
few dozen characters of the budget, a source its length. An entry larger than the whole budget is still
kept, alone, so one huge source is not recomputed for each of its claims.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TypeVar

R = TypeVar("R")

TEXT_CACHE_CHARS = 500_000
"""The default budget: five sources of 100 KB, more than the records a run works on at once (4 by default)
usually hold; a view of a source is 10-30 times its size."""

SPAN_CACHE_CHARS = 40_000
"""The budget of the caches keyed by claims and spans (their tokens, alignments, words): what the records worked
on at once hold (4 x 10 claims x 5 spans of ~200 characters). A token weighs ~70 bytes a character, so the
default budget held ~15 MB across these caches and a run's peak grew with its input until they filled."""


def text_memo(max_chars: int = TEXT_CACHE_CHARS) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Least-recently-used cache over hashable arguments, evicting while the ``str`` arguments of the
    entries it holds total more than ``max_chars`` (each entry weighs at least 1)."""

    def decorate(fn: Callable[..., R]) -> Callable[..., R]:
        entries: OrderedDict[tuple, tuple[R, int]] = OrderedDict()
        held = [0]
        lock = threading.Lock()

        @functools.wraps(fn)
        def cached(*args):
            with lock:
                hit = entries.get(args)
                if hit is not None:
                    entries.move_to_end(args)
                    return hit[0]
            value = fn(*args)  # outside the lock: two threads may compute one text once each, never wait
            weight = max(1, sum(len(a) for a in args if isinstance(a, str)))
            with lock:
                if args not in entries:
                    entries[args] = (value, weight)
                    held[0] += weight
                    while held[0] > max_chars and len(entries) > 1:
                        _, (_, w) = entries.popitem(last=False)
                        held[0] -= w
            return value

        cached.cache_chars = lambda: held[0]  # type: ignore[attr-defined]
        return cached

    return decorate
