"""``judge longcontext``: long-context variants of aligned rows, built as the dataset card describes: each row's
gold chunks plus ``num_docs - len(gold)`` distractors drawn uniformly from the corpus (never a gold id), shuffled,
by one ``random.Random(f"{seed}:{sample_id}")`` per row, so each row is deterministic on its own. Context:
``Document {i}:\\n{title}\\n{text}`` joined by a blank line; ``gold_positions`` 1-indexed; all or nothing.
"""

from __future__ import annotations

import random
from pathlib import Path

from judge.datasets.flashrag import TitleIndex, load_rows, refuse_overwrite, write_rows
from judge.problems import DatasetError, Problem, shown


def build(row: dict, index: TitleIndex, num_docs: int, seed: int = 4, file: str = "rows") -> dict:
    def fail(message: str, field: str | None = "metadata.gold_doc_ids") -> DatasetError:
        return DatasetError([Problem(file=file, record_id=str(row.get("id")), field=field, message=message)])

    if num_docs < 1:
        raise DatasetError([Problem(file=file, field="num_docs", message=f"{num_docs}: a context needs at least one document")])
    given = (row.get("metadata") or {}).get("gold_doc_ids") or row.get("gold_doc_ids") or []
    if not isinstance(given, list) or not all(isinstance(g, (str, int)) and not isinstance(g, bool) for g in given):
        raise fail(f"expected a list of chunk ids, found {shown(given)}")
    gold_ids = [str(g) for g in dict.fromkeys(given)]
    if not gold_ids:
        raise fail("no gold_doc_ids (run judge align first)")
    if num_docs < len(gold_ids):
        raise fail(f"{len(gold_ids)} gold chunks do not fit in {num_docs} documents (--num-docs)")
    missing = [g for g in gold_ids if index.position(g) is None]
    if missing:
        raise fail(f"gold ids not in the corpus {index.path}: {missing[:5]}")
    need = num_docs - len(gold_ids)
    if need > len(index) - len(gold_ids):
        raise fail(f"the corpus has {len(index)} chunks, too few for {num_docs} documents (--num-docs)", "num_docs")
    rng = random.Random(f"{seed}:{row['id']}")
    gold_set = set(gold_ids)
    distractors: list[int] = []
    taken: set[int] = set()
    while len(distractors) < need:
        i = rng.randrange(len(index))
        if i not in taken and index.ids[i] not in gold_set:
            taken.add(i)
            distractors.append(i)
    docs = [index.position(g) for g in gold_ids] + distractors
    rng.shuffle(docs)
    chunks = [index.chunk_by_position(i) for i in docs]
    doc_ids = [c.id for c in chunks]
    return {
        "id": row["id"],
        "question": row["question"],
        "golden_answers": row["golden_answers"],
        "gold_doc_ids": gold_ids,
        "doc_ids": doc_ids,
        "gold_positions": [i + 1 for i, cid in enumerate(doc_ids) if cid in gold_set],
        "num_docs": num_docs,
        "context": "\n\n".join(f"Document {i}:\n{c.title}\n{c.text}" for i, c in enumerate(chunks, start=1)),
    }


def build_file(data: str | Path, corpus: str | Path, out: str | Path, num_docs: int, seed: int = 4) -> int:
    """``judge longcontext``: every row built, or none written (a bad row raises DatasetError naming it)."""
    refuse_overwrite(out, (data, corpus))
    rows = load_rows(data)
    index = TitleIndex(corpus)
    return write_rows(out, (build(r, index, num_docs, seed, str(data)) for r in rows), inputs=(data, corpus))
