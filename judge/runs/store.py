"""The run directory: ``runs/<timestamp>-<name>/`` with the resolved config, results.jsonl, summary.json and
run.log. Every file write of a run goes through here.

results.jsonl gets one line per finished record, written (to the kernel) as it finishes, so a kill of the
process loses nothing already finished; a torn last line (a kill mid-write) is cut off on resume. The file is
fsynced in groups (at least every SYNC_SECONDS and every SYNC_LINES lines, and when the engine stops), so a
crash of the machine loses at most the group in flight, which a resume redoes. When a run completes, the lines
are rewritten in dataset order (atomically, sorted on disk: memory does not grow with the run), so the same
config and cache give byte-identical results.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml
from pydantic import ValidationError

from judge import files
from judge.files import UnsafePath
from judge.redact import masker, redact_json_text, redact_secrets  # defence in depth: no configured key is written, whatever its path
from judge.results import RESULTS_SCHEMA_VERSION, CallRecord, RecordResult, Usage
from judge.config import RUN_NAME, RunConfig
from judge.runs.reading import RunDirError, read_json_object, record_id_of  # noqa: F401 (re-exported: importers name them here)

RUN_FORMAT = "judge-run"
_NAME = re.compile(RUN_NAME)
SYNC_SECONDS = 1.0  # results.jsonl is fsynced at least this often while results arrive ...
SYNC_LINES = 256  # ... and every this many lines


@contextmanager
def writing(path: Path):
    """A file-system failure while writing ``path`` (read-only, a file where a folder should be, disk full)
    becomes a RunDirError naming the path: the user's environment is wrong, not the tool."""
    try:
        yield
    except UnsafePath as e:  # a link or a hard-linked file in the run directory: never written through
        raise RunDirError(str(e)) from None
    except OSError as e:
        raise RunDirError(f"{path}: cannot write: {e.strerror or e}") from None


def safe_name(name: str) -> str:
    if not _NAME.match(name) or ".." in name:
        raise RunDirError(f"run name {name!r} is not allowed: use letters, digits, '.', '_' and '-' (no paths)")
    return name


# The run's files that hold data the user gave (sources, questions, answers, record ids) and what was made from
# it: written as they are, never masked, so every span keeps source[start:end] == excerpt and every id its
# text. No secret reaches them: a model's answers and errors are masked where they enter (judge.llm.port,
# judge.llm.errors). The others (config, manifest, summary, calls, log) are masked (judge.redact.masker).
DATA_FILES = frozenset({"results.jsonl", files.SELECTION_FILE, "scores.json", "report.md", "report.html"})


def _mask_for(name: str):
    return masker(name, data=name in DATA_FILES)


