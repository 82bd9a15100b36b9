"""``judge compare``: two runs, metric deltas paired per record, claim-level differences (judge.scoring.claim_diff)
and regression gates for CI (docs/regression.md). Two kinds of gate:

- ``new_LABEL:N`` fails when more than N claims are newly LABEL in B (no statistics: one newly contradicted
  claim on ten questions is seen).
- ``METRIC:MAX_DROP`` fails when the metric got worse by more than MAX_DROP *and* an exact one-sided sign test
  over the records gives p < ALPHA; where too few records changed for the test to reach ALPHA, it says "too
  few records to tell" and the claim-level gate decides.

The paired bootstrap interval of each delta is reported as a description; it decides nothing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from judge.metrics.paired import mean_ci, sign_test  # noqa: F401  (compare's sign test; imported from here too)

from judge.results import RecordResult
from judge.runs.run import Run
from judge.runs.store import RunDirError
from judge.scoring.claim_diff import ClaimChange, claim_diff, describe, newly
from judge.scoring.confirm import DEFAULT_FLOOR, SAMPLES, other_setup, reasker_for, same_judges, settle_changes
from judge.metrics.gold import matched_gold
from judge.scoring.base import AnswerItem
from judge.scoring.sections import SECTIONS
from judge.verdicts import CLAIM_LABELS, JUDGE_ERROR, SEVERITY, SUPPORTED

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


ALPHA = 0.05  # one-sided level of the sign test of a delta gate
# the groups, then every label a claim can newly end with, most severe first (judge.verdicts: the one vocabulary)
CLAIM_GATES = ("not_grounded", "hallucinated", *sorted((lbl for lbl in CLAIM_LABELS if lbl != SUPPORTED), key=SEVERITY.get, reverse=True))
CLAIM_ALIASES = {"ungrounded": "not_grounded"}
DEFAULT_GATES = ("hallucination_rate:0", "faithfulness:0")


@dataclass
class Gate:
    """A delta gate (``metric``, ``max_drop``) or a claim-level gate (``claims``: a label group, ``max_new``)."""

    metric: str | None
    max_drop: float = 0.0
    claims: str | None = None
    max_new: int = 0
    bound: str | None = None  # a bound gate on run B's corrected rate, as written (judge.scoring.corrected_compare)

    @property
    def spec(self) -> str:
        if self.bound:
            return self.bound
        return f"new_{self.claims}:{self.max_new}" if self.claims else f"{self.metric}:{self.max_drop}"

    @classmethod
    def parse(cls, text: str) -> Gate:
        from judge.scoring.corrected_compare import parse_bound

        if parse_bound(text) is not None:  # corrected_hallucination_rate<=0.1: on the interval of B's corrected rate
            return cls(None, bound=text)
        name, _, value = text.partition(":")
        if name.startswith("new_"):
            label = CLAIM_ALIASES.get(name[4:], name[4:])
            if label not in CLAIM_GATES or not value:
                raise ValueError(f"gate {text!r}: expected new_LABEL:N with LABEL one of {', '.join(CLAIM_GATES)} (or ungrounded)")
            if not value.isdigit() or len(value) > 9:
                raise ValueError(f"gate {text!r}: N must be a whole number of claims >= 0")
            return cls(None, claims=label, max_new=int(value))
        if name not in METRICS or not value:
            raise ValueError(f"gate {text!r}: expected METRIC:MAX_DROP with METRIC one of {', '.join(METRICS)}, "
                             f"or new_LABEL:N with LABEL one of {', '.join(CLAIM_GATES)}, or a bound on a corrected rate "
                             "(corrected_hallucination_rate<=X, corrected_faithfulness>=X)")
        try:
            drop = float(value)
        except ValueError:
            raise ValueError(f"gate {text!r}: MAX_DROP must be a number") from None
        if not drop >= 0 or drop == float("inf"):
            raise ValueError(f"gate {text!r}: MAX_DROP must be a number >= 0")
        return cls(name, drop)


def parse_gates(specs: list[str] | tuple[str, ...] | None) -> list[Gate]:
    """Gates from their specs; None or [] gives DEFAULT_GATES, ["none"] gives no gate at all."""
    if not specs:
        specs = DEFAULT_GATES
    if list(specs) == ["none"]:
        return []
    if "none" in specs:
        raise ValueError("gate none: give it alone (no gate at all), or give the gates you want")
    return [Gate.parse(g) for g in specs]


def decidable(changed: int, alpha: float = ALPHA) -> bool:
    """Whether ``changed`` records (worse or better) could give p < alpha at all (all of them worse)."""
    return 0.5**changed < alpha


def min_changed(alpha: float = ALPHA) -> int:
    """The fewest changed records with which the sign test can reach ``alpha``."""
    return next(n for n in range(1, 64) if decidable(n, alpha))


def compare(
    run_a: Path | Run, run_b: Path | Run, gates: list[Gate] | None = None, seed: int = 0, bootstrap: int = BOOTSTRAP,
    *, allow_missing: bool = False, prompt_a: str | None = None, prompt_b: str | None = None, confirm: int = 0, use_cache: bool = True,
    asker=None,
) -> dict:
    """Deltas (B - A) with their tests, the claim-level differences and the gates' verdicts. ``prompt_a``/
    ``prompt_b``: one prompt variant's answers, compared model by model. A gate whose metric is missing fails
    (one that cannot be checked must not pass a build) unless ``allow_missing``."""
    from judge.runs.selection import check_whole

    a, b = (r if isinstance(r, Run) else Run.open(r) for r in (run_a, run_b))
    for run in (a, b):  # a run that says complete is held to its own files (issue 50.12): a trimmed one compares as a smaller one
        check_whole(run.store, run.summary_model)
    a_results = {r.record_id: _variant(r, prompt_a) for r in a.results()}
    b_results = {r.record_id: _variant(r, prompt_b) for r in b.results()}
    if not any(rid in b_results for rid in a_results):  # unrelated runs: nothing to gate on is a wrong input, never a pass
        raise RunDirError(f"{a.path} and {b.path} have no finished record in common: compare runs over the same data")
    for which, run, prompt, results in (("A", a, prompt_a, a_results), ("B", b, prompt_b, b_results)):
        if prompt is not None and not any(x.answers for x in results.values()):
            known = sorted({x.prompt for r in run.results() for x in r.answers if x.prompt})
            raise RunDirError(f"run {which} ({run.path}) has no answer of prompt {prompt!r} (its prompt variants: {', '.join(known) or 'none'})")
    if confirm and gates and asker is None:  # the re-asking judges are the user's own: the packaged models file, never run B's config.yaml
        from judge.scoring.confirm import default_asker

        asker = default_asker()
    unconfirmable = (same_judges(a, b) or other_setup(b.config, asker) or asker.no_records()) if confirm and gates else None
    reask, floor, floor_from = None, DEFAULT_FLOOR, None
    if confirm and gates and not unconfirmable:
        from judge.config import ConfigError

        try:
            reask, floor, floor_from = reasker_for(b, use_cache, asker)
            reask.read(a_results)  # a claim that is not its answer's (an edited run) is never re-asked
            reask.read(b_results)
        except ConfigError as e:  # a judge the user's file lacks: not re-asked, said so (the changes count as they are: stricter, never a pass)
            unconfirmable = str(e)
    core = compare_results(a_results, b_results, gates, a.gold_inputs, b.gold_inputs, seed=seed, bootstrap=bootstrap,
                           allow_missing=allow_missing, run_b=b.path, reask=reask, samples=confirm, floor=floor)
    if core.get("confirmation") is not None:
        core["confirmation"].update(floor_from=floor_from, judges=[j.name for j in reask.judges], usage=reask.calls)
    gate_results = core.pop("gates")
    from judge.scoring.corrected_compare import bound_gate, comparison

    gate_results += [bound_gate(g.bound, b, allow_missing) for g in gates or [] if g.bound]
    if gates:  # a verdict is only as good as its judges: a gated judge that failed or was unverified fails the build
        gate_results += _judges_gate(a, "A") + _judges_gate(b, "B")
    return {
        "run_a": str(a.path),
        "run_b": str(b.path),
        "prompts": {"a": prompt_a, "b": prompt_b},
        "models": core.pop("models"),
        "judges_verified": {"a": _verified(a), "b": _verified(b)},
        **{k: core.pop(k) for k in ("records_compared", "records_only_in_a", "records_only_in_b", "note", "metrics", "flips", "claims", "new_claims")},
        "confirmation": core.pop("confirmation") or ({"not_reasked": unconfirmable} if unconfirmable else None),
        "corrected": comparison(a, b),
        "gates": gate_results,
        "failed": any(g["failed"] for g in gate_results),
        "verdict": verdict(gate_results),
        "bootstrap": {"samples": bootstrap, "seed": seed},
        "allow_missing": allow_missing,
    }


def compare_results(
    a_results: dict[str, RecordResult], b_results: dict[str, RecordResult], gates: list[Gate] | None,
    a_gold: tuple = ({}, {}), b_gold: tuple = ({}, {}), *, seed: int = 0, bootstrap: int = BOOTSTRAP,
    allow_missing: bool = False, run_b: Path | str = "run B", reask=None, samples: int = SAMPLES, floor: float = DEFAULT_FLOOR,
) -> dict:
    """:func:`compare` on results by record id, every gate but the judges' health (bench/gates_sim.py calls it).
    ``a_gold``/``b_gold``: (records, recorded answers); ``reask``: changed claims settled first (scoring.confirm)."""
    common = [rid for rid in a_results if rid in b_results]
    if not common:
        raise RunDirError("the two runs have no finished record in common: compare runs over the same data")
    settled = []
    if reask is not None and gates and samples:
        a_results, b_results, settled = settle_changes(a_results, b_results, common, reask, samples, floor)
    only_a = sorted(set(a_results) - set(b_results))
    only_b = sorted(set(b_results) - set(a_results))
    (a_records, a_recorded), (b_records, b_recorded) = a_gold, b_gold
    ca = [record_counts(a_results[i], a_records.get(i), a_recorded) for i in common]
    cb = [record_counts(b_results[i], b_records.get(i), b_recorded) for i in common]
    metrics, missing = {}, {}
    for name, (num, den, higher) in METRICS.items():
        an, ad = np.array([c[num] for c in ca]), np.array([c[den] for c in ca])
        bn, bd = np.array([c[num] for c in cb]), np.array([c[den] for c in cb])
        both = (ad > 0) & (bd > 0)  # paired per record: a record counts where both runs have its rate
        if not both.any():
            lacking = [run for run, d in (("A", ad), ("B", bd)) if d.sum() == 0]
            missing[name] = (f"run {' and '.join(lacking)}: no {_DENOMINATOR.get(den, den)}" if lacking else
                             f"no record has a {_DENOMINATOR.get(den, den).split(' (')[0]} in both runs")
            continue
        ra, rb = an[both] / ad[both], bn[both] / bd[both]
        diffs = rb - ra
        ci = mean_ci(diffs, bootstrap, seed) if bootstrap else None
        metrics[name] = {"a": float(ra.mean()), "b": float(rb.mean()), "delta": float(diffs.mean()), "ci95": ci, "higher_is_better": higher,
                         "paired_records": int(both.sum()), "pooled": {"a": float(an.sum() / ad.sum()) if ad.sum() else None,
                                                                        "b": float(bn.sum() / bd.sum()) if bd.sum() else None},
                         "records": _sign_test(an, ad, bn, bd, higher)}
    claims = claim_diff(a_results, b_results, common)
    changes = [*claims.flips, *claims.only_a, *claims.only_b]
    new_counts = {label: [c for c in changes if newly(c, label)] for label in CLAIM_GATES}
    see = _see(claims, run_b)
    fallback = next((g for g in gates or [] if g.claims == "not_grounded"), Gate(None, claims="not_grounded", max_new=0))
    gate_results = []
    for g in gates or []:
        if g.bound:  # on run B's corrected rate: judged in compare(), which has the runs
            continue
        if g.claims:
            gate_results.append(_claim_gate(g, new_counts[g.claims], run_b))
            continue
        m = metrics.get(g.metric)
        if m is None:
            why = f"{g.metric} is not available in both runs ({missing[g.metric]})"
            why += ": allowed by --allow-missing" if allow_missing else ": cannot be checked (pass --allow-missing to accept that)"
            gate_results.append({"gate": g.spec, "failed": not allow_missing, "missing": True, "summary": why, "why": why + ("" if allow_missing else see)})
            continue
        if g.metric == "judge_error_rate":  # its claim-level counterpart: claims that became judge errors
            decider = (sum(1 for c in changes if c.b == JUDGE_ERROR and c.a != JUDGE_ERROR), 0, "claims newly judge_error", "no claim newly a judge error")
        elif g.metric in ("faithfulness", "hallucination_rate"):
            decider = (len(new_counts["not_grounded"]), fallback.max_new, "claims newly not grounded", f"the claim-level gate {fallback.spec}")
        else:  # no claim-level counterpart (accuracy against gold): the point estimate over the allowed drop fails
            decider = None
        gate_results.append(_delta_gate(g, m, len(common), decider, see))
    models_a = sorted({x.model for r in (a_results[i] for i in common) for x in r.answers})
    models_b = sorted({x.model for r in (b_results[i] for i in common) for x in r.answers})
    notes = [] if not (only_a or only_b) else [f"the runs cover different records: compared the {len(common)} in both"]
    if models_a and models_b and not set(models_a) & set(models_b):
        notes.append(
            f"the runs share no model: A has {', '.join(models_a)}; B has {', '.join(models_b)}, so no claim of one is matched with a claim of "
            "the other (each is 'only in A' or 'only in B', and every not-grounded claim of B counts as new); to compare prompt variants "
            "model by model, pass --prompt-a VARIANT --prompt-b VARIANT")
    return {
        "models": {"a": models_a, "b": models_b},
        "records_compared": len(common),
        "records_only_in_a": only_a,
        "records_only_in_b": only_b,
        "note": "; ".join(notes) or None,
        "metrics": metrics,
        "flips": [c.model_dump() for c in claims.flips],
        "claims": claims.model_dump(exclude={"flips"}),
        "new_claims": {label: len(v) for label, v in new_counts.items()},
        "confirmation": {"samples": samples, "floor": floor, "claims": [x.model_dump() for x in settled]} if reask is not None and gates and samples else None,
        "gates": gate_results,
        "failed": any(g["failed"] for g in gate_results),
    }


WHAT_TO_DO = ("calibrate the judge once on a larger set (judge calibrate CONFIG --dataset MORE.jsonl --out FILE, and calibration: FILE in "
              "the config; docs/ci.md), or raise controls.per_label")


def verdict(gates: list[dict]) -> dict:
    """Passed or failed, each failed gate's line, and what to do when the judges could not be verified."""
    failed = [g for g in gates if g["failed"]]
    if not gates:
        return {"failed": False, "line": "no gate checked (--gate none): a report, not a verdict", "gates": []}
    if not failed:
        return {"failed": False, "line": f"PASS: every gate passed ({', '.join(g['gate'] for g in gates)})", "gates": []}
    lines = []
    for g in failed:
        why = g.get("summary") or g["why"]
        if g["gate"].startswith("judges of run"):
            why += (". " + WHAT_TO_DO) if ("unverified" in why or "not verified" in why) else ". Use another judge, or fix the one that failed"
        lines.append(f"{g['gate']}: {why}")
    return {"failed": True, "line": f"FAIL: {len(failed)} of {len(gates)} gates failed ({', '.join(g['gate'] for g in failed)})", "gates": lines}


