"""A judge calibration: the judges' health verified once, on a run large enough to carry the controls its gate
needs (``judge calibrate``), written to a small JSON file and adopted by every later run of the same judge
setup, so that a ten-question CI run need not carry enough controls to verify its judge each time.

The setup is what a judge's verdicts depend on: each model judge's model id, api_base, instructor mode,
temperature, seed, max_tokens and family; the judge prompt's hash; how claims reach the judges (batching,
context, triage, the search's offer). A run adopts the calibration only when its setup's key is the one
calibrated; otherwise it says what changed and keeps its own health (unverified on ten questions: exit 3).

What a run still checks itself: its own few controls are a smoke alarm. A judge that catches none of the
run's planted errors (contradicted and unsupported controls, at least ``SMOKE_MIN`` of them) fails, whatever
the calibration said. The calibration also gives each judge's noise floor: the one-sided upper bound of the
share of supported controls it called not grounded, the rate at which it flags a grounded claim by chance
(judge.runs.confirm tests a changed verdict against it).
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from pydantic import BaseModel, ValidationError

from judge.controls.health import HealthReport, lower_bound
from judge.judges.registry import model_judges
from judge.runs.store import RunDirError
from judge.verdicts import CONTRADICTED, SUPPORTED, UNSUPPORTED

VERSION = 1
SMOKE_MIN = 2  # planted errors a run must show its judge before missing all of them fails it
FLOOR_CONFIDENCE = 0.95
_MODEL_FIELDS = ("model", "api_base", "temperature", "seed", "max_tokens", "family")


def judge_setup(config, judge_prompt_hash: str | None) -> dict:
    """What the judges' verdicts depend on (the calibration's key is its hash)."""
    judges = {}
    for name in model_judges(config.adjudicate.judges):
        cfg = config.model(name)
        judges[name] = {**{f: getattr(cfg, f) for f in _MODEL_FIELDS}, "mode": str(cfg.resolved_mode())}
    a, s = config.adjudicate, config.search
    return {
        "judges": judges, "panel": list(a.judges), "judge_prompt": judge_prompt_hash,
        "adjudicate": {"batch_claims": a.batch_claims, "judge_context": a.judge_context, "triage": a.triage, "call_claims": a.call_claims,
                       "call_tokens": a.call_tokens},
        "search": s.model_dump(mode="json"),
    }


def setup_key(setup: dict) -> str:
    return hashlib.sha256(json.dumps(setup, sort_keys=True, default=str).encode()).hexdigest()[:16]


def changed(old: dict, new: dict, prefix: str = "") -> list[str]:
    """What differs between two setups, as dotted names (``judges.checker.temperature``, ``judge_prompt``)."""
    out = []
    for k in sorted(set(old) | set(new)):
        a, b = old.get(k), new.get(k)
        if isinstance(a, dict) and isinstance(b, dict):
            out += changed(a, b, f"{prefix}{k}.")
        elif a != b:
            out.append(f"{prefix}{k}")
    return out


class Calibration(BaseModel):
    version: int = VERSION
    key: str
    setup: dict
    run_dir: str
    made_utc: str
    health: HealthReport
    floors: dict[str, float | None]  # per judge: the noise floor (None: no supported control to measure it on)


def noise_floor(health: HealthReport, judge: str) -> float | None:
    """The one-sided upper bound of the share of supported controls ``judge`` called anything else."""
    j = next((x for x in health.judges if x.judge == judge), None)
    r = next((r for r in (j.by_label if j else []) if r.label == SUPPORTED), None)
    return None if r is None or not r.controls else round(1 - lower_bound(r.correct, r.controls, FLOOR_CONFIDENCE), 4)


def calibration_of(run) -> Calibration:
    """The calibration a finished run gives (judge calibrate); RunDirError when its judges did not pass."""
    health = run.health
    if health is None or not health.verified:
        why = "; ".join(health.failure_lines()) if health is not None else "it has no judge health"
        raise RunDirError(f"{run.path}: the judges are not verified on this run's controls, so it calibrates nothing: {why or health.headline()}")
    setup = judge_setup(run.config, (run.manifest.get("prompts") or {}).get("judge"))
    return Calibration(key=setup_key(setup), setup=setup, run_dir=str(run.path), made_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       health=health, floors={j.judge: noise_floor(health, j.judge) for j in health.judges if j.gated})


def read_calibration(path: str | Path) -> Calibration | None:
    """The calibration file, None when absent; RunDirError (one line) when it is not one judge wrote."""
    from judge.runs.store import read_json_object

    path = Path(path)
    if not path.exists():
        return None
    try:
        return Calibration.model_validate(read_json_object(path))
    except ValidationError as e:
        raise RunDirError(f"{path}: not a judge calibration file ({e.errors()[0]['msg']}); write it again with judge calibrate") from None


def adopt(summary: dict, config, manifest: dict) -> dict:
    """The run's judge health with the calibration adopted where the setup is the one calibrated; sets
    ``summary['judge_calibration']`` (what was adopted, or why not) and returns the summary."""
    if not config.calibration or not summary.get("judge_health"):
        return summary
    health = HealthReport.model_validate(summary["judge_health"])
    cal = read_calibration(config.calibration)
    setup = judge_setup(config, (manifest.get("prompts") or {}).get("judge"))
    note = {"file": config.calibration, "key": setup_key(setup), "adopted": [], "floors": {}}
    if cal is None:
        note["why_not"] = f"no calibration at {config.calibration}: run judge calibrate CONFIG --out {config.calibration}"
    elif cal.key != note["key"]:
        what = ", ".join(changed(cal.setup, setup)) or "the setup"
        note["why_not"] = f"{config.calibration} was made with another judge setup ({what} changed since): run judge calibrate again"
    judges = []
    for j in health.judges:
        mine = next((x for x in cal.health.judges if x.judge == j.judge), None) if cal is not None and "why_not" not in note else None
        if not j.gated or j.status != "unverified" or mine is None or mine.status != "passed":
            if j.gated and j.status == "unverified" and "why_not" in note:
                j = j.model_copy(update={"verdict": f"{j.verdict}; {note['why_not']}"})
            judges.append(j)
            continue
        planted = [r for r in j.by_label if r.label in (CONTRADICTED, UNSUPPORTED)]
        shown, caught = sum(r.controls for r in planted), sum(r.correct for r in planted)
        own = ", ".join(f"{r.label} {r.correct}/{r.controls}" for r in j.by_label) or "none"
        if shown >= SMOKE_MIN and caught == 0:
            judges.append(j.model_copy(update={"status": "failed", "verdict": f"caught none of this run's {shown} planted errors (its "
                                               f"controls: {own}), though {config.calibration} passed it: the judge changed"}))
            continue
        judges.append(j.model_copy(update={"status": "passed", "verdict": f"verified on the calibration {config.calibration} ({mine.controls} controls, "
                                           f"{cal.made_utc}): {mine.verdict}; this run's own controls: {own}"}))
        note["adopted"].append(j.judge)
        note["floors"][j.judge] = cal.floors.get(j.judge)
    summary["judge_health"] = health.model_copy(update={"judges": judges}).model_dump()
    summary["judge_calibration"] = note
    return summary
