"""Corrected rates in ``judge compare``: with human labels on both runs, the corrected difference B - A of each
rate with its 95% interval (independent samples: the variances add), and the bound gate ``corrected_METRIC<=X``
(``>=X`` for faithfulness) on run B's corrected interval, overall and for every model under test.
"""

from __future__ import annotations

from judge.metrics.ppi import Z95, MeanEstimate, difference
from judge.runs.run import Run
from judge.scoring.corrected import ALL, METRICS

# gate name -> (level, metric, the operator it takes: an upper bound on a rate to keep low, a lower on one to keep high)
BOUND_GATES = {
    "corrected_hallucination_rate": ("claim", "hallucination_rate", "<="),
    "corrected_faithfulness": ("claim", "faithfulness", ">="),
    "corrected_answer_hallucination_rate": ("answer", "hallucination_rate", "<="),
    "corrected_answer_faithfulness": ("answer", "faithfulness", ">="),
}


def parse_bound(text: str) -> tuple[str, str, float] | None:
    """(gate name, operator, bound) of ``corrected_METRIC<=X`` / ``>=X``; None when ``text`` is no bound gate;
    ValueError naming the gate when it is one, badly written."""
    op = "<=" if "<=" in text else ">=" if ">=" in text else None
    if op is None:
        return None
    name, _, value = text.partition(op)
    if name not in BOUND_GATES:
        raise ValueError(f"gate {text!r}: a bound gate is one of " + ", ".join(f"{g}{o}X" for g, (_, _, o) in BOUND_GATES.items()))
    if op != BOUND_GATES[name][2]:
        raise ValueError(f"gate {text!r}: {name} takes {BOUND_GATES[name][2]} (a bound on its {'upper' if BOUND_GATES[name][2] == '<=' else 'lower'} end)")
    try:
        bound = float(value)
    except ValueError:
        raise ValueError(f"gate {text!r}: the bound must be a rate from 0 to 1") from None
    if not 0 <= bound <= 1:
        raise ValueError(f"gate {text!r}: the bound must be a rate from 0 to 1")
    return name, op, bound


def _estimate(value: dict) -> MeanEstimate:
    """A stored corrected rate; its standard error at least what its interval's width says (an interval widened
    to the exact one, for labels all of one kind, carries its width into the difference)."""
    se = max(value["se"], (value["high"] - value["low"]) / (2 * Z95))
    return MeanEstimate(value["estimate"], value["low"], value["high"], se, value.get("lam") or 0.0, 0, 0)


def corrected_of(run: Run) -> dict | None:
    """The corrected rates of a run's last score, None when scored without labels; the block is input (issue 50
    item 9), checked against CorrectedScores: one line naming the file and the field when it fails, exit 2."""
    from pydantic import ValidationError

    from judge.problems import DatasetError, Problem
    from judge.scoring.corrected import CorrectedScores

    block = (run.scores or {}).get("corrected")
    if block is None:
        return None
    try:
        return CorrectedScores.model_validate(block).model_dump()
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(x) for x in ("corrected", *err["loc"]))
        raise DatasetError([Problem(file=str(run.path / "scores.json"), field=where,
                                    message=f"{err['msg']} ({len(e.errors())} problem{'s' if len(e.errors()) != 1 else ''} in the corrected "
                                            "block; score the run again: judge score RUN --labels FILE)")]) from None


def recomputed(run: Run) -> dict | None:
    """The corrected rates a gate reads, computed again from the run's own results and its own label sheets (the
    copy judge score kept with the run, or judge label's), never taken from scores.json, which anyone can edit
    (issue 50 item 9: a model's entry deleted, or its interval lowered, passed the gate). None without labels."""
    from judge.labels.load import load_labels
    from judge.scoring.base import AnswerItem
    from judge.scoring.corrected import Corrected

    labels = load_labels(run)  # DatasetError (exit 2) for a sheet that does not fit the run
    if labels is None or not labels.sheets:
        return None
    section = Corrected(labels)
    for r in run.results():
        for a in r.answers:
            section.add(AnswerItem(r, a, None, None))
    return section.result({"run": run}).model_dump()


