"""FlashRAG multi-hop QA rows (unique ids, every field kept) and the wiki-18 chunk corpus, whose lines are
``{"id", "contents": "\\"Title\\"\\ntext"}`` or ``{"id", "title", "text"}``. The title index holds byte
offsets, never text, so the full 21M-chunk corpus's index fits.
"""

from __future__ import annotations

import hashlib
import json
from array import array
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from judge.boundary import MAX_DEPTH, SURROGATE, Refused, loads, problem_of, surrogate_message
from judge.datasets.base import _SURROGATE_ESCAPE, max_record_bytes, read_jsonl, read_text
from judge.problems import DatasetError, Problem


@dataclass
class Chunk:
    id: str
    title: str
    text: str


def parse_chunk(obj) -> Chunk:
    """A corpus line in either form as (id, title, text); TypeError naming what is wrong."""
    if not isinstance(obj, dict):
        raise TypeError("a corpus chunk must be a JSON object")
    cid = obj.get("id")
    if isinstance(cid, bool) or not isinstance(cid, (str, int)) or cid == "":
        raise TypeError("field id: missing or not a string")
    if "contents" in obj:
        if not isinstance(obj["contents"], str):
            raise TypeError("field contents: not a string")
        first, _, rest = obj["contents"].partition("\n")
        title = first[1:-1] if len(first) >= 2 and first[0] == first[-1] == '"' else first
        return Chunk(str(cid), title, rest)
    if not isinstance(obj.get("text"), str):
        raise TypeError("field text (or contents): missing or not a string")
    return Chunk(str(cid), str(obj.get("title") or ""), obj["text"])


def load_rows(path: str | Path) -> list[dict]:
    """Rows, or every problem: a missing or mistyped field, an id given twice."""
    path = Path(path)
    problems: list[Problem] = []
    rows = []
    first: dict[str, int] = {}
    for lineno, obj in read_jsonl(path, problems):
        if not isinstance(obj, dict):
            problems.append(Problem(file=str(path), record_id=f"line {lineno}", message="a row must be a JSON object"))
            continue
        rid = str(obj.get("id", f"line {lineno}"))
        bad = []
        if isinstance(obj.get("id"), bool) or not isinstance(obj.get("id"), (str, int)) or obj.get("id") == "":
            bad.append(("id", "missing or not a string"))
        if not isinstance(obj.get("question"), str):
            bad.append(("question", "missing or not a string"))
        answers = obj.get("golden_answers")
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            bad.append(("golden_answers", "missing or not a list of strings"))
        if "metadata" in obj and not isinstance(obj["metadata"], dict):
            bad.append(("metadata", "not an object"))
        problems.extend(Problem(file=str(path), record_id=rid, field=f, message=m) for f, m in bad)
        if bad:
            continue
        if rid in first:
            problems.append(Problem(file=str(path), record_id=rid, field="id", message=f"duplicated row id (line {lineno}; first at line {first[rid]})"))
            continue
        first[rid] = lineno
        rows.append(obj)
    if problems:
        raise DatasetError(problems[:50])
    return rows


def load_predictions(path: str | Path) -> dict[str, str]:
    """Answers by row id: one JSON object ``{id: answer}``, or JSONL lines ``{"id", "answer"}``."""
    path = Path(path)
    problems: list[Problem] = []
    text = read_text(path, problems, limit=max_record_bytes())  # the {id: answer} form is one record; JSONL is read a line at a time
    if text is None and problems:
        raise DatasetError(problems)
    try:
        whole = loads(text) if text is not None else None
    except Refused as e:  # {id: answer} with an id twice (one answer would be dropped silently), NaN, 1e999
        raise DatasetError([Problem(file=str(path), field=e.field, message=str(e))]) from None
    except (json.JSONDecodeError, RecursionError):  # JSONL, or too deep (refused line by line below)
        whole = None
    if isinstance(whole, dict) and "id" not in whole:  # {id: answer}; a lone {"id": ..} is a JSONL line
        problem = problem_of(whole, str(path))
        if problem is not None:
            raise DatasetError([problem])
        out = {str(k): v for k, v in whole.items()}
        problems = [Problem(file=str(path), record_id=k, message="the answer is not a string") for k, v in out.items() if not isinstance(v, str)]
    else:
        out = {}
        for lineno, obj in read_jsonl(path, problems):
            if not isinstance(obj, dict) or not isinstance(obj.get("answer"), str) or obj.get("id") in (None, "") or isinstance(obj.get("id"), (dict, list)):
                problems.append(Problem(file=str(path), record_id=f"line {lineno}", field="id/answer",
                                        message='expected {"id": ..., "answer": "..."} (or the whole file one JSON object {id: answer})'))
                continue
            if str(obj["id"]) in out:
                problems.append(Problem(file=str(path), record_id=str(obj["id"]), field="id", message=f"a second answer for this id (line {lineno})"))
                continue
            out[str(obj["id"])] = obj["answer"]
    if problems:
        raise DatasetError(problems[:50])
    return out


