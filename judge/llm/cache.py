"""The model-call cache (diskcache): a finished call is never paid for twice; errors are never stored.

A cache directory is an input (CI restores it from a cache a pull request can write), so its bytes are data,
never code: SECURITY.md, "a cache entry is data, never code". Values are ``FORMAT`` + a sha256 digest over key
and payload + JSON, read back as bytes by :class:`DataDisk` (never unpickled); an entry that fails any check is
a miss. The digest is no signature: restore a cache only from your own branch's runs.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import re
import sqlite3
import stat
import threading
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

log = logging.getLogger("judge.llm")
_DISABLE_LOCK = threading.Lock()
T = TypeVar("T")

FORMAT = b"judge-cache/2\n"  # an entry: FORMAT, 64 hex digits of sha256(key, payload), "\n", the JSON payload
MAX_ENTRY_BYTES = 64 * 2**20  # a model answer is kilobytes; a bigger value file is refused unread
PICKLED = b"\x00refused: pickled"  # what DataDisk hands back for an entry it will not unpickle
REFUSED = b"\x00refused: "  # ... and for any other entry it will not read (the reason follows)
_VALUE_FILE = re.compile(r"[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{28}\.val")  # the only names diskcache gives value files


def cache_key(**parts: Any) -> str:
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _digest(key: str, payload: bytes) -> bytes:
    return hashlib.sha256(key.encode("utf-8") + b"\n" + payload).hexdigest().encode("ascii")


def encode_entry(key: str, value: dict) -> bytes:
    """The bytes stored for ``value`` under ``key``: FORMAT, the digest, the JSON payload."""
    payload = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return FORMAT + _digest(key, payload) + b"\n" + payload


def decode_entry(key: str, blob) -> dict:
    """The value stored under ``key``; ValueError (one line) when the bytes are not an entry judge wrote for
    it. The digest is compared before the payload is parsed as JSON through the input boundary."""
    from judge.boundary import parse_json
    from judge.problems import DatasetError

    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise ValueError(f"not an entry of this version of judge (a {type(blob).__name__})")
    blob = bytes(blob)
    if blob.startswith(REFUSED):
        raise ValueError(blob[len(REFUSED):].decode("utf-8", "replace"))
    if not blob.startswith(FORMAT):
        raise ValueError("not an entry of this version of judge")
    digest, _, payload = blob[len(FORMAT):].partition(b"\n")
    if not hmac.compare_digest(digest, _digest(key, payload)):
        raise ValueError("its digest does not match its content")
    try:
        value = parse_json(payload, "cache entry")
    except DatasetError as e:
        raise ValueError(e.problems[0].message) from None
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, found {type(value).__name__}")
    return value


@lru_cache(maxsize=1)
def data_disk():
    """diskcache's Disk, less pickle: an entry of another mode or a value file judge did not name is handed
    back as a REFUSED marker, never decoded; a file is removed only by such a name."""
    import diskcache
    from diskcache.core import MODE_BINARY, MODE_PICKLE, MODE_RAW, UNKNOWN

    class DataDisk(diskcache.Disk):
        def put(self, key):
            if type(key) is not str:
                raise TypeError("the call cache's keys are text")
            return super().put(key)

        def get(self, key, raw):
            if not raw:  # a pickled key: never loaded
                raise ValueError("a pickled key in the call cache: refused")
            return super().get(key, raw)

        def store(self, value, read, key=UNKNOWN):
            if type(value) is not bytes or read:
                raise TypeError("the call cache stores bytes only (judge encodes its entries itself)")
            return super().store(value, read, key)

        def fetch(self, mode, filename, value, read):
            if read:
                return REFUSED + b"read as a stream"
            if mode == MODE_RAW:
                return bytes(value) if isinstance(value, (bytes, bytearray, memoryview)) else REFUSED + b"not bytes"
            if mode == MODE_BINARY:
                return self._read(filename)
            if mode == MODE_PICKLE:
                return PICKLED
            return REFUSED + f"stored in mode {mode!r}, which judge never writes".encode()

        def _read(self, filename) -> bytes:
            if not isinstance(filename, str) or not _VALUE_FILE.fullmatch(filename):
                return REFUSED + b"its value file has a name judge never gives"
            path = os.path.join(self._directory, filename)
            try:
                fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
            except OSError as e:
                return REFUSED + f"its value file cannot be read ({e.strerror or e})".encode()
            with os.fdopen(fd, "rb") as f:
                st = os.fstat(f.fileno())
                if not stat.S_ISREG(st.st_mode):
                    return REFUSED + b"its value file is not a plain file"
                if st.st_size > MAX_ENTRY_BYTES:
                    return REFUSED + f"its value file holds {st.st_size:,} bytes (at most {MAX_ENTRY_BYTES:,})".encode()
                return f.read(MAX_ENTRY_BYTES + 1)

        def remove(self, file_path):
            if isinstance(file_path, str) and _VALUE_FILE.fullmatch(file_path):  # never a path the database names elsewhere
                super().remove(file_path)

    return DataDisk


def _settings_problem(directory: Path) -> str | None:
    """Why an existing cache database must not be opened (a link, not a file, or Settings diskcache would run
    as PRAGMA statements that it does not write); None when it may be opened."""
    from diskcache.core import DEFAULT_SETTINGS, METADATA

    db = directory / "cache.db"
    try:
        st = db.lstat()
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"cannot read {db}: {e.strerror or e}"
    if not stat.S_ISREG(st.st_mode):
        return f"{db} is {'a symbolic link' if stat.S_ISLNK(st.st_mode) else 'not a plain file'}"
    try:
        con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
        try:
            rows = con.execute("SELECT key, value FROM Settings").fetchall()
        finally:
            con.close()
    except sqlite3.Error:
        return None  # no Settings table yet, or not a database: diskcache says which when it opens it
    known = set(DEFAULT_SETTINGS) | set(METADATA)
    for key, value in rows:
        if key not in known:
            return f"{db}: its settings hold {str(key)[:40]!r}, which diskcache never writes (the file was edited)"
        if str(key).startswith("sqlite_") and not (isinstance(value, (int, float)) or re.fullmatch(r"[A-Za-z0-9_]{1,32}", str(value))):
            return f"{db}: its setting {key} is not a plain word or number (the file was edited)"
    return None


def open_store(directory: str | Path):
    """A diskcache Cache over ``directory`` that stores and reads bytes only (:func:`data_disk`); raises
    ValueError when its database was edited (:func:`_settings_problem`), OSError/sqlite3.Error as diskcache does."""
    import diskcache

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    problem = _settings_problem(directory)
    if problem:
        raise ValueError(problem)
    return diskcache.Cache(str(directory), size_limit=2**34, disk=data_disk())


class CallCache:
    def __init__(self, directory: str | Path | None, enabled: bool = True, refresh: bool = False):
        self.directory = Path(directory) if directory else None
        self.enabled = enabled and self.directory is not None
        self.refresh = refresh  # look-ups miss, results are written anew
        self.hits = 0
        self.misses = 0
        self.disabled_reason: str | None = None
        self._cache = None
        self._pickles_said = False
        if self.enabled:
            try:
                self._cache = open_store(self.directory)
            except Exception as e:  # read-only, corrupt, edited, or not a directory
                self._disable(f"cannot open the cache at {self.directory}: {e}")

    @classmethod
    def over(cls, store, refresh: bool = False) -> "CallCache":
        """The same rules over another store with diskcache's get/set/delete of bytes (the Ray engine's cache actor)."""
        cache = cls(None, enabled=False, refresh=refresh)
        cache.enabled, cache._cache = True, store
        return cache

    def _disable(self, reason: str) -> None:
        """Turn the cache off with one warning (the first reason; writes fail in threads, several at once)."""
        with _DISABLE_LOCK:
            if self.disabled_reason is not None:
                return
            self.enabled = False
            self.disabled_reason = reason
        log.warning("%s; running without the cache", reason)

    def get(self, key: str, check: Callable[[dict], T] = lambda value: value) -> T | None:
        """``check(value)`` of the stored value, or None; an untrusted entry is dropped, so its call is re-asked."""
        blob = None
        if self.enabled and not self.refresh:
            try:
                blob = self._cache.get(key)
            except sqlite3.Error as e:  # the database itself: no entry can be read
                self._disable(f"cannot read the cache at {self.directory}: {e}")
            except Exception as e:  # this entry only: re-ask it
                blob = REFUSED + f"unreadable ({type(e).__name__})".encode()
        return self._checked(key, blob, check)

    async def aget(self, key: str, check: Callable[[dict], T] = lambda value: value) -> T | None:
        """:meth:`get` for a caller in an event loop: a store across the network (the Ray engine's cache actor,
        with an ``aget``) is awaited, never waited on; a local diskcache is read as :meth:`get` reads it."""
        remote = getattr(self._cache, "aget", None)
        if remote is None or not self.enabled or self.refresh:
            return self.get(key, check)
        try:
            blob = await remote(key)
        except Exception as e:  # the store is unreachable or the entry unreadable: a miss, re-asked
            blob = REFUSED + f"unreadable ({type(e).__name__})".encode()
        return self._checked(key, blob, check)

    def _checked(self, key: str, blob, check: Callable[[dict], T]) -> T | None:
        result = None
        if blob is not None:
            if blob == PICKLED:
                self._drop_pickled(key)
            else:
                try:
                    result = check(decode_entry(key, blob))
                except Exception as e:
                    self._drop(key, str(e).splitlines()[0] if str(e) else type(e).__name__)
        if result is None:
            self.misses += 1
        else:
            self.hits += 1
        return result

    def _drop_pickled(self, key: str) -> None:
        """An entry in pickle form (an older judge's, or planted): never unpickled; said once per cache."""
        if not self._pickles_said:
            self._pickles_said = True
            log.warning("the cache at %s holds pickled entries (an older judge's format, or planted): they are never read, "
                        "and each is asked again and stored as JSON", self.directory or "the cache actor")
        self._delete(key)

    def _drop(self, key: str, why: str) -> None:
        log.warning("cache entry %s… ignored and re-asked: %s", key[:12], why)
        self._delete(key)

    def _delete(self, key: str) -> None:
        try:
            self._cache.delete(key)
        except Exception:
            pass

    def put(self, key: str, value: dict) -> None:
        if not self.enabled:
            return
        try:
            self._cache.set(key, encode_entry(key, value))
        except Exception as e:
            self._disable(f"cannot write the cache at {self.directory}: {e}")

    def close(self) -> None:
        if self._cache is not None:
            try:
                self._cache.close()
            except Exception as e:  # a store that failed earlier may fail to close too; the run is done with it
                log.debug("closing the cache: %s", e)
