"""Tells: what a judge could use to tell control claims from real ones without judging, and how well it
separates them. Each surface feature's AUC (0.5 = not at all), and the run's own detector (judge.controls.
detector): a logistic regression over claim *and* call features (claims in the call, place, the nearest other
claim and how much it shares), trained and tested by grouped cross-validation on the run's own controls and
real claims. A research tool: runs no longer measure it nor gate on it (DESIGN.md, "Controls are a canary":
trust comes from calibration on labelled real claims); bench/controls_tells.py and tests use it."""

from __future__ import annotations

from collections.abc import Sequence

from rapidfuzz import fuzz

from bench.detector import grouped_cv_auc
from judge.text import content_words
from judge.text.normalize import normalized

FEATURES = ("length", "share_question", "share_passages", "similarity")
CALL_FEATURES = ("call_claims", "place", "nearest", "nearest_shared")
DETECTOR_FEATURES = (*FEATURES, "numbers", *CALL_FEATURES)


def features(claim: str, question: str, passages: Sequence[str]) -> dict[str, float]:
    """Length in words; the share of the claim's content words in the question, and in the passages offered;
    the token-set similarity to the best passage (a near-copy scores near 1); how many numbers it holds."""
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
        "numbers": float(sum(ch.isdigit() for ch in claim)),
    }


def call_features(texts: Sequence[str]) -> list[dict[str, float]]:
    """Each claim's place in its call as a judge sees it: how many claims the call holds, where it stands, how
    like it the nearest other claim is (similarity, and the share of its content words that claim holds)."""
    words = [set(content_words(normalized(t).text)) for t in texts]
    out = []
    for i, t in enumerate(texts):
        others = [j for j in range(len(texts)) if j != i]
        near = max(others, key=lambda j: fuzz.ratio(t, texts[j]), default=None)
        out.append({
            "call_claims": float(len(texts)),
            "place": i / max(1, len(texts) - 1),
            "nearest": fuzz.ratio(t, texts[near]) / 100 if near is not None else 0.0,
            "nearest_shared": len(words[i] & words[near]) / max(1, len(words[i])) if near is not None else 0.0,
        })
    return out


def auc(positives: Sequence[float], negatives: Sequence[float]) -> float | None:
    """How well one feature separates two groups, either way round: max(AUC, 1 - AUC) (Mann-Whitney U)."""
    if not positives or not negatives:
        return None
    from scipy.stats import mannwhitneyu

    u = mannwhitneyu(positives, negatives).statistic
    a = float(u) / (len(positives) * len(negatives))
    return max(a, 1 - a)


def separation(controls: Sequence[dict[str, float]], real: Sequence[dict[str, float]]) -> dict[str, float | None]:
    """Each feature's AUC between the controls and the real claims (claim features, then call features)."""
    names = [f for f in DETECTOR_FEATURES if all(f in row for row in (*controls[:1], *real[:1]))]
    return {f: (round(v, 4) if (v := auc([c[f] for c in controls], [r[f] for r in real])) is not None else None) for f in names}


class TellSample:
    """A run's real claims and controls as the judges saw them (those triage did not settle), with their claim
    and call features and their record, sampled to at most ``cap`` of each (a seeded reservoir: memory stays
    flat), for the surface features' AUC and the detector in the summary."""

    def __init__(self, cap: int = 2000, seed: int = 0):
        import random

        self.cap, self.rng = cap, random.Random(seed)
        self.seen = {"real": 0, "controls": 0}
        self.rows: dict[str, list[dict]] = {"real": [], "controls": []}

    def _keep(self, kind: str, row: dict) -> None:
        self.seen[kind] += 1
        rows = self.rows[kind]
        if len(rows) < self.cap:
            rows.append(row)
        elif (j := self.rng.randrange(self.seen[kind])) < self.cap:
            rows[j] = row

    def _call(self, kind: str, record_id: str, question: str, shown: list, labels: list | None = None) -> None:
        """One call's claims (text, candidates' texts) as a judge saw them (``labels``: the controls')."""
        for i, ((text, passages), call) in enumerate(zip(shown, call_features([t for t, _ in shown]))):
            self._keep(kind, {**features(text, question, passages), **call, "group": record_id, **({"label": labels[i]} if labels else {})})

    def add(self, result) -> None:
        from judge.verdicts import TRIAGE

        def shown(c) -> bool:
            return not any(v.how == TRIAGE for v in c.verdicts)

        for a in result.answers:
            self._call("real", result.record_id, result.question, [(c.text, [x.text for x in c.candidates]) for c in a.claims if shown(c)])
        for index in sorted({c.answer for c in result.controls}):
            mine = sorted((c for c in result.controls if c.answer == index and shown(c)), key=lambda c: c.position)
            self._call("controls", result.record_id, result.question, [(c.control.text, [x.text for x in c.candidates]) for c in mine])

    def separation(self) -> dict | None:
        """Each surface feature's AUC and the detector's, with the counts behind them; None without controls."""
        return tells(self.rows["controls"], self.rows["real"], self.seen)


