"""``judge compare``: two runs, metric deltas with paired bootstrap intervals over records, flipped verdicts,
and regression gates for CI. Claim-level differences (newly ungrounded, fixed, flips, claims in one run only) come
from judge.scoring.claim_diff; a failed gate names the newly ungrounded claims and the path of run B and its report.

Metrics are aggregated over the records both runs finished (the intersection, reported when it is not
everything): faithfulness, hallucination rate, judge-error rate, and accuracy against gold claim labels
where the data has them. A gate ``METRIC:MAX_DROP`` fails when the metric gets worse by more than MAX_DROP
*and* the paired 95% interval of the change excludes zero (a drop within noise does not fail the build).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from judge.report.format import fmt_ci
from judge.results import RecordResult
from judge.runs.run import Run
from judge.runs.store import RunDirError
from judge.scoring.claim_diff import claim_diff, describe
from judge.scoring.gold import matched_gold
from judge.scoring.sections import SECTIONS, AnswerItem

# metric -> (numerator key, denominator key, higher is better), from the sections that have paired rates
METRICS = {name: spec for cls in SECTIONS for name, spec in cls.paired.items()}
COUNTERS = [cls for cls in SECTIONS if cls.paired]
BOOTSTRAP = 1000
NAMED_CLAIMS = 5  # newly ungrounded claims a failed gate names (the rest are counted)
_DENOMINATOR = {"judged": "judged claim (every claim a judge_error, or no claims)", "claims": "claim", "gold_n": "claim with a gold label"}


def record_counts(result: RecordResult, record, recorded: dict) -> dict[str, float]:
    """Numerators and denominators of every metric for one record."""
    counts: Counter = Counter()
    for a in result.answers:
        item = AnswerItem(result, a, record, matched_gold(record, a, recorded))
        for cls in COUNTERS:
            cls.count(item, counts)
    keys = dict.fromkeys(k for num, den, _ in METRICS.values() for k in (num, den))
    return {k: float(counts[k]) for k in keys}


@dataclass
class Gate:
    metric: str
    max_drop: float

    @classmethod
    def parse(cls, text: str) -> Gate:
        metric, _, value = text.partition(":")
        if metric not in METRICS or not value:
            raise ValueError(f"gate {text!r}: expected METRIC:MAX_DROP with METRIC one of {', '.join(METRICS)}")
        try:
            drop = float(value)
        except ValueError:
            raise ValueError(f"gate {text!r}: MAX_DROP must be a number") from None
        if not 0 <= drop < float("inf"):  # NaN compares False with everything: a NaN gate would pass any drop
            raise ValueError(f"gate {text!r}: MAX_DROP must be a finite number >= 0")
        return cls(metric, drop)


def compare(
    run_a: Path | Run, run_b: Path | Run, gates: list[Gate] | None = None, seed: int = 0, bootstrap: int = BOOTSTRAP,
    *, allow_missing: bool = False,
) -> dict:
    """Deltas (B - A) of each metric with a paired bootstrap 95% interval, the flips, and the gates' verdicts.

    A gate whose metric is missing in either run (no judged claim, no gold, every judge call failed) fails:
    a gate that cannot be checked must not pass a build. ``allow_missing`` lets it pass, saying so."""
    a, b = (r if isinstance(r, Run) else Run.open(r) for r in (run_a, run_b))
    a_results = {r.record_id: r for r in a.results()}
    b_results = {r.record_id: r for r in b.results()}
    common = [rid for rid in a_results if rid in b_results]
    if not common:  # unrelated runs: nothing to gate on is a wrong input, never a pass
        raise RunDirError(f"{a.path} and {b.path} have no finished record in common: compare runs over the same data")
    only_a = sorted(set(a_results) - set(b_results))
    only_b = sorted(set(b_results) - set(a_results))
    a_records, a_recorded = a.gold_inputs
    b_records, b_recorded = b.gold_inputs
    ca = [record_counts(a_results[i], a_records.get(i), a_recorded) for i in common]
    cb = [record_counts(b_results[i], b_records.get(i), b_recorded) for i in common]
    rng = random.Random(seed)
    samples = [[rng.randrange(len(common)) for _ in common] for _ in range(bootstrap)]
    metrics, missing = {}, {}
    for name, (num, den, higher) in METRICS.items():
        an, ad = np.array([c[num] for c in ca]), np.array([c[den] for c in ca])
        bn, bd = np.array([c[num] for c in cb]), np.array([c[den] for c in cb])
        if ad.sum() == 0 or bd.sum() == 0:
            lacking = [run for run, d in (("A", ad), ("B", bd)) if d.sum() == 0]
            missing[name] = f"run {' and '.join(lacking)}: no {_DENOMINATOR.get(den, den)}"
            continue
        value_a, value_b = an.sum() / ad.sum(), bn.sum() / bd.sum()
        deltas = []
        for idx in samples:
            sa, sb = ad[idx].sum(), bd[idx].sum()
            if sa and sb:
                deltas.append(bn[idx].sum() / sb - an[idx].sum() / sa)
        ci = [float(np.percentile(deltas, 2.5)), float(np.percentile(deltas, 97.5))] if deltas else None
        metrics[name] = {"a": float(value_a), "b": float(value_b), "delta": float(value_b - value_a), "ci95": ci, "higher_is_better": higher}
    claims = claim_diff(a_results, b_results, common)
    see = _see(claims, b.path)
    gate_results = []
    for g in gates or []:
        m = metrics.get(g.metric)
        if m is None:
            why = f"{g.metric} is not available in both runs ({missing[g.metric]})"
            why += ": allowed by --allow-missing" if allow_missing else ": cannot be checked (pass --allow-missing to accept that)"
            gate_results.append({"gate": f"{g.metric}:{g.max_drop}", "failed": not allow_missing, "missing": True, "why": why + ("" if allow_missing else see)})
            continue
        worsening = -m["delta"] if m["higher_is_better"] else m["delta"]
        excludes_zero = m["ci95"] is not None and (m["ci95"][0] > 0 or m["ci95"][1] < 0)
        failed = worsening > g.max_drop and excludes_zero
        change = f"got worse by {worsening:.4f}" if worsening > 0 else f"improved by {-worsening:.4f}" if worsening < 0 else "did not change"
        why = (
            f"{g.metric} {change} (allowed drop {g.max_drop}), 95% CI of the change {fmt_ci(m['ci95'], 4, signed=True)}"
            + ("" if excludes_zero else ", which includes zero: within noise")
        )
        why += see if failed else ""
        gate_results.append({"gate": f"{g.metric}:{g.max_drop}", "failed": failed, "worsening": worsening, "why": why})
    if gates:  # a verdict is only as good as its judges: a gated judge that failed or was unverified fails the build
        gate_results += _judges_gate(a, "A") + _judges_gate(b, "B")
    return {
        "run_a": str(a.path),
        "run_b": str(b.path),
        "judges_verified": {"a": _verified(a), "b": _verified(b)},
        "records_compared": len(common),
        "records_only_in_a": only_a,
        "records_only_in_b": only_b,
        "note": None if not (only_a or only_b) else f"the runs cover different records: compared the {len(common)} in both",
        "metrics": metrics,
        "flips": [c.model_dump() for c in claims.flips],
        "claims": claims.model_dump(exclude={"flips"}),
        "gates": gate_results,
        "failed": any(g["failed"] for g in gate_results),
        "bootstrap": {"samples": bootstrap, "seed": seed},
        "allow_missing": allow_missing,
    }



def _health(run: Run):
    from judge.controls.health import HealthReport

    value = (run.summary or {}).get("judge_health")
    return HealthReport.model_validate(value) if value else None


def _verified(run: Run) -> bool:
    health = _health(run)
    return bool(health) and health.enabled and health.gate and not health.failed


def _judges_gate(run: Run, which: str) -> list[dict]:
    """The judges of one run as a gate: failed when a gated judge failed or could not be verified on its
    controls; a run whose controls or gate are off passes it, saying its judges were not verified."""
    health = _health(run)
    if health is None:
        return [{"gate": f"judges of run {which}", "failed": True, "why": f"run {which} ({run.path}) has no judge health: its judges were not verified"}]
    if health.failed:
        return [{"gate": f"judges of run {which}", "failed": True, "why": f"run {which}: " + "; ".join(health.failure_lines())}]
    if not (health.enabled and health.gate):
        return [{"gate": f"judges of run {which}", "failed": False, "why": f"run {which}: {health.headline()}"}]
    return []


def _see(claims, run_b: Path) -> str:
    """What a failed gate adds: the claims newly ungrounded in B (up to NAMED_CLAIMS) and where to look."""
    new = claims.newly_ungrounded
    named = "; ".join(describe(c) for c in new[:NAMED_CLAIMS]) + (f"; and {len(new) - NAMED_CLAIMS} more" if len(new) > NAMED_CLAIMS else "")
    head = f". Newly ungrounded in B ({len(new)}): {named}" if new else ". No claim is newly ungrounded in B"
    worse = claims.worsened
    if worse:
        head += f". Worse in B ({len(worse)}): " + "; ".join(describe(c) for c in worse[:NAMED_CLAIMS]) + (
            f"; and {len(worse) - NAMED_CLAIMS} more" if len(worse) > NAMED_CLAIMS else "")
    return f"{head}. Run B: {run_b}; report: {Path(run_b) / 'report.html'}"
