"""How one answer's claims are cut into judge calls: in their order, at most ``max_claims`` a call and about
``max_tokens`` of claims and passages (a 3,000-sentence answer was one 154k-token request, over any model's
context). Control answers are cut by the same rule as real ones, so their calls have the same shape
(judge.controls.mix): nothing here knows which claims are controls."""

from __future__ import annotations

from collections.abc import Sequence

from judge.search.index import CHARS_PER_TOKEN  # the search budget's estimate: one meaning of a token


def call_groups(sizes: Sequence[int], max_tokens: int, max_claims: int) -> list[list[int]]:
    """Indexes of the claims, cut into calls. ``sizes``: each claim's characters as shown (its text and
    passages). A claim larger than the budget goes alone."""
    budget = max_tokens * CHARS_PER_TOKEN
    groups: list[list[int]] = []
    current: list[int] = []
    used = 0
    for i, size in enumerate(sizes):
        if current and (used + size > budget or len(current) >= max_claims):
            groups.append(current)
            current, used = [], 0
        current.append(i)
        used += size
    if current:
        groups.append(current)
    return groups
