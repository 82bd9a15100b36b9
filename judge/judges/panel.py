"""A panel: triage first, then every judge on the claims triage left open, and one verdict per claim.

A judge's ``unsure`` (the no-model judge's low confidence) is no vote: the model judges beside it decide the
claim. With ``cascade``, the no-model judges rule first and only the claims they are unsure of go to the
model judges (a cheaper run; the no-model judges' other verdicts stand alone)."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import replace

from judge.judges.base import ClaimToJudge, Judge, JudgeContext
from judge.judges.model import ModelJudge
from judge.judges.triage import settle
from judge.models import Span
from judge.results import JudgeVerdict
from judge.verdicts import JUDGE_ERROR, SEVERITY, UNSURE, is_ruled


def panel_verdict(verdicts: list[JudgeVerdict]) -> tuple[str, list[Span]]:
    """Majority of the judges that ruled; a tie goes to the most severe label; none ruled: unsure when a
    judge was unsure, else judge_error (all failed).

    The evidence is every span cited by a judge that agrees with the panel's label."""
    answered = [v for v in verdicts if is_ruled(v.label)]
    if not answered:
        return (UNSURE if any(v.label == UNSURE for v in verdicts) else JUDGE_ERROR), []
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


def is_model_judge(judge: Judge) -> bool:
    """A judge that calls a model of the config (the deterministic judge and registered judges do not)."""
    return isinstance(judge, ModelJudge)


class Panel:
    def __init__(self, judges: list[Judge], triage: bool = True, cascade: bool = False):
        self.judges = judges
        self.triage = triage
        self.cascade = cascade and any(is_model_judge(j) for j in judges) and not all(is_model_judge(j) for j in judges)

    async def verdicts(self, claims: list[ClaimToJudge], context: JudgeContext) -> dict[str, list[JudgeVerdict]]:
        """Every verdict per claim id: triage's alone, or one per judge in the panel's order. The judges run
        concurrently; their call records reach ``context.calls`` in the panel's order."""
        verdicts: dict[str, list[JudgeVerdict]] = {c.cid: [] for c in claims}
        settled = settle(claims, context) if self.triage else {}
        for cid, v in settled.items():
            verdicts[cid].append(v)
        open_claims = [c for c in claims if c.cid not in settled]
        if not self.cascade:
            await self._ask(self.judges, open_claims, context, verdicts)
            return verdicts
        await self._ask([j for j in self.judges if not is_model_judge(j)], open_claims, context, verdicts)
        unsure = [c for c in open_claims if any(v.label == UNSURE for v in verdicts[c.cid])]
        await self._ask([j for j in self.judges if is_model_judge(j)], unsure, context, verdicts)
        return verdicts

    @staticmethod
    async def _ask(judges: list[Judge], claims: list[ClaimToJudge], context: JudgeContext, verdicts: dict) -> None:
        """Every judge of ``judges`` on ``claims``, concurrently; their verdicts appended in their order."""
        if not claims or not judges:
            return
        contexts = [replace(context, calls=[]) for _ in judges]
        results = await asyncio.gather(*(j.judge(claims, ctx) for j, ctx in zip(judges, contexts)))
        for by_claim, ctx in zip(results, contexts):
            context.calls.extend(ctx.calls)
            for cid, v in by_claim.items():
                verdicts[cid].append(v)
