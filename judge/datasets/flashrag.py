"""FlashRAG multi-hop QA rows and the wiki-18 chunk corpus (100-word chunks sharing their article's title).

Rows: ``{id, question, golden_answers, metadata{...}}``, every field kept verbatim. Corpus lines in either
form: ``{"id", "contents": "\\"Title\\"\\ntext"}`` or ``{"id", "title", "text"}``.

The title index maps each title to the byte offsets of its chunks in the corpus file; chunk text is read on
demand, so the index of the full 21M-chunk corpus holds titles and offsets, not text.
"""

from __future__ import annotations

import json
from array import array
from dataclasses import dataclass
from pathlib import Path

from judge.datasets.base import read_jsonl
from judge.problems import DatasetError, Problem


@dataclass
class Chunk:
    id: str
    title: str
    text: str


def parse_chunk(obj: dict) -> Chunk:
    """A corpus line in either form as (id, title, text)."""
    if "contents" in obj:
        first, _, rest = obj["contents"].partition("\n")
        title = first[1:-1] if len(first) >= 2 and first[0] == first[-1] == '"' else first
        return Chunk(str(obj["id"]), title, rest)
    return Chunk(str(obj["id"]), str(obj.get("title", "")), str(obj.get("text", "")))


def load_rows(path: str | Path) -> list[dict]:
    path = Path(path)
    problems: list[Problem] = []
    rows = []
    for lineno, obj in read_jsonl(path, problems):
        if not isinstance(obj, dict):
            problems.append(Problem(file=str(path), record_id=f"line {lineno}", message="a row must be a JSON object"))
            continue
        for key in ("id", "question", "golden_answers"):
            if key not in obj:
                problems.append(Problem(file=str(path), record_id=str(obj.get("id", f"line {lineno}")), field=key, message="missing"))
        rows.append(obj)
    if problems:
        raise DatasetError(problems)
    return rows


class TitleIndex:
    """Title -> byte offsets of the title's chunks in the corpus file, built in one pass."""

    def __init__(self, corpus_path: str | Path):
        self.path = Path(corpus_path)
        self.offsets: dict[str, array] = {}
        self.ids: list[str] = []
        self.id_offsets = array("q")
        problems: list[Problem] = []
        with open(self.path, "rb") as f:
            pos = 0
            for lineno, line in enumerate(f, start=1):
                if line.strip():
                    try:
                        chunk = parse_chunk(json.loads(line))
                    except (json.JSONDecodeError, KeyError, TypeError) as e:
                        problems.append(Problem(file=str(self.path), record_id=f"line {lineno}", message=f"not a corpus chunk: {e}"))
                    else:
                        self.offsets.setdefault(chunk.title, array("q")).append(pos)
                        self.ids.append(chunk.id)
                        self.id_offsets.append(pos)
                pos += len(line)
        if problems:
            raise DatasetError(problems[:50])
        self._file = open(self.path, "rb")

    def __len__(self) -> int:
        return len(self.ids)

    def read(self, offset: int) -> Chunk:
        self._file.seek(offset)
        return parse_chunk(json.loads(self._file.readline()))

    def chunks(self, title: str) -> tuple[list[Chunk], str | None]:
        """The chunks of ``title``; else of the title without its trailing parenthetical ("Méditerranée (1963
        film)" -> "Méditerranée"). Returns the chunks and the title actually used (None: not found)."""
        for candidate in (title, strip_suffix(title)):
            if candidate and candidate in self.offsets:
                return [self.read(o) for o in self.offsets[candidate]], candidate
        return [], None

    def titles(self) -> dict[str, str]:
        """Chunk id -> title, from the index alone (no chunk is read)."""
        id_at = dict(zip(self.id_offsets, self.ids))
        return {id_at[o]: title for title, offsets in self.offsets.items() for o in offsets}

    def chunk_by_position(self, i: int) -> Chunk:
        return self.read(self.id_offsets[i])


def strip_suffix(title: str) -> str | None:
    """The title without a trailing parenthetical disambiguator, or None if it has none."""
    title = title.rstrip()
    if title.endswith(")") and " (" in title:
        return title[: title.rfind(" (")].rstrip()
    return None