def tells(controls: list[dict], real: list[dict], seen: dict | None = None) -> dict | None:
    if not controls or not real:
        return None
    rows = controls + real
    detector = grouped_cv_auc(rows, [1] * len(controls) + [0] * len(real), [r.get("group", str(i)) for i, r in enumerate(rows)], DETECTOR_FEATURES)
    seen = seen or {"real": len(real), "controls": len(controls)}
    return {"real": seen["real"], "controls": seen["controls"], "auc": separation(controls, real), "detector_auc": detector}


def measure(records, claims_of, per_label: int = 24, config=None, keep: bool = False) -> dict:
    """The controls a run makes for each record's answers (``claims_of(record)``: its claims' texts, or a list
    of them per answer; default
    search, triage on, ``config``: a ControlsConfig), and how well the surface features and the detector tell
    them from the real claims a judge is shown. ``keep``: the controls made, too (label, kind, text)."""
    from judge.controls.make import ControlsConfig
    from judge.controls.mix import ControlPlan
    from judge.config import SearchSection
    from judge.search import Index

    search = SearchSection()
    plan = ControlPlan.for_run(config or ControlsConfig(per_label=per_label), records, [r.id for r in records])
    sample = TellSample(cap=10**9)
    kept = []
    for r in records:
        answers = claims_of(r)
        if not answers:
            continue
        indexes = [Index(s.text, s.doc_id) for s in r.sources]
        sources = {s.doc_id: s.text for s in r.sources}
        context = {**sources, **({None: r.sources[0].text} if len(r.sources) == 1 else {})}
        for index, texts in enumerate([answers] if isinstance(answers[0], str) else answers):
            if texts:
                kept += _answer(plan, sample, r, index, texts, indexes, sources, context, search)
    out = {"records": len(records), **(sample.separation() or {"real": sample.seen["real"], "controls": 0, "auc": {}, "detector_auc": None})}
    return {**out, "made": kept, "rows": sample.rows} if keep else out


def _answer(plan, sample: TellSample, r, index: int, texts: list[str], indexes, sources, context, search) -> list[dict]:
    from judge.judges.triage import settle
    from judge.pipeline import to_judge

    shown = [to_judge(indexes, t, str(i + 1), search, sources) for i, t in enumerate(texts)]
    settled = settle(shown, context)
    open_real = [c for c in shown if c.cid not in settled]
    sample._call("real", r.id, r.question, [(c.text, [x.text for x in c.candidates]) for c in open_real])
    controls = plan.for_answer(r, index, shown, len(open_real), settled)
    shown_controls = [to_judge(indexes, c.text, str(i + 1), search, sources) for i, c in enumerate(controls)]
    settled_controls = settle(shown_controls, context)
    judged = [(c, t) for c, t in zip(controls, shown_controls) if t.cid not in settled_controls]
    sample._call("controls", r.id, r.question, [(t.text, [x.text for x in t.candidates]) for _, t in judged], [c.label for c, _ in judged])
    return [{"record_id": r.id, "label": c.label, "kind": c.kind, "text": c.text, "change": c.change, "settled": t.cid in settled_controls}
            for c, t in zip(controls, shown_controls)]