def _variant(result: RecordResult, prompt: str | None) -> RecordResult:
    """The record's answers of one prompt variant, labelled by their model alone (all of them for None)."""
    if prompt is None:
        return result
    answers = [x.model_copy(update={"model": x.model_name}) for x in result.answers if x.prompt == prompt]
    return result.model_copy(update={"answers": answers})


def _sign_test(an, ad, bn, bd, higher: bool) -> dict:
    """Records worse, better and tied in B (rates compared exactly), and the sign test's p of "B is worse"."""
    worse = better = ties = 0
    for xn, xd, yn, yd in zip(an, ad, bn, bd):
        if not xd or not yd:
            continue
        diff = yn * xd - xn * yd  # sign of rate B - rate A
        if diff == 0:
            ties += 1
        elif (diff < 0) == higher:
            worse += 1
        else:
            better += 1
    return {"worse": worse, "better": better, "ties": ties, "p_value": round(sign_test(worse, better), 6)}


def _claim_gate(g: Gate, new: list[ClaimChange], run_b: Path) -> dict:
    failed = len(new) > g.max_new
    noun = g.claims.replace("_", " ")
    why = short = f"{len(new)} claim{'' if len(new) == 1 else 's'} newly {noun} in B (allowed {g.max_new})"
    if new:
        why += ": " + _named(new)
    if failed:
        why += f". Run B: {run_b}; report: {Path(run_b) / 'report.html'}"
    return {"gate": g.spec, "failed": failed, "kind": "claims", "count": len(new), "summary": short, "why": why,
            "claims": [c.model_dump() for c in new]}


