"""A panel: triage first, then every judge on the claims triage left open, and one verdict per claim."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import replace

from judge.judges.base import ClaimToJudge, Judge, JudgeContext
from judge.judges.triage import settle
from judge.models import Span
from judge.results import JudgeVerdict
from judge.verdicts import JUDGE_ERROR, SEVERITY, is_judged


def panel_verdict(verdicts: list[JudgeVerdict]) -> tuple[str, list[Span]]:
    """Majority of the judges that answered; a tie goes to the most severe label; all failed: judge_error.

    The evidence is every span cited by a judge that agrees with the panel's label."""
    answered = [v for v in verdicts if is_judged(v.label)]
    if not answered:
        return JUDGE_ERROR, []
    counts = Counter(v.label for v in answered)
    top = max(counts.values())
    label = max((lbl for lbl, n in counts.items() if n == top), key=lambda lbl: SEVERITY[lbl])
    seen, evidence = set(), []
    for v in answered:
        if v.label != label:
            continue
        for s in v.evidence:
            key = (s.doc_id, s.start_char, s.end_char)
            if key not in seen:
                seen.add(key)
                evidence.append(s)
    return label, evidence


class Panel:
    def __init__(self, judges: list[Judge], triage: bool = True):
        self.judges = judges
        self.triage = triage

    async def verdicts(self, claims: list[ClaimToJudge], context: JudgeContext) -> dict[str, list[JudgeVerdict]]:
        """Every verdict per claim id: triage's alone, or one per judge in the panel's order. The judges run
        concurrently; their call records reach ``context.calls`` in the panel's order."""
        verdicts: dict[str, list[JudgeVerdict]] = {c.cid: [] for c in claims}
        settled = settle(claims, context) if self.triage else {}
        for cid, v in settled.items():
            verdicts[cid].append(v)
        open_claims = [c for c in claims if c.cid not in settled]
        if not open_claims:
            return verdicts
        contexts = [replace(context, calls=[]) for _ in self.judges]
        results = await asyncio.gather(*(j.judge(open_claims, ctx) for j, ctx in zip(self.judges, contexts)))
        for by_claim, ctx in zip(results, contexts):
            context.calls.extend(ctx.calls)
            for cid, v in by_claim.items():
                verdicts[cid].append(v)
        return verdicts