class RunStore:
    def __init__(self, path: Path):
        self.path = path
        self.results_path = path / "results.jsonl"
        self.log_path = path / "run.log"
        self.calls_path = path / "calls.jsonl"
        self._release = None
        self._unsynced = 0  # result lines written since the last fsync
        self._synced_at = time.monotonic()

    # -- one writer at a time ---------------------------------------------------------------------------
    def lock(self) -> RunStore:
        """Hold the run directory for this process: a second run, --resume or rejudge into it is refused.
        An flock on run.lock: the kernel releases it when the process ends, SIGKILL included, so a killed
        run never leaves a stale lock. A directory that cannot be written fails here, before any work."""
        import fcntl
        import weakref

        path = self.path / "run.lock"
        if not os.access(self.path, os.W_OK):  # a read-only folder (or file system): refused now, not after the work
            raise RunDirError(f"{self.path}: cannot write: the folder is read-only")
        self.refuse_links()
        with writing(path):
            fd = files.open_fd(path, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise RunDirError(
                f"{self.path} is in use by another judge process (it holds {path.name}): wait for it to finish or stop it, then resume"
            ) from None
        self._release = weakref.finalize(self, os.close, fd)  # closed on unlock(), or when the store goes
        self._cut_torn_tail(self.calls_path)  # a killed writer's half line would glue onto the next call's
        self._cut_torn_tail(self.results_path)  # only the writer cuts; readers skip a torn tail
        return self

    def refuse_links(self) -> None:
        """Before writing into a run directory: none of its files may be a link or a file with several names
        (a planted run.log -> ~/.bashrc would be appended to, a results.jsonl -> elsewhere cut short)."""
        for name in files.RUN_FILES:
            path = self.path / name
            if path.is_symlink():
                raise RunDirError(f"{path}: cannot write: it is a symbolic link, and judge never writes through a link in a run directory (remove it)")
            try:
                st = path.lstat()
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                raise RunDirError(f"{path}: cannot write: it is {'a directory' if stat.S_ISDIR(st.st_mode) else 'a special file'}, expected a plain file")
            if st.st_nlink > 1:
                raise RunDirError(f"{path}: cannot write: it has {st.st_nlink} names (a hard link), so writing it would change another file too")

    def unlock(self) -> None:
        if self._release is not None:
            self._release()

    # -- creating and opening ---------------------------------------------------------------------------
    @classmethod
    def create(cls, runs_root: Path, name: str, config: RunConfig, meta: dict) -> RunStore:
        safe_name(name)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        if runs_root.exists() and not runs_root.is_dir():
            raise RunDirError(f"--runs-dir {runs_root} is a file, expected a folder for run directories")
        path = runs_root / f"{stamp}-{name}"
        n = 1
        while path.exists():
            n += 1
            path = runs_root / f"{stamp}-{name}-{n}"
        with writing(path):
            path.mkdir(parents=True)
        store = cls(path).lock()
        store.write_config(config, {**meta, "run_id": uuid.uuid4().hex})  # every run directory its own id (merge)
        return store

    @classmethod
    def open(cls, path: Path, lock: bool = False) -> RunStore:
        """An existing run directory; ``lock``: to write into it (--resume), refused while another process does."""
        store = cls(path)
        manifest = path / "run.json"
        if not manifest.exists():
            raise RunDirError(f"{path} is not a run directory of this tool (no run.json)")
        info = read_json_object(manifest)
        if info.get("format") != RUN_FORMAT or info.get("schema_version") != RESULTS_SCHEMA_VERSION:
            raise RunDirError(
                f"{path} was written by another version of judge (format {info.get('format')!r}, schema "
                f"{info.get('schema_version')!r}; this version reads schema {RESULTS_SCHEMA_VERSION}): refusing to misread it"
            )
        return store.lock() if lock else store

    def write_config(self, config: RunConfig, meta: dict) -> None:
        """The resolved config (model configs hold env-var names, never keys; an api_base without its
        credentials) and a manifest."""
        data = config.shareable()  # no credential of an api_base either
        self._write_atomic(self.path / "config.yaml", yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
        manifest = {"format": RUN_FORMAT, "schema_version": RESULTS_SCHEMA_VERSION, **meta}
        self._write_atomic(self.path / "run.json", json.dumps(manifest, ensure_ascii=False, indent=1) + "\n")

    def config(self) -> RunConfig:
        """The run's resolved config; RunDirError naming config.yaml when it is corrupt or hand-edited wrong."""
        from judge.llm.config import ConfigFileError, read_yaml
        from judge.problems import problems_from_validation

        from judge.input_files import InputFileError, open_plain

        path = self.path / "config.yaml"
        try:
            with open_plain(path, "run config"):  # a file judge wrote: a pipe, a device or a folder in its place is never read
                pass
            data = read_yaml(path, "run config")
        except InputFileError as e:
            raise RunDirError(f"{e} (the run directory is corrupt)") from None
        except ConfigFileError as e:
            raise RunDirError(f"{e} (the run directory is corrupt)") from None
        if not isinstance(data, dict):
            raise RunDirError(f"{path} is corrupt: expected a mapping, found {type(data).__name__}")
        try:
            return RunConfig.model_validate(data)
        except ValidationError as e:
            raise RunDirError("\n".join(f"{p} (the run directory is corrupt)" for p in problems_from_validation(e, str(path), None))) from None

    def manifest(self) -> dict:
        from judge.runs.manifest import manifest_problem

        manifest = read_json_object(self.path / "run.json")
        if problem := manifest_problem(manifest):
            raise RunDirError(f"{self.path / 'run.json'}: {problem}")
        return manifest

    def update_manifest(self, **fields) -> None:
        manifest = {**self.manifest(), **fields}
        self._write_atomic(self.path / "run.json", json.dumps(manifest, ensure_ascii=False, indent=1) + "\n")

    def write_text(self, name: str, text: str) -> Path:
        """A report or score file inside the run directory (a plain name, never a path)."""
        return self.write_parts(name, [text])

    def write_parts(self, name: str, parts) -> Path:
        """A file written piece by piece, then moved into place (a plain name, never a path)."""
        if "/" in name or "\\" in name or name.startswith("."):
            raise RunDirError(f"{name!r} is not a plain file name")
        path = self.path / name
        with writing(path):
            mask = _mask_for(name)
            files.replace_with(path, (mask(part) for part in parts))
        return path

    # -- results ----------------------------------------------------------------------------------------
    def _cut_torn_tail(self, path: Path | None = None) -> None:
        """A kill in mid-write leaves a last line without its newline: cut it off (that record is redone).
        Only the writer does this (under the lock); never through a link."""
        path = path or self.results_path
        if not path.exists():
            return
        with writing(path), files.open_update(path) as f:
            size = f.seek(0, os.SEEK_END)
            if size == 0:
                return
            f.seek(size - 1)
            if f.read(1) == b"\n":
                return
            back = min(size, 1 << 16)
            while True:  # find the last newline, reading backwards in blocks
                f.seek(size - back)
                block = f.read(back)
                at = block.rfind(b"\n")
                if at >= 0 or back == size:
                    f.truncate(size - back + at + 1 if at >= 0 else 0)
                    return
                back = min(size, back * 2)

    def iter_finished(self) -> Iterator[RecordResult]:
        """Every complete result, read one line at a time (memory does not grow with the run). A reader never
        rewrites the file: a torn last line (a kill in mid-write, cut by the next writer) is skipped. Another
        version's line (its schema_version) is refused, never misread."""
        if not self.results_path.exists():
            return
        with self._open_read(self.results_path) as f:
            for i, line in self._lines(f):
                if not line.strip() or not line.endswith(b"\n"):
                    continue
                yield self._parse(line, i)

    def finished(self) -> list[RecordResult]:
        return list(self.iter_finished())

    def finished_ids(self) -> Iterator[str]:
        """The ids of the complete results, as a stream (a repeated id comes again), each line's id read from
        its first bytes (no result is parsed whole unless its line is of another shape)."""
        if not self.results_path.exists():
            return
        with self._open_read(self.results_path) as f:
            for i, line in self._lines(f):
                if not line.strip() or not line.endswith(b"\n"):
                    continue
                found = record_id_of(line)
                if found is None or found[0] != RESULTS_SCHEMA_VERSION:
                    found = (RESULTS_SCHEMA_VERSION, self._parse(line, i).record_id)
                yield found[1]

    @staticmethod
    def _open_read(path: Path):
        """A run file opened for reading through the reading door: a plain file (a device, a pipe or a folder
        there is one RunDirError line, never read)."""
        from judge.input_files import InputFileError, open_plain

        try:
            return open_plain(path)
        except InputFileError as e:
            raise RunDirError(str(e)) from None

    @staticmethod
    def _lines(f):
        """(line number, line) with the one-record bound on each line (a RunDirError line past it)."""
        from judge.input_files import InputFileError, plain_lines

        try:
            yield from plain_lines(f)
        except InputFileError as e:
            raise RunDirError(str(e)) from None

    def _parse(self, line: bytes, i: int) -> RecordResult:
        try:
            result = RecordResult.model_validate_json(line)
        except ValidationError as e:  # a run directory is an input: an edited field is refused, naming it
            from judge.problems import describe, field_path

            error, found = e.errors()[0], record_id_of(line)
            where = (f" (record {found[1][:80]!r})" if found else "") + (f": field {field_path(error['loc'])}" if error.get("loc") else "")
            raise RunDirError(f"{self.results_path}: line {i}{where}: {describe(error)}; not a result as this version of judge writes it") from None
        except ValueError:
            raise RunDirError(f"{self.results_path}: line {i} is not a result of this version of judge") from None
        if result.schema_version != RESULTS_SCHEMA_VERSION:
            raise RunDirError(
                f"{self.results_path}: line {i} (record {result.record_id}) has schema_version {result.schema_version}; "
                f"this version of judge reads schema {RESULTS_SCHEMA_VERSION}: refusing to misread it"
            )
        return result

    def append(self, result: RecordResult) -> None:
        self.append_lines([result.model_dump_json()])

    def append_lines(self, lines: list[str]) -> None:
        """Result lines (each a RecordResult's JSON, as model_dump_json writes it) appended in one write; the
        file is fsynced when a group is due (SYNC_SECONDS, SYNC_LINES) and by :meth:`sync`."""
        if not lines:
            return
        text = "".join(line + "\n" for line in lines)  # data: never masked (DATA_FILES)
        with writing(self.results_path), files.open_append(self.results_path) as f:
            f.write(text)
            f.flush()
            self._unsynced += len(lines)
            if self._unsynced >= SYNC_LINES or time.monotonic() - self._synced_at >= SYNC_SECONDS:
                os.fsync(f.fileno())
                self._unsynced, self._synced_at = 0, time.monotonic()

    def sync(self) -> None:
        """fsync results.jsonl if lines were written since the last fsync (the engine stopped, or finished)."""
        if self._unsynced and self.results_path.exists():
            with writing(self.results_path), files.open_append(self.results_path) as f:
                os.fsync(f.fileno())
        self._unsynced, self._synced_at = 0, time.monotonic()

    def rewrite_in_order(self, order) -> int:
        """Result lines sorted by the dataset's record order (``order``: the record ids, an iterable), one per
        record id (the last one wins; ids not in ``order`` last, by id), written atomically. Nothing grows with
        the run in memory: each line's offset and length, and the order, go to a temporary SQLite file that
        sorts them; the lines are copied as bytes. Returns how many records there are."""
        import sqlite3
        import tempfile

        self._cut_torn_tail()
        self.sync()
        if not self.results_path.exists():
            return 0
        with tempfile.TemporaryDirectory(prefix="judge-order-") as tmp:
            db = sqlite3.connect(os.path.join(tmp, "order.db"))
            try:
                db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-8000;"
                                 "CREATE TABLE rank (id TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;"
                                 "CREATE TABLE line (id TEXT PRIMARY KEY, pos INTEGER NOT NULL, len INTEGER NOT NULL) WITHOUT ROWID;")
                total = 0
                for n, rid in enumerate(order):
                    db.execute("INSERT OR REPLACE INTO rank VALUES (?, ?)", (rid, n))
                    total = n + 1
                with open(self.results_path, "rb") as f:
                    pos = 0
                    for i, line in enumerate(f, start=1):
                        if line.strip():
                            found = record_id_of(line)
                            rid = found[1] if found is not None else json.loads(line)["record_id"]
                            db.execute("INSERT OR REPLACE INTO line VALUES (?, ?, ?)", (rid, pos, len(line)))
                        pos += len(line)
                count = db.execute("SELECT COUNT(*) FROM line").fetchone()[0]
                ranked = db.execute("SELECT line.pos, line.len FROM line LEFT JOIN rank ON rank.id = line.id "
                                    "ORDER BY COALESCE(rank.n, ?), line.id", (total,))

                def lines(src):
                    for pos, size in ranked:
                        src.seek(pos)
                        yield src.read(size)

                with writing(self.results_path), open(self.results_path, "rb") as src:
                    files.replace_with(self.results_path, lines(src), binary=True)
            finally:
                db.close()
        return count

    def append_call(self, record) -> None:
        """One model call (a judge.llm.CallRecord) to calls.jsonl: latency and cost per model, kept out of
        results.jsonl so that results stay free of wall-clock values."""
        with writing(self.calls_path), files.open_append(self.calls_path) as f:
            f.write(redact_json_text(record.model_dump_json()) + "\n")

    def append_call_lines(self, lines: list[str]) -> None:
        """Call records already serialised (a CallRecord's JSON each; the Ray engine's call sink), in one write."""
        if lines:
            with writing(self.calls_path), files.open_append(self.calls_path) as f:
                f.write("".join(redact_json_text(line) + "\n" for line in lines))

    def append_calls_from(self, other: RunStore) -> None:
        """Another run's complete call lines appended to this one's calls.jsonl, as bytes (merge)."""
        if not other.calls_path.exists():
            return
        with writing(self.calls_path), other._open_read(other.calls_path) as src, files.open_append(self.calls_path, binary=True) as dst:
            for _, line in self._lines(src):  # the reading door: a plain file, each line within one record's bound
                if line.endswith(b"\n"):
                    dst.write(line)

    def calls(self) -> list[dict]:
        """Every complete call line (a torn last line, a kill in mid-write, is skipped, never cut by a reader)."""
        from judge.boundary import parse_json
        from judge.problems import DatasetError

        if not self.calls_path.exists():
            return []
        out = []
        with self._open_read(self.calls_path) as f:
            for i, line in self._lines(f):
                if not line.strip() or not line.endswith(b"\n"):
                    continue
                try:
                    call = parse_json(line, str(self.calls_path), f"line {i}")
                except DatasetError as e:
                    raise RunDirError(f"{e} (the run directory is corrupt)") from None
                if not isinstance(call, dict):
                    raise RunDirError(f"{self.calls_path}: line {i} is not a call record of this version of judge")
                out.append(call)
        return out

    def usage(self) -> Usage:
        """What the run spent, summed from calls.jsonl, the one record of every call: across kills and resumes
        it also counts the calls of records a kill lost (their results were never written, their tokens were
        spent). Read line by line; a torn last line (a kill in mid-write, not yet cut by a resume) is left out."""
        total = Usage()
        if not self.calls_path.exists():
            return total
        with self._open_read(self.calls_path) as f:
            for i, line in self._lines(f):
                if not line.strip() or not line.endswith(b"\n"):
                    continue
                try:
                    total.add_call(CallRecord.model_validate_json(line))
                except ValueError:
                    raise RunDirError(f"{self.calls_path}: line {i} is not a call record of this version of judge") from None
        return total

    def write_summary(self, summary) -> None:
        """summary.json, written through its one type (judge.runs.summary.Summary; a dict is read as one first)."""
        from judge.runs.summary import Summary

        if not isinstance(summary, Summary):
            summary = Summary.model_validate(summary)
        self._write_atomic(self.path / "summary.json", json.dumps(summary.dump(), ensure_ascii=False, indent=1) + "\n")

    def log(self, message: str) -> None:
        with writing(self.log_path), files.open_append(self.log_path) as f:
            f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {redact_secrets(message)}\n")

    @staticmethod
    def _write_atomic(path: Path, text: str) -> None:
        with writing(path):
            files.replace_with(path, [_mask_for(path.name)(text)])