def _delta_gate(g: Gate, m: dict, n_records: int, decider: tuple | None, see: str) -> dict:
    """Within the allowed drop it passes; else the sign test decides when it can, else ``decider`` (claims
    counted, allowed, what they are, the rule's name), else the point estimate fails it."""
    worsening = -m["delta"] if m["higher_is_better"] else m["delta"]
    t = m["records"]
    change = f"got worse by {worsening:.4f}" if worsening > 0 else f"improved by {-worsening:.4f}" if worsening < 0 else "did not change"
    records = f"{t['worse']} of {n_records} records worse, {t['better']} better"
    why = f"{g.metric} {change} (allowed drop {g.max_drop}); {records}"
    out = {"gate": g.spec, "kind": "delta", "worsening": worsening, "p_value": t["p_value"]}
    if worsening <= g.max_drop:
        return {**out, "failed": False, "decided_by": "delta", "summary": why, "why": why}
    changed = t["worse"] + t["better"]
    if t["p_value"] < ALPHA:
        why += f", sign test p = {t['p_value']:.4g} < {ALPHA}"
        return {**out, "failed": True, "decided_by": "sign test", "summary": why, "why": why + see}
    if decidable(changed):
        why += f", sign test p = {t['p_value']:.4g} >= {ALPHA}: within noise"
        return {**out, "failed": False, "decided_by": "sign test", "summary": why, "why": why}
    # too few records changed for any outcome to reach ALPHA: never "within noise"; the claims decide
    why += (f": too few records to tell ({n_records} records, {changed} changed; the sign test needs {min_changed()} or more changed "
            f"records to reach p < {ALPHA})")
    if decider is None:
        why += f", and {g.metric} has no claim-level gate, so the change over the allowed drop fails"
        return {**out, "failed": True, "decided_by": "point estimate", "too_few_records": True, "summary": why, "why": why + see}
    count, allowed, what, rule = decider
    failed = count > allowed
    why += f", so {rule} decides: {count} {what} (allowed {allowed})"
    return {**out, "failed": failed, "decided_by": "claims", "too_few_records": True, "summary": why, "why": why + (see if failed else "")}