def base_title(title: str) -> str:
    """The title without any trailing parenthetical: a title and its suffix fallback share it."""
    while (shorter := strip_suffix(title)) is not None:
        title = shorter
    return title


def share_of(key: str, shards: int) -> int:
    """A stable shard number for a title or an id (the same on every worker, unlike hash())."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big") % shards


def read_corpus(path: Path, problems: list[Problem], shown: str | None = None):
    """(line number, byte offset, line bytes, Chunk) for every chunk line of a corpus file, in one pass; a line
    that is no chunk is a problem (named ``shown``, else the path) and is skipped."""
    from judge.datasets.base import max_record_bytes, too_large
    from judge.input_files import InputFileError, open_input

    shown = shown or str(path)
    try:
        f = open_input(path, "the corpus")  # noqa: SIM115 (closed by the with below; the open alone is guarded)
    except InputFileError as e:
        raise DatasetError([Problem(file=shown, message=f"cannot read the corpus: {e.reason}")]) from None
    cap = max_record_bytes()
    with f:
        pos, lineno = 0, 0
        while line := f.readline(cap + 1):
            lineno += 1
            if len(line) > cap and not line.endswith(b"\n"):  # one chunk over the record limit: skipped unread
                start, size = pos, len(line)
                while (rest := f.readline(1 << 20)) and not rest.endswith(b"\n"):
                    size += len(rest)
                size += len(rest)
                problems.append(Problem(file=shown, record_id=f"line {lineno}", message=too_large(size, "the corpus line")))
                pos = start + size
                continue
            if line.strip():
                try:
                    chunk = parse_chunk(loads(line))
                    if _SURROGATE_ESCAPE.search(line):  # rare: only then are the texts looked at
                        for name in ("id", "title", "text"):
                            if SURROGATE.search(getattr(chunk, name)):
                                raise TypeError(f"field {name}: {surrogate_message(getattr(chunk, name))}")
                except RecursionError:  # a deeply nested line: one problem, never a traceback
                    problems.append(Problem(file=shown, record_id=f"line {lineno}",
                                            message=f"not a corpus chunk: JSON nested deeper than {MAX_DEPTH} levels"))
                except (ValueError, TypeError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
                    problems.append(Problem(file=shown, record_id=f"line {lineno}", message=f"not a corpus chunk: {e}"))
                else:
                    yield lineno, pos, line, chunk
            pos += len(line)


def duplicate_id_problems(shown: str, ids_lines) -> list[Problem]:
    """The duplicate-id problems of :class:`TitleIndex` from (id, line number) pairs (one id shard of a split
    corpus): the same problems, in the same order."""
    where: dict[str, list[int]] = {}
    for cid, line in ids_lines:
        where.setdefault(cid, []).append(line)
    return [Problem(file=shown, record_id=cid, field="id",
                    message=f"duplicated chunk id (lines {', '.join(map(str, sorted(ls)))}): one text per id")
            for cid, ls in sorted(where.items()) if len(ls) > 1]


class TitleIndex:
    """Title -> byte offsets of its chunks, built in one pass; ``share=(i, n)``: only shard i's titles (and ids)."""

    def __init__(self, corpus_path: str | Path, share: tuple[int, int] | None = None, check_ids: bool = True):
        """``check_ids=False``: a corpus part whose ids are checked elsewhere (judge.align_ray's split corpus)."""
        self.path = Path(corpus_path)
        self.offsets: dict[str, array] = {}
        self.ids: list[str] = []
        self.id_offsets = array("q")
        self._positions: dict[str, int] | None = None
        problems: list[Problem] = []
        for _, pos, _, chunk in read_corpus(self.path, problems):
            if share is None or share_of(base_title(chunk.title), share[1]) == share[0]:
                self.offsets.setdefault(chunk.title, array("q")).append(pos)
            if check_ids and (share is None or share_of(chunk.id, share[1]) == share[0]):
                self.ids.append(chunk.id)
                self.id_offsets.append(pos)
        if not problems:
            problems = self._duplicate_ids()
        if problems:
            raise DatasetError(problems[:50])
        from judge.input_files import open_input

        self._file = open_input(self.path, "the corpus")

    def _duplicate_ids(self) -> list[Problem]:
        """An id given twice would make a gold id point at two texts. Checked over hashes (8 bytes a chunk,
        sorted with numpy), then exactly among the few ids whose hashes collide."""
        import numpy as np

        hashes = np.fromiter((hash(i) for i in self.ids), dtype=np.int64, count=len(self.ids))
        order = np.argsort(hashes, kind="stable")
        same = np.nonzero(hashes[order][1:] == hashes[order][:-1])[0]
        if not len(same):
            return []
        suspects = sorted({int(order[j]) for j in same} | {int(order[j + 1]) for j in same})
        counts = Counter(self.ids[i] for i in suspects)
        dups = {cid for cid, n in counts.items() if n > 1}
        at = [i for i in suspects if self.ids[i] in dups]
        lines = self._lines_of(sorted(self.id_offsets[i] for i in at))
        where: dict[str, list[int]] = {}
        for i in at:
            where.setdefault(self.ids[i], []).append(lines[self.id_offsets[i]])
        return [Problem(file=str(self.path), record_id=cid, field="id",
                        message=f"duplicated chunk id (lines {', '.join(map(str, sorted(ls)))}): one text per id")
                for cid, ls in sorted(where.items())]

    def _lines_of(self, offsets: list[int]) -> dict[int, int]:
        """Line numbers of byte offsets (sorted), in one streaming pass over the file."""
        from judge.input_files import open_input

        out, line, pos, k = {}, 1, 0, 0
        with open_input(self.path, "the corpus") as f:
            while k < len(offsets):
                block = f.read(1 << 20)
                if not block:
                    break
                while k < len(offsets) and offsets[k] < pos + len(block):
                    out[offsets[k]] = line + block.count(b"\n", 0, offsets[k] - pos)
                    k += 1
                line += block.count(b"\n")
                pos += len(block)
        return out

    def __len__(self) -> int:
        return len(self.ids)

    def read(self, offset: int) -> Chunk:
        self._file.seek(offset)
        return parse_chunk(json.loads(self._file.readline()))

    def resolve(self, title: str) -> str | None:
        """The title as the corpus has it: the title itself, else without its trailing parenthetical
        ("Méditerranée (1963 film)" -> "Méditerranée"); None when neither is in the corpus."""
        for candidate in (title, strip_suffix(title)):
            if candidate and candidate in self.offsets:
                return candidate
        return None

    def chunks(self, title: str) -> tuple[list[Chunk], str | None]:
        """The chunks of ``title`` (through :meth:`resolve`) and the title actually used (None: not found)."""
        used = self.resolve(title)
        return ([self.read(o) for o in self.offsets[used]], used) if used is not None else ([], None)

    def titles(self) -> dict[str, str]:
        """Chunk id -> title, from the index alone (no chunk is read)."""
        id_at = dict(zip(self.id_offsets, self.ids))
        return {id_at[o]: title for title, offsets in self.offsets.items() for o in offsets}

    def position(self, chunk_id: str) -> int | None:
        """Where a chunk id sits in the corpus (the map is built once, on first use)."""
        if self._positions is None:
            self._positions = {cid: i for i, cid in enumerate(self.ids)}
        return self._positions.get(chunk_id)

    def chunk_by_position(self, i: int) -> Chunk:
        return self.read(self.id_offsets[i])


