"""Cited evidence against reference spans, by character overlap per document: precision, recall, F1, IoU,
micro-averaged over claims; and the share of claims with some cited span touching a gold sentence.
"""

from __future__ import annotations

from collections.abc import Iterable


def char_set(spans: Iterable[tuple[str | None, int, int]]) -> set[tuple[str | None, int]]:
    return {(doc, i) for doc, start, end in spans for i in range(start, end)}


def overlap(cited: list[tuple[str | None, int, int]], gold: list[tuple[str | None, int, int]]) -> dict:
    c, g = char_set(cited), char_set(gold)
    shared = len(c & g)
    return {"cited": len(c), "gold": len(g), "shared": shared, "union": len(c | g)}


def overlap_scores(counts: dict) -> dict:
    precision = counts["shared"] / counts["cited"] if counts["cited"] else None
    recall = counts["shared"] / counts["gold"] if counts["gold"] else None
    f1 = (2 * precision * recall / (precision + recall)) if precision and recall else (0.0 if precision is not None and recall is not None else None)
    iou = counts["shared"] / counts["union"] if counts["union"] else None
    return {"precision": precision, "recall": recall, "f1": f1, "iou": iou}


def sum_counts(rows: list[dict]) -> dict:
    return {k: sum(r[k] for r in rows) for k in ("cited", "gold", "shared", "union")}


def sentence_hit(cited: list[tuple[str | None, int, int]], gold_sentences: list[tuple[str | None, int, int]]) -> bool:
    """Whether any cited span overlaps any sentence that holds gold."""
    return any(cd == gd and cs < ge and gs < ce for cd, cs, ce in cited for gd, gs, ge in gold_sentences)
