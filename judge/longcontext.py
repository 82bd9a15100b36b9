"""``judge longcontext``: long-context variants of aligned rows, built as the dataset card describes.

For each row with ``metadata.gold_doc_ids``: its gold chunks, plus ``num_docs - len(gold)`` random distractor
chunks drawn from the whole corpus (never a gold id), shuffled; one ``random.Random(f"{seed}:{sample_id}")``
per row draws the distractors and then shuffles, so each row is deterministic on its own (whatever else is
in the file) and gold positions vary across rows. Context: ``Document {i}:\\n{title}\\n{text}`` joined by a
blank line; ``gold_positions`` are 1-indexed Document numbers.
"""

from __future__ import annotations

import random

from judge.datasets.flashrag import TitleIndex


def build(row: dict, index: TitleIndex, num_docs: int, seed: int = 4) -> dict:
    gold_ids = list(dict.fromkeys((row.get("metadata") or {}).get("gold_doc_ids") or row.get("gold_doc_ids") or []))
    if not gold_ids:
        raise ValueError(f"row {row.get('id')}: no gold_doc_ids (run judge align first)")
    if num_docs < len(gold_ids):
        raise ValueError(f"row {row.get('id')}: {len(gold_ids)} gold chunks do not fit in {num_docs} documents")
    positions = {cid: i for i, cid in enumerate(index.ids)}
    missing = [g for g in gold_ids if g not in positions]
    if missing:
        raise ValueError(f"row {row.get('id')}: gold ids not in the corpus: {missing[:5]}")
    need = num_docs - len(gold_ids)
    if need > len(index) - len(gold_ids):
        raise ValueError(f"the corpus has too few chunks for {num_docs} documents")
    rng = random.Random(f"{seed}:{row['id']}")
    gold_set = set(gold_ids)
    distractors: list[int] = []
    taken: set[int] = set()
    while len(distractors) < need:
        i = rng.randrange(len(index))
        if i not in taken and index.ids[i] not in gold_set:
            taken.add(i)
            distractors.append(i)
    docs = [positions[g] for g in gold_ids] + distractors
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