def strip_suffix(title: str) -> str | None:
    """The title without a trailing parenthetical disambiguator, or None if it has none."""
    title = title.rstrip()
    if title.endswith(")") and " (" in title:
        return title[: title.rfind(" (")].rstrip()
    return None


def write_atomic(path: str | Path, parts, inputs: tuple[str | Path, ...] = ()) -> int:
    """Write the text ``parts`` all or nothing through the writing door (judge.files.output): a failure halfway
    leaves no partial output; refuses an input, a link or a run directory. Returns the number of parts."""
    from judge.files import output
    from judge.input_files import os_error_reason

    path = Path(path)
    refuse_overwrite(path, inputs)
    n = 0
    try:
        with output(path, follow_streams=True) as f:
            for part in parts:
                f.write(part)
                n += 1
    except OSError as e:
        raise DatasetError([Problem(file=str(path), message=os_error_reason(e, "write"))]) from None
    return n


def refuse_overwrite(path: str | Path, inputs: tuple[str | Path, ...]) -> None:
    """An output must not be one of the inputs, a link, a run's own file, a block device, a socket or a
    folder (judge.files.check_output; checked before any work, and again when writing)."""
    from judge.files import UnsafePath, check_output

    try:
        check_output(Path(path), tuple(Path(i) for i in inputs), "output")
    except UnsafePath as e:
        raise DatasetError([Problem(file=str(path), message=str(e))]) from None


def write_rows(path: str | Path, rows, inputs: tuple[str | Path, ...] = ()) -> int:
    """JSONL rows, all or nothing (:func:`write_atomic`)."""
    return write_atomic(path, (json.dumps(row, ensure_ascii=False) + "\n" for row in rows), inputs)