def comparison(a: Run, b: Run) -> dict:
    """B - A of every corrected rate both runs have (level, model under test or all, metric), with its 95%
    interval; or why there is none."""
    ca, cb = corrected_of(a), corrected_of(b)
    lacking = [(w, r) for w, r, c in (("A", a, ca), ("B", b, cb)) if not c or not c.get("levels")]
    if lacking:
        from judge.labels.load import own_sheets

        stale = [w for w, r in lacking if own_sheets(r)]  # labelled since its last score
        why = f"run {' and '.join(w for w, _ in lacking)} scored without human labels (judge label RUN; judge score RUN --labels FILE)"
        return {"available": False, "why": why + (f"; run {' and '.join(stale)} has labels now: judge score it again" if stale else "")}
    out: dict = {"available": True, "files": {"a": ca["files"], "b": cb["files"]}, "levels": {}}
    for level, la in ca["levels"].items():
        lb = cb["levels"].get(level)
        if lb is None:
            continue
        for model, metrics in la["models"].items():
            for metric in METRICS:
                ea, eb = metrics.get(metric, {}).get("corrected"), lb["models"].get(model, {}).get(metric, {}).get("corrected")
                if ea and eb:
                    d = difference(_estimate(ea), _estimate(eb))
                    out["levels"].setdefault(level, {}).setdefault(model, {})[metric] = {
                        "a": ea["estimate"], "b": eb["estimate"], "delta": round(d.estimate, 6), "ci95": [round(d.low, 6), round(d.high, 6)]}
    return out


def bound_gate(spec: str, b: Run, allow_missing: bool) -> dict:
    """One bound gate on run B's corrected rate: its interval's far end, overall and per model, within the bound."""
    name, op, bound = parse_bound(spec)
    level, metric, _ = BOUND_GATES[name]
    corrected_of(b)  # scores.json's block still checked (an edited one is one line, exit 2), its numbers never used
    value = ((recomputed(b) or {}).get("levels") or {}).get(level)
    if not value or metric not in (value["models"].get(ALL) or {}):  # no labels at this level (too few is a failure, below)
        why = f"run B ({b.path}) has no corrected {level}-level {metric.replace('_', ' ')}: score it with human labels (judge score RUN --labels FILE)"
        why += ": allowed by --allow-missing" if allow_missing else ": cannot be checked (pass --allow-missing to accept that)"
        return {"gate": spec, "kind": "bound", "failed": not allow_missing, "missing": True, "summary": why, "why": why}
    broken, seen = [], []
    answered = sorted({a.model for r in b.results() for a in r.answers if a.claims})
    for model in answered:  # a model under test without an entry (no item judged at this level) cannot be checked: it fails
        if model not in value["models"]:
            seen.append(f"{model} none (no corrected rate)")
            broken.append(f"{model}: no valid corrected interval (no corrected rate for it)")
    for model, metrics in value["models"].items():
        e = metrics.get(metric) or {}
        c = e.get("corrected")
        if not c:  # a model without a valid interval (no labels, or too few) cannot be checked: it fails (issue 50 item 3)
            why = e.get("withheld") or f"{e.get('labels', 0)} labels"
            seen.append(f"{model} none ({why})")
            broken.append(f"{model}: no valid corrected interval ({why})")
            continue
        end = c["high"] if op == "<=" else c["low"]
        seen.append(f"{model} {c['estimate']:.3f} [{c['low']:.3f}, {c['high']:.3f}]")
        if (end > bound) if op == "<=" else (end < bound):
            broken.append(f"{model}: {'upper' if op == '<=' else 'lower'} bound {end:.3f} {'>' if op == '<=' else '<'} {bound}")
    what = f"corrected {level}-level {metric.replace('_', ' ')} of run B (95% intervals): " + "; ".join(seen)
    why = what + (f"; fails: {'; '.join(broken)}" if broken else f"; every {'upper' if op == '<=' else 'lower'} bound {op} {bound}")
    return {"gate": spec, "kind": "bound", "failed": bool(broken), "summary": why, "why": why + (f". Run B: {b.path}" if broken else "")}
