"""Claim-level differences between two runs (``judge compare``): claims newly ungrounded, fixed, flipped, or in
one run only. Claims are matched per record and model by their answer offsets (same answer text), then equal
text, then rapidfuzz similarity (at least ``MIN_SIMILARITY``), so "opened in 2019" pairs with "opened in 2021".
"""

from __future__ import annotations

from collections import defaultdict
from typing import Literal

from pydantic import BaseModel
from rapidfuzz import fuzz, process

from judge.results import AnswerResult, ClaimResult, RecordResult
from judge.verdicts import JUDGE_ERROR, NOT_GROUNDED, SEVERITY, SUPPORTED, VerdictLabel

MIN_SIMILARITY = 70.0  # rapidfuzz ratio (0-100) below which two claims are different claims


class ClaimChange(BaseModel):
    """One claim across the two runs; ``a`` or ``b`` is None where the claim is not in that run."""

    record_id: str
    model: str
    claim: str  # its text in B (in A when it is only in A)
    claim_a: str | None = None  # its text in A, when it differs from B's
    a: VerdictLabel | None
    b: VerdictLabel | None
    match: Literal["offsets", "text", "similar"] | None = None
    similarity: float | None = None  # 0-1, for a match by similarity
    # for a claim not grounded in B: why (a judge agreeing with B's verdict), its best passage, the checks' flags
    reason: str | None = None
    passage: str | None = None
    flags: list[str] = []


class ClaimDiff(BaseModel):
    """Claims newly ungrounded in B (ungrounded in B, grounded, a judge error or absent in A), fixed in B
    (ungrounded in A, supported or gone in B), matched claims whose verdict flipped, and the unmatched ones."""

    matched: int = 0
    newly_ungrounded: list[ClaimChange] = []
    worsened: list[ClaimChange] = []  # not grounded in both, more severe in B (partially supported -> contradicted)
    fixed: list[ClaimChange] = []
    flips: list[ClaimChange] = []
    only_a: list[ClaimChange] = []
    only_b: list[ClaimChange] = []


def _span_key(c: ClaimResult) -> tuple:
    return tuple((s.start_char, s.end_char) for s in c.answer_spans)


def match_claims(a: AnswerResult, b: AnswerResult) -> list[tuple[ClaimResult | None, ClaimResult | None, str | None, float | None]]:
    """Pairs (claim in A, claim in B, how, similarity) covering every claim of both answers once."""
    left, right = list(a.claims), list(b.claims)
    pairs = []
    keys = [("offsets", _span_key)] if a.answer == b.answer else []
    keys.append(("text", lambda c: c.text))
    for how, key in keys:
        by_key = defaultdict(list)
        for c in right:
            by_key[key(c)].append(c)
        rest = []
        for c in left:
            k = key(c)
            if how == "offsets" and not k:
                rest.append(c)
            elif by_key.get(k):
                other = by_key[k].pop(0)
                right.remove(other)
                pairs.append((c, other, how, None))
            else:
                rest.append(c)
        left = rest
    if left and right:
        sims = process.cdist([c.text for c in left], [c.text for c in right], scorer=fuzz.ratio)
        order = sorted(((float(sims[i][j]), i, j) for i in range(len(left)) for j in range(len(right))), key=lambda t: (-t[0], t[1], t[2]))
        used_l, used_r = set(), set()
        for score, i, j in order:
            if score < MIN_SIMILARITY:
                break
            if i in used_l or j in used_r:
                continue
            used_l.add(i)
            used_r.add(j)
            pairs.append((left[i], right[j], "similar", round(score / 100, 4)))
        left = [c for i, c in enumerate(left) if i not in used_l]
        right = [c for j, c in enumerate(right) if j not in used_r]
    pairs += [(c, None, None, None) for c in left] + [(None, c, None, None) for c in right]
    return pairs


def _answers_by_model(r: RecordResult) -> dict[str, list[AnswerResult]]:
    out = defaultdict(list)
    for a in r.answers:
        out[a.model].append(a)
    return out


_EMPTY = AnswerResult.model_construct(answer="", claims=[])


def claim_diff(a_results: dict[str, RecordResult], b_results: dict[str, RecordResult], common: list[str]) -> ClaimDiff:
    """The claim-level differences over the records both runs finished (most severe in B first)."""
    diff = ClaimDiff()
    for rid in common:
        by_a, by_b = _answers_by_model(a_results[rid]), _answers_by_model(b_results[rid])
        for model in list(by_a) + [m for m in by_b if m not in by_a]:
            answers_a, answers_b = by_a.get(model, []), by_b.get(model, [])
            for i in range(max(len(answers_a), len(answers_b))):
                x = answers_a[i] if i < len(answers_a) else _EMPTY
                y = answers_b[i] if i < len(answers_b) else _EMPTY
                for ca, cb, how, sim in match_claims(x, y):
                    change = ClaimChange(
                        record_id=rid, model=model, claim=(cb or ca).text,
                        claim_a=ca.text if ca is not None and cb is not None and ca.text != cb.text else None,
                        a=ca.label if ca is not None else None, b=cb.label if cb is not None else None, match=how, similarity=sim,
                        **_why(cb),
                    )
                    _file(diff, change)
    for key in ("newly_ungrounded", "worsened", "fixed", "flips", "only_a", "only_b"):  # most severe verdict in B (then A) first, stable
        getattr(diff, key).sort(key=lambda c: (-SEVERITY.get(c.b or "", -1), -SEVERITY.get(c.a or "", -1)))
    return diff


def _file(diff: ClaimDiff, c: ClaimChange) -> None:
    if c.a is not None and c.b is not None:
        diff.matched += 1
        if c.a != c.b:
            diff.flips.append(c)
    elif c.a is None:
        diff.only_b.append(c)
    else:
        diff.only_a.append(c)
    if c.b in NOT_GROUNDED and c.a not in NOT_GROUNDED:
        diff.newly_ungrounded.append(c)
    elif c.a in NOT_GROUNDED and c.b in NOT_GROUNDED and SEVERITY[c.b] > SEVERITY[c.a]:
        diff.worsened.append(c)
    if c.a in NOT_GROUNDED and (c.b is None or c.b == SUPPORTED):
        diff.fixed.append(c)


def _why(claim: ClaimResult | None) -> dict:
    """For a claim of B that is not grounded (or a judge error): the reason, the best passage, the flags."""
    if claim is None or claim.label == SUPPORTED:
        return {}
    from judge.scoring.ungrounded import best_passage, check_flags, passage_text, rationale

    return {"reason": rationale(claim) or None, "passage": passage_text(best_passage(claim)), "flags": check_flags(claim.checks)}


def describe(c: ClaimChange) -> str:
    """One line naming a changed claim: its text, record, model and both verdicts."""
    return f'"{c.claim}" (record {c.record_id}, model {c.model}: {c.a or "absent"} -> {c.b or "absent"})'


def newly(c: ClaimChange, label: str) -> bool:
    """Whether the claim is newly ``label`` in B: B's verdict is ``label`` (or, for ``not_grounded`` and
    ``hallucinated``, one of those labels) and A's claim was less severe, a judge error, or absent."""
    from judge.verdicts import HALLUCINATED

    group = {"not_grounded": NOT_GROUNDED, "hallucinated": HALLUCINATED}.get(label)
    if group is not None:
        return c.b in group and c.a not in group
    if label == JUDGE_ERROR:
        return c.b == JUDGE_ERROR and c.a != JUDGE_ERROR
    return c.b == label and (c.a is None or SEVERITY.get(c.a, -1) < SEVERITY[label] or c.a == JUDGE_ERROR)
