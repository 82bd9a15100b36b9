"""How one answer's claims are cut into judge calls: in their order, at most ``max_claims`` a call and about
``max_tokens`` of claims and passages (a 3,000-sentence answer was one 154k-token request, over any model's
context). A cut never leaves a call of control claims alone: such a group joins its neighbour, so a judge can
never tell controls by the company they keep."""

from __future__ import annotations

from collections.abc import Sequence

from judge.search.index import CHARS_PER_TOKEN  # the search budget's estimate: one meaning of a token


def call_groups(sizes: Sequence[int], controls: Sequence[bool], max_tokens: int, max_claims: int) -> list[list[int]]:
    """Indexes of the claims, cut into calls. ``sizes``: each claim's characters as shown (its text and
    passages); ``controls``: which are controls. A claim larger than the budget goes alone (with its
    controls' neighbours, if it is one)."""
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
    merged: list[list[int]] = []
    for group in groups:  # a group of controls alone joins the call before it (or, first, the one after)
        if merged and (all(controls[i] for i in group) or all(controls[i] for i in merged[-1])):
            merged[-1].extend(group)
        else:
            merged.append(group)
    return merged
