"""The model-call cache (diskcache): a finished call is never paid for twice.

Key: sha256 over the model id, api_base, messages, response schema, instructor mode, temperature, seed,
max_tokens and the prompt template's hash. Value: the validated result with its usage and cost, and a digest
over key and value; an entry that is undecodable, fails its digest or no longer validates is a miss, and is
re-asked. Errors are never stored. A cache directory that cannot be opened or written (read-only, corrupt)
turns the cache off with one warning; the run goes on without it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from pathlib import Path
from collections.abc import Callable
from typing import Any, TypeVar

log = logging.getLogger("judge.llm")
_DISABLE_LOCK = threading.Lock()
T = TypeVar("T")


def _digest(key: str, value: dict) -> str:
    """sha256 over the key and the value (less its digest): an entry edited, corrupted or moved to another
    key no longer matches, and is re-asked rather than trusted."""
    content = {k: v for k, v in value.items() if k != "digest"}
    return cache_key(key=key, value=content)


def cache_key(**parts: Any) -> str:
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CallCache:
    def __init__(self, directory: str | Path | None, enabled: bool = True, refresh: bool = False):
        self.directory = Path(directory) if directory else None
        self.enabled = enabled and self.directory is not None
        self.refresh = refresh  # look-ups miss, results are written anew
        self.hits = 0
        self.misses = 0
        self.disabled_reason: str | None = None
        self._cache = None
        if self.enabled:
            try:
                import diskcache

                self.directory.mkdir(parents=True, exist_ok=True)
                self._cache = diskcache.Cache(str(self.directory), size_limit=2**34)
            except Exception as e:  # read-only, corrupt, or not a directory
                self._disable(f"cannot open the cache at {self.directory}: {e}")

    @classmethod
    def over(cls, store, refresh: bool = False) -> "CallCache":
        """The same rules over another store with diskcache's get/set/delete (the Ray engine's cache actor)."""
        cache = cls(None, enabled=False, refresh=refresh)
        cache.enabled, cache._cache = True, store
        return cache

    def _disable(self, reason: str) -> None:
        """Turn the cache off with one warning. Writes run in threads, so several may fail at once: the
        first reason is kept and said; the store object stays, so a call already past the check fails (and
        is caught) rather than meeting None."""
        with _DISABLE_LOCK:
            if self.disabled_reason is not None:
                return
            self.enabled = False
            self.disabled_reason = reason
        log.warning("%s; running without the cache", reason)

    def get(self, key: str, check: Callable[[dict], T] = lambda value: value) -> T | None:
        """``check(value)`` of the stored value, or None: a miss when the cache is off, under --refresh, the key
        was never stored, or the entry cannot be trusted (undecodable, its digest does not match, ``check``
        refuses it). An untrusted entry is dropped, so its call is re-asked and stored anew."""
        value = None
        if self.enabled and not self.refresh:
            try:
                value = self._cache.get(key)
            except sqlite3.Error as e:  # the database itself: no entry can be read
                self._disable(f"cannot read the cache at {self.directory}: {e}")
            except Exception as e:  # this entry only (unpickling failed): re-ask it
                value = self._drop(key, f"undecodable ({type(e).__name__})")
        return self._checked(key, value, check)

    async def aget(self, key: str, check: Callable[[dict], T] = lambda value: value) -> T | None:
        """:meth:`get` for a caller in an event loop: a store across the network (the Ray engine's cache actor,
        with an ``aget``) is awaited, never waited on; a local diskcache is read as :meth:`get` reads it."""
        remote = getattr(self._cache, "aget", None)
        if remote is None or not self.enabled or self.refresh:
            return self.get(key, check)
        try:
            value = await remote(key)
        except Exception as e:  # the store is unreachable or the entry undecodable: a miss, re-asked
            value = self._drop(key, f"unreadable ({type(e).__name__})")
        return self._checked(key, value, check)

    def _checked(self, key: str, value, check: Callable[[dict], T]) -> T | None:
        result = None
        if value is not None:
            try:
                if not isinstance(value, dict) or value.get("digest") != _digest(key, value):
                    raise ValueError("its digest does not match its content")
                result = check(value)
            except Exception as e:
                self._drop(key, str(e).splitlines()[0] if str(e) else type(e).__name__)
        if result is None:
            self.misses += 1
        else:
            self.hits += 1
        return result

    def _drop(self, key: str, why: str) -> None:
        log.warning("cache entry %s… ignored and re-asked: %s", key[:12], why)
        try:
            self._cache.delete(key)
        except Exception:
            pass
        return None

    def put(self, key: str, value: dict) -> None:
        if not self.enabled:
            return
        try:
            self._cache.set(key, {**value, "digest": _digest(key, value)})
        except Exception as e:
            self._disable(f"cannot write the cache at {self.directory}: {e}")

    def close(self) -> None:
        if self._cache is not None:
            try:
                self._cache.close()
            except Exception as e:  # a store that failed earlier may fail to close too; the run is done with it
                log.debug("closing the cache: %s", e)