def _verified(run: Run) -> bool:
    health = run.health
    return bool(health) and health.enabled and health.gate and not health.failed


def _judges_gate(run: Run, which: str) -> list[dict]:
    """Failed when a gated judge failed or was unverified; controls or gate off: passed, saying so."""
    health = run.health
    if health is None:
        return [{"gate": f"judges of run {which}", "failed": True, "why": f"run {which} ({run.path}) has no judge health: its judges were not verified"}]
    if health.failed:
        return [{"gate": f"judges of run {which}", "failed": True, "why": f"run {which}: " + "; ".join(health.failure_lines())}]
    if not (health.enabled and health.gate):
        return [{"gate": f"judges of run {which}", "failed": False, "why": f"run {which}: {health.headline()}"}]
    return []


def _see(claims, run_b: Path) -> str:
    """What a failed gate adds: the claims newly ungrounded in B (up to NAMED_CLAIMS) and where to look."""
    new, worse = claims.newly_ungrounded, claims.worsened
    head = f". Newly ungrounded in B ({len(new)}): {_named(new)}" if new else ". No claim is newly ungrounded in B"
    if worse:
        head += f". Worse in B ({len(worse)}): {_named(worse)}"
    return f"{head}. Run B: {run_b}; report: {Path(run_b) / 'report.html'}"


def _named(changes: list[ClaimChange]) -> str:
    """The first NAMED_CLAIMS changes described, the rest counted."""
    more = len(changes) - NAMED_CLAIMS
    return "; ".join(describe(c) for c in changes[:NAMED_CLAIMS]) + (f"; and {more} more" if more > 0 else "")
