"""A panel goes on without a judge that is plainly broken: once a run's health is known, a judge that failed
the canary, or whose calibration shows it unfit (JudgeTrust.unfit), no longer votes (too few controls is never a
reason). Each claim's panel label is taken again from the judges left (triage's settlements stay); the
excluded judge's verdicts stay beside them, and reports say it was excluded. With no judge left, nothing is
excluded and the run exits 3 as any run whose judges fail."""

from __future__ import annotations

from judge.controls.health import HealthReport
from judge.judges import panel_verdict
from judge.results import RecordResult
from judge.verdicts import TRIAGE


def excluded(health: HealthReport | None, panel: list[str]) -> dict[str, str]:
    """The panel's judges to leave out, with why; empty for a single judge, or when none would be left."""
    if health is None or len(panel) < 2:
        return {}
    bad = {j.judge: j.verdict for j in health.judges if j.gated and j.status == "failed" and j.judge in panel}
    for t in health.trust:  # a judge its calibration shows unfit (JudgeTrust.unfit)
        if t.judge in panel and t.judge not in bad and (why := t.unfit()):
            bad[t.judge] = f"its calibration shows it {why}"
    return bad if len([n for n in panel if n not in bad]) >= 1 else {}


def revote(result: RecordResult, out: set[str]) -> RecordResult:
    """The record with each claim's panel label from the verdicts of the judges not in ``out``."""
    answers = []
    for a in result.answers:
        claims = []
        for c in a.claims:
            kept = [v for v in c.verdicts if v.how == TRIAGE or v.judge not in out]
            label, evidence = panel_verdict(kept)
            claims.append(c.model_copy(update={"label": label, "evidence": evidence}))
        answers.append(a.model_copy(update={"claims": claims}))
    return result.model_copy(update={"answers": answers})


def mark(health: HealthReport, out: dict[str, str]) -> HealthReport:
    """The health with each excluded judge reported, not gated: the panel went on without it."""
    judges = [j.model_copy(update={"gated": False, "excluded": True, "verdict": f"EXCLUDED from the panel's verdicts ({out[j.judge]})"})
              if j.judge in out else j for j in health.judges]
    return health.model_copy(update={"judges": judges})


def apply(store, summary, config, manifest: dict, summarize, again: bool = False):
    """Exclude the panel's failing judges from a finished run, re-vote and re-summarize (``summarize``); the
    summary says whom and why (``panel_excluded``). ``again``: re-vote anyway (merged shards)."""
    out = excluded(summary.judge_health, list(config.adjudicate.judges))
    if not out and not (again and len(config.adjudicate.judges) > 1):
        return summary
    store.write_parts("results.jsonl", (r.model_dump_json() + "\n" for r in (revote(r, set(out)) for r in store.iter_finished())))
    after = summarize(store.iter_finished())
    if out:
        after = after.model_copy(update={"judge_health": mark(after.judge_health, out), "panel_excluded": out})
    return after
