"""An on-disk index of a run's inputs (records' ids and positions, answers' byte offsets), so records and answers
are joined without holding either in memory. SQLite in a temporary directory: nothing to install or left behind.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Iterator

from judge.models import Answer

SCHEMA = """
CREATE TABLE records (id TEXT PRIMARY KEY, ord INTEGER NOT NULL, pos INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE answers (n INTEGER PRIMARY KEY, record_id TEXT NOT NULL, pos INTEGER, body TEXT,
                      key TEXT NOT NULL UNIQUE, model TEXT NOT NULL, family TEXT);
CREATE INDEX answers_by_record ON answers (record_id, n);
"""


def answer_key(record_id: str, model: str, text: str) -> str:
    """An answer's identity (record, model, text) in 32 hex characters, whatever the text's length."""
    h = hashlib.blake2b(digest_size=16)
    for part in (record_id, model, text):
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()


class InputIndex:
    """Record ids and answer offsets on disk; ``close()`` (or garbage collection) removes the files."""

    def __init__(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="judge-index-")
        self.db = sqlite3.connect(Path(self._dir) / "index.sqlite", check_same_thread=False)
        self.db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;" + SCHEMA)
        self.answers_path: Path | None = None
        self._answers_file = None
        self._owner = True  # a copy unpickled elsewhere (a worker on this machine) reads, never deletes

    def __getstate__(self) -> dict:
        self.commit()
        return {"dir": self._dir, "answers_path": self.answers_path}

    def __setstate__(self, state: dict) -> None:
        self._dir, self.answers_path, self._answers_file, self._owner = state["dir"], state["answers_path"], None, False
        self.db = sqlite3.connect(f"file:{Path(self._dir) / 'index.sqlite'}?mode=ro", uri=True, check_same_thread=False)

    # -- records ---------------------------------------------------------------------------------------
    def add_record(self, record_id: str, ord_: int, pos: int) -> int | None:
        """Store a record; returns the position of an earlier record with the same id instead, if any."""
        try:
            self.db.execute("INSERT INTO records VALUES (?, ?, ?)", (record_id, ord_, pos))
            return None
        except sqlite3.IntegrityError:
            return self.db.execute("SELECT ord FROM records WHERE id = ?", (record_id,)).fetchone()[0]

    def ordered_ids(self) -> Iterator[str]:
        """The records' ids in dataset order, read from the index (no pass over the dataset)."""
        for (record_id,) in self.db.execute("SELECT id FROM records ORDER BY ord"):
            yield record_id

    def has_bodies(self) -> bool:
        return self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'bodies'").fetchone() is not None

    def store_bodies(self, rows) -> None:
        """Records stored whole by id (for lookups by id after a run: scoring, reports)."""
        self.db.execute("CREATE TABLE IF NOT EXISTS bodies (id TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID")
        self.db.executemany("INSERT OR IGNORE INTO bodies VALUES (?, ?)", rows)
        self.db.commit()

    def body(self, record_id: str) -> str | None:
        row = self.db.execute("SELECT body FROM bodies WHERE id = ?", (record_id,)).fetchone()
        return row[0] if row else None

    # -- answers ---------------------------------------------------------------------------------------
    def add_answer(self, answer: Answer, pos: int | None = None, family: str | None = None) -> bool:
        """Store an answer by its offset in the answers file (or whole, when ``pos`` is None); False when
        the same answer of the same model to the same record is already there."""
        body = None if pos is not None else answer.model_dump_json()
        try:
            self.db.execute(
                "INSERT INTO answers (record_id, pos, body, key, model, family) VALUES (?, ?, ?, ?, ?, ?)",
                (answer.record_id, pos, body, answer_key(answer.record_id, answer.model, answer.answer), answer.model, family),
            )
            return True
        except sqlite3.IntegrityError:
            return False

    def answers_for(self, record_id: str) -> list[Answer]:
        rows = self.db.execute("SELECT pos, body FROM answers WHERE record_id = ? ORDER BY n", (record_id,)).fetchall()
        return [self._read(pos, body) for pos, body in rows]

    def answer(self, record_id: str, model: str, text: str) -> Answer | None:
        row = self.db.execute("SELECT pos, body FROM answers WHERE key = ?", (answer_key(record_id, model, text),)).fetchone()
        return self._read(*row) if row else None

    def answer_count(self) -> int:
        return self.db.execute("SELECT count(*) FROM answers").fetchone()[0]

    def answer_families(self) -> list[str]:
        return [f for (f,) in self.db.execute("SELECT DISTINCT family FROM answers WHERE family IS NOT NULL ORDER BY family")]

    def representatives(self) -> list[Answer]:
        """The first answer of each distinct (model, family)."""
        rows = self.db.execute("SELECT pos, body FROM answers WHERE n IN (SELECT min(n) FROM answers GROUP BY model, family) ORDER BY n")
        return [self._read(pos, body) for pos, body in rows.fetchall()]

    def orphan_record_ids(self, limit: int) -> tuple[list[str], int]:
        """Record ids that answers name but no record has: the first ``limit`` and how many in all."""
        q = "FROM answers WHERE record_id NOT IN (SELECT id FROM records)"
        total = self.db.execute(f"SELECT count(DISTINCT record_id) {q}").fetchone()[0]
        ids = [r for (r,) in self.db.execute(f"SELECT DISTINCT record_id {q} ORDER BY record_id LIMIT ?", (limit,))]
        return ids, total

    def iter_answers(self) -> Iterator[Answer]:
        for pos, body in self.db.execute("SELECT pos, body FROM answers ORDER BY n"):
            yield self._read(pos, body)

    def _read(self, pos: int | None, body: str | None) -> Answer:
        if body is not None:
            return Answer.model_validate_json(body)
        if self._answers_file is None:
            self._answers_file = open(self.answers_path, "rb")  # noqa: SIM115 (kept open for the run)
        self._answers_file.seek(pos)
        return Answer.model_validate_json(self._answers_file.readline())

    def commit(self) -> None:
        self.db.commit()

    def close(self) -> None:
        if self._answers_file is not None:
            self._answers_file.close()
            self._answers_file = None
        if self.db is not None:
            self.db.close()
            self.db = None
        if self._owner:
            shutil.rmtree(self._dir, ignore_errors=True)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 (interpreter shutdown)
            pass
