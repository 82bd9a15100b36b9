"""Matching predicted claims to gold claims: by the IoU of their answer offsets, else text similarity
(rapidfuzz token-sort ratio), greedily, best first, above a threshold; the unmatched are returned.
"""

from __future__ import annotations

from rapidfuzz import fuzz

MATCH_THRESHOLD = 0.5


def _iou(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> float:
    sa = {i for s, e in a for i in range(s, e)}
    sb = {i for s, e in b for i in range(s, e)}
    return len(sa & sb) / len(sa | sb) if sa | sb else 0.0


def match_claims(
    predicted: list[tuple[str, list[tuple[int, int]]]], gold: list[tuple[str, list[tuple[int, int]]]], threshold: float = MATCH_THRESHOLD
) -> tuple[list[tuple[int, int, float]], list[int], list[int]]:
    """(pairs (predicted index, gold index, score), unmatched predicted, unmatched gold)."""
    scored = []
    for i, (ptext, pspans) in enumerate(predicted):
        for j, (gtext, gspans) in enumerate(gold):
            score = _iou(pspans, gspans) if pspans and gspans else fuzz.token_sort_ratio(ptext, gtext) / 100.0
            if score >= threshold:
                scored.append((score, i, j))
    scored.sort(key=lambda t: (-t[0], t[1], t[2]))
    used_p, used_g, pairs = set(), set(), []
    for score, i, j in scored:
        if i in used_p or j in used_g:
            continue
        used_p.add(i)
        used_g.add(j)
        pairs.append((i, j, round(score, 4)))
    pairs.sort()
    return pairs, [i for i in range(len(predicted)) if i not in used_p], [j for j in range(len(gold)) if j not in used_g]
