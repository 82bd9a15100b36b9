"""Tells: the surface features a judge could use to tell control claims from real ones without judging, and
how well each separates them (AUC, 0.5 = not at all). The design promise (DESIGN.md) is that none of them
does: controls are made from the run's own claims. Tests and bench/controls_tells.py measure it."""

from __future__ import annotations

from collections.abc import Sequence

from rapidfuzz import fuzz

from judge.text import content_words
from judge.text.normalize import normalized

FEATURES = ("length", "share_question", "share_passages", "similarity")


def features(claim: str, question: str, passages: Sequence[str]) -> dict[str, float]:
    """Length in words; the share of the claim's content words in the question, and in the passages offered;
    the token-set similarity to the best passage (a near-copy scores near 1)."""
    words = set(content_words(normalized(claim).text))
    asked = set(content_words(normalized(question).text))
    shown = set().union(*(content_words(normalized(p).text) for p in passages)) if passages else set()
    n = max(1, len(words))
    similarity = max((fuzz.ratio(normalized(claim).text, normalized(p).text) / 100 for p in passages), default=0.0)
    return {
        "length": float(len(claim.split())),
        "share_question": len(words & asked) / n,
        "share_passages": len(words & shown) / n,
        "similarity": similarity,
    }


def auc(positives: Sequence[float], negatives: Sequence[float]) -> float | None:
    """How well one feature separates two groups, either way round: max(AUC, 1 - AUC) (Mann-Whitney U)."""
    if not positives or not negatives:
        return None
    from scipy.stats import mannwhitneyu

    u = mannwhitneyu(positives, negatives).statistic
    a = float(u) / (len(positives) * len(negatives))
    return max(a, 1 - a)


def separation(controls: Sequence[dict[str, float]], real: Sequence[dict[str, float]]) -> dict[str, float | None]:
    """Each feature's AUC between the controls and the real claims."""
    return {f: (round(v, 4) if (v := auc([c[f] for c in controls], [r[f] for r in real])) is not None else None) for f in FEATURES}


class TellSample:
    """A run's real claims and controls as the judges saw them (those triage did not settle), sampled to at most
    ``cap`` of each (a seeded reservoir: memory stays flat), for :meth:`separation` in the summary."""

    def __init__(self, cap: int = 2000, seed: int = 0):
        import random

        self.cap, self.rng = cap, random.Random(seed)
        self.seen = {"real": 0, "controls": 0}
        self.rows: dict[str, list[dict[str, float]]] = {"real": [], "controls": []}

    def _keep(self, kind: str, row: dict[str, float]) -> None:
        self.seen[kind] += 1
        rows = self.rows[kind]
        if len(rows) < self.cap:
            rows.append(row)
        elif (j := self.rng.randrange(self.seen[kind])) < self.cap:
            rows[j] = row

    def add(self, result) -> None:
        from judge.verdicts import TRIAGE

        def shown(c) -> bool:
            return not any(v.how == TRIAGE for v in c.verdicts)

        for a in result.answers:
            for c in a.claims:
                if shown(c):
                    self._keep("real", features(c.text, result.question, [x.text for x in c.candidates]))
        for c in result.controls:
            if shown(c):
                self._keep("controls", features(c.control.text, result.question, [x.text for x in c.candidates]))

    def separation(self) -> dict | None:
        """Each feature's AUC, with the counts behind it; None without controls."""
        if not self.rows["controls"] or not self.rows["real"]:
            return None
        return {"real": self.seen["real"], "controls": self.seen["controls"], "auc": separation(self.rows["controls"], self.rows["real"])}


def measure(records, claims_of, per_label: int = 24) -> dict:
    """The controls a run makes among each record's claims (``claims_of(record)``: its claims' texts; default
    search, triage on), and each feature's AUC between them and the real claims a judge is shown."""
    from judge.controls.make import ControlsConfig
    from judge.controls.mix import ControlPlan
    from judge.judges.triage import settle
    from judge.pipeline import candidates, to_judge
    from judge.runs.config import SearchSection
    from judge.search import Index

    search = SearchSection()
    plan = ControlPlan.for_run(ControlsConfig(per_label=per_label), records, [r.id for r in records])
    real, made = [], []
    for r in records:
        texts = claims_of(r)
        if not texts:
            continue
        indexes = [Index(s.text, s.doc_id) for s in r.sources]
        sources = {s.doc_id: s.text for s in r.sources}
        context = {**sources, **({None: r.sources[0].text} if len(r.sources) == 1 else {})}
        shown = [to_judge(indexes, t, str(i + 1), search, sources) for i, t in enumerate(texts)]
        settled = settle(shown, context)
        open_real = [c for c in shown if c.cid not in settled]
        controls = plan.for_answer(r, 0, shown, 0, len(open_real), lambda t: candidates(indexes, t, search), settled)
        shown_controls = [to_judge(indexes, c.text, f"c{i}", search, sources) for i, c in enumerate(controls)]
        real += [features(c.text, r.question, [x.text for x in c.candidates]) for c in open_real]
        settled_controls = settle(shown_controls, context)
        made += [features(c.text, r.question, [x.text for x in c.candidates]) for c in shown_controls if c.cid not in settled_controls]
    return {"records": len(records), "real": len(real), "controls": len(made), "auc": separation(made, real)}
