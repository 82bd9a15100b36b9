"""The model-call cache (diskcache): a finished call is never paid for twice.

Key: sha256 over the model id, api_base, messages, response schema, instructor mode, temperature, seed,
max_tokens and the prompt template's hash. Value: the validated result with its usage and cost. Errors are
never stored. A cache directory that cannot be opened or written (read-only, corrupt) turns the cache off
with one warning; the run goes on without it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

log = logging.getLogger("judge.llm")


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
        self.enabled = False
        self._cache = None
        self.disabled_reason = reason
        log.warning("%s; running without the cache", reason)

    def get(self, key: str) -> dict | None:
        """The stored value, or None (a miss: cache off, --refresh, or never stored)."""
        value = None
        if self.enabled and not self.refresh:
            try:
                value = self._cache.get(key)
            except Exception as e:
                self._disable(f"cannot read the cache at {self.directory}: {e}")
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def put(self, key: str, value: dict) -> None:
        if not self.enabled:
            return
        try:
            self._cache.set(key, value)
        except Exception as e:
            self._disable(f"cannot write the cache at {self.directory}: {e}")

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
