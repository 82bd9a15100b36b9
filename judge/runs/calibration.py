"""A judge calibration: how far each judge of a setup is right on **real claims whose labels are known**
(DESIGN.md, "Trust comes from labelled real claims"; docs/controls.md), measured once by ``judge calibrate``
and adopted by every later run whose judge setup has the same key: per judge, recall and precision with exact
intervals and the **noise floor** judge.scoring.confirm tests changed verdicts against. Planted controls never
stand in for labels.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judge.controls.health import HealthReport, JudgeTrust
from judge.metrics.intervals import exact_interval, lower_bound
from judge.judges.registry import model_judges
from judge.runs.store import RunDirError
from judge.verdicts import GROUNDED_ANSWER, LABELS, NOT_GROUNDED, NOT_GROUNDED_ANSWER, SUPPORTED, TRIAGE, answer_label, is_judged

VERSION = 2
MIN_EACH = 20  # labelled claims of each side (not grounded, grounded) a calibration wants: a judge right on all 20
# has a not-grounded recall interval of [0.83, 1.00], one that flags none [0.00, 0.17]: told apart, not by chance
MAX_FILE_BYTES = 16 * 1024 * 1024  # a calibration file is a few kilobytes; anything larger is refused unread
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


Floor = Annotated[float, Field(ge=0, le=1, strict=True)]


class Rate(BaseModel):
    """k of n with its exact 95% interval."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    k: int = Field(ge=0)
    n: int = Field(ge=0)
    value: float | None = Field(None, ge=0, le=1)
    ci95: list[float] | None = None


def rate(k: int, n: int) -> Rate:
    return Rate(k=k, n=n, value=round(k / n, 4) if n else None, ci95=[round(x, 4) for x in exact_interval(k, n)] if n else None)


class JudgeCalibration(BaseModel):
    """One judge measured on labelled real claims."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    judge: str
    claims: int = Field(ge=0)  # labelled claims it ruled on
    not_grounded_recall: Rate  # labelled not grounded, flagged by the judge
    flag_precision: Rate  # flagged by the judge, labelled not grounded
    recall: dict[str, Rate] = {}  # per label: labelled so, called so
    precision: dict[str, Rate] = {}  # per label: called so, labelled so
    noise: Rate  # labelled grounded (supported), flagged by the judge
    noise_floor: float | None = Field(None, ge=0, le=1)  # the one-sided 95% upper bound of noise
    answers: int = Field(0, ge=0)  # labelled answers
    balanced_accuracy: float | None = Field(None, ge=0, le=1)  # answer level: the mean of its recall on grounded and not-grounded answers
    more_wanted: int = Field(0, ge=0)  # labelled claims short of MIN_EACH on either side (0: enough)

    @property
    def enough(self) -> bool:
        return self.more_wanted == 0


class Calibration(BaseModel):
    model_config = ConfigDict(allow_inf_nan=False)
    version: int = VERSION
    key: str
    setup: dict
    run_dir: str
    made_utc: str
    origin: str | None = None  # what was labelled: "gold labels of FILE", "human labels (SHEET) of run DIR"; None: no labels (canary only)
    judges: dict[str, JudgeCalibration] = {}  # every model judge measured on labelled claims
    health: HealthReport | None = None  # the canary of the calibration run (planted errors: never trust)
    # per judge: the noise floor (the labels' where measured, else the supported controls'); a share in [0, 1] (issue 50.2:
    # a negative floor would let every regression pass as noise)
    floors: dict[str, Floor | None]


def noise_floor(health: HealthReport, judge: str) -> float | None:
    """The one-sided upper bound of the share of supported controls ``judge`` called anything else."""
    j = next((x for x in health.judges if x.judge == judge), None)
    r = next((r for r in (j.by_label if j else []) if r.label == SUPPORTED), None)
    return None if r is None or not r.controls else round(1 - lower_bound(r.correct, r.controls, FLOOR_CONFIDENCE), 4)


def _flag(label: str) -> bool:
    return label in NOT_GROUNDED


def labelled_pairs(run, labels=None) -> tuple[dict[str, list[tuple[str, str]]], dict[str, list[tuple[str, str]]], str | None]:
    """Per model judge, (label known, label it gave) for its labelled claims and answers, and what was labelled.
    ``labels``: human label sheets, which take the place of gold where both label an item."""
    from judge.labels.sheet import CLAIM, item_id
    from judge.metrics.gold import matched_gold

    names = set(model_judges(run.config.adjudicate.judges))
    claims: dict[str, list[tuple[str, str]]] = {n: [] for n in sorted(names)}
    answers: dict[str, list[tuple[str, str]]] = {n: [] for n in sorted(names)}
    human = {}
    for row in labels.rows() if labels is not None else ():
        if row.labelled:
            human[row.item] = row
    records, recorded = run.records, run.recorded
    gold_used = False
    for r in run.results():
        record = records.get(r.record_id)
        for index, a in enumerate(r.answers):
            known: dict[int, str] = {}
            matched = matched_gold(record, a, recorded) if record is not None else None
            for claim, gold in matched.pairs if matched else []:
                if gold.label in LABELS:
                    known[claim.claim_id] = gold.label
                    gold_used = True
            for c in a.claims:
                row = human.get(item_id(r.record_id, index, c.claim_id))
                if row is not None and row.level == CLAIM:
                    known[c.claim_id] = row.label
            mine: dict[str, list[str]] = {n: [] for n in names}
            for c in a.claims:
                for v in c.verdicts:
                    if v.how == TRIAGE or v.judge not in names or not is_judged(v.label):
                        continue
                    mine[v.judge].append(v.label)
                    if c.claim_id in known:
                        claims[v.judge].append((known[c.claim_id], v.label))
            row = human.get(item_id(r.record_id, index))
            truth = row.label if row is not None and row.level != CLAIM else (
                answer_label(known[c.claim_id] for c in a.claims) if a.claims and all(c.claim_id in known for c in a.claims) else None)
            for n in names:
                said = answer_label(mine[n]) if len(mine[n]) == len([c for c in a.claims if is_judged(c.label)]) else None
                if truth in (GROUNDED_ANSWER, NOT_GROUNDED_ANSWER) and said is not None:
                    answers[n].append((truth, said))
    where = []
    if gold_used:
        where.append(f"gold labels of {Path(run.config.dataset.path).name}")
    if human:
        where.append(f"human labels ({', '.join(sorted({str(Path(s.path).name) for s in labels.sheets if getattr(s, 'path', None)})) or 'sheets'}) of run {run.path.name}")
    return claims, answers, ("; ".join(where) or None)


def measure(judge: str, pairs: list[tuple[str, str]], answers: list[tuple[str, str]]) -> JudgeCalibration:
    """One judge's calibration from its (known, given) labels on real claims and answers."""
    ng = [g for g, p in pairs if g != SUPPORTED]
    flagged_ng = sum(1 for g, p in pairs if g != SUPPORTED and _flag(p))
    flagged = sum(1 for _, p in pairs if _flag(p))
    grounded = [p for g, p in pairs if g == SUPPORTED]
    noise = sum(map(_flag, grounded))
    floor = round(1 - lower_bound(len(grounded) - noise, len(grounded), 0.95), 4) if grounded else None
    by_answer = {lbl: [p == lbl for g, p in answers if g == lbl] for lbl in (GROUNDED_ANSWER, NOT_GROUNDED_ANSWER)}
    balanced = round(sum(sum(v) / len(v) for v in by_answer.values()) / 2, 4) if all(by_answer.values()) else None
    more = max(0, MIN_EACH - len(ng)) + max(0, MIN_EACH - len(grounded))
    return JudgeCalibration(
        judge=judge, claims=len(pairs), not_grounded_recall=rate(flagged_ng, len(ng)),
        flag_precision=rate(flagged_ng, flagged),
        recall={lbl: rate(sum(1 for g, p in pairs if g == lbl and p == lbl), n) for lbl in LABELS if (n := sum(1 for g, _ in pairs if g == lbl))},
        precision={lbl: rate(sum(1 for g, p in pairs if p == lbl and g == lbl), n) for lbl in LABELS if (n := sum(1 for _, p in pairs if p == lbl))},
        noise=rate(noise, len(grounded)), noise_floor=floor, answers=len(answers), balanced_accuracy=balanced, more_wanted=more,
    )


def calibration_of(run, labels=None) -> Calibration:
    """The calibration a finished run gives: every model judge measured on its labelled claims (one that failed
    the canary too); RunDirError when nothing is labelled and no control measured a noise floor."""
    health = run.health
    claims, answers, origin = labelled_pairs(run, labels)
    judges = {n: measure(n, pairs, answers[n]) for n, pairs in claims.items() if pairs} if origin else {}
    floors = {n: j.noise_floor for n, j in judges.items()}
    if health is not None:  # no labelled grounded claim: the supported controls' floor (optimistic: the easiest claims there are)
        floors.update({j.judge: noise_floor(health, j.judge) for j in health.judges if j.gated and floors.get(j.judge) is None})
    if not judges and not any(f is not None for f in floors.values()):
        raise RunDirError(f"{run.path}: no labelled claim reached a model judge (give answers with gold_claims, or --run RUN --labels SHEET "
                          "from judge label), and no control measured a noise floor: nothing to calibrate")
    setup = judge_setup(run.config, (run.manifest.get("prompts") or {}).get("judge"))
    return Calibration(key=setup_key(setup), setup=setup, run_dir=str(run.path), made_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       origin=origin if judges else None, judges=judges, health=health, floors=floors)


def lines(cal: Calibration) -> list[str]:
    """What judge calibrate prints: per judge, a sentence of its figures on labelled claims, or why there are none."""
    out = []
    if not cal.judges:
        out.append("NOT CALIBRATED: no labelled claim reached a model judge (the set has no gold_claims, and no label sheet was given): "
                   "the file holds the canary's figures and a noise floor from supported controls only; calibrate on labelled claims "
                   "(docs/controls.md)")
    for j in cal.judges.values():
        r = j.not_grounded_recall
        recall = f"{r.k}/{r.n} [{r.ci95[0]:.2f}, {r.ci95[1]:.2f}]" if r.n else "none labelled"
        p = j.flag_precision
        prec = f"{p.k}/{p.n} [{p.ci95[0]:.2f}, {p.ci95[1]:.2f}]" if p.n else "no flag"
        per = ", ".join(f"{lbl} {x.k}/{x.n}" for lbl, x in j.recall.items())
        floor = "not measured" if j.noise_floor is None else f"{j.noise_floor:.3f} ({j.noise.k} of {j.noise.n} grounded claims flagged)"
        bal = "" if j.balanced_accuracy is None else f"; answer-level balanced accuracy {j.balanced_accuracy:.3f} on {j.answers} answers"
        out.append(f"{j.judge}: {j.claims} labelled claims; not-grounded recall {recall}; flag precision {prec}; recall by label {per}; "
                   f"noise floor {floor}{bal}")
        if not j.enough:
            out.append(f"{j.judge}: too few labels: wants >= {MIN_EACH} labelled not-grounded and {MIN_EACH} grounded claims, "
                       f"{j.more_wanted} more (judge label RUN --n {j.more_wanted * 2}, or a larger labelled set)")
    return out


def _trust(cal: Calibration, name: str, source: str) -> JudgeTrust:
    j = cal.judges.get(name)
    if j is None:
        why = (f"{source} was made without labelled claims (planted controls only)" if not cal.judges
               else f"{source} holds no labelled claim {name} ruled on")
        return JudgeTrust(judge=name, calibrated=False, source=source, why=why)
    r = j.not_grounded_recall
    origin = cal.origin + ("" if j.enough else f"; too few labels, {j.more_wanted} more wanted")
    return JudgeTrust(judge=name, calibrated=j.enough and r.n > 0, claims=j.claims, recall=[r.k, r.n], recall_ci95=r.ci95, source=source,
                      noise=[j.noise.k, j.noise.n], noise_ci95=j.noise.ci95,
                      origin=origin, why=None if j.enough else f"too few labels in {source}: {j.more_wanted} more wanted")


def refusal(t: JudgeTrust) -> str | None:
    """Why ``require: calibrated`` refuses a judge, or None."""
    return f"not calibrated ({t.why})" if not t.calibrated else t.unfit()


def _bounded_bytes(path: Path) -> bytes:
    """The file's bytes through the reading door (a plain file, at most MAX_FILE_BYTES, never a link)."""
    from judge.input_files import InputFileError, read_plain

    if path.is_symlink():
        raise RunDirError(f"{path}: cannot read the calibration file: it is a link (judge calibrate writes a plain file)")
    try:
        return read_plain(path, "calibration file", limit=MAX_FILE_BYTES)
    except InputFileError as e:
        raise RunDirError(str(e)) from None


def read_calibration(path: str | Path) -> Calibration | None:
    """The calibration file, None when absent; RunDirError (naming the file and field) when it is not one judge
    calibrate wrote."""
    from judge.boundary import parse_json
    from judge.problems import DatasetError

    if "\0" in str(path):
        raise RunDirError(f"calibration: {str(path)!r}: a path with a NUL character")
    path = Path(path)
    try:
        if not path.exists() and not path.is_symlink():
            return None
    except (OSError, ValueError) as e:
        raise RunDirError(f"calibration: {path}: cannot read: {e}") from None
    try:
        data = parse_json(_bounded_bytes(path), str(path))
    except DatasetError as e:
        raise RunDirError(f"{path}: not a judge calibration file (not JSON: {e.problems[0].message})") from None
    if not isinstance(data, dict):
        raise RunDirError(f"{path}: not a judge calibration file (expected a JSON object)")
    try:
        return Calibration.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        field = ".".join(str(x) for x in err["loc"]) or "the file"
        raise RunDirError(f"{path}: {field}: {err['msg']} (not a judge calibration file; write it again with judge calibrate)") from None


def adopt(summary, config, manifest: dict):
    """The summary with each model judge's calibration in its judge health (``trust``) where the setup is the
    one calibrated, and its ``judge_calibration`` note; ``require: calibrated`` refuses a judge not calibrated
    or shown to miss real errors (exit 3)."""
    from judge.runs.summary import CalibrationNote

    if summary.judge_health is None:
        return summary
    health = summary.judge_health
    names = model_judges(config.adjudicate.judges)
    require = getattr(config, "require", None) == "calibrated"
    setup = judge_setup(config, (manifest.get("prompts") or {}).get("judge"))
    note = {"file": config.calibration, "key": setup_key(setup), "adopted": [], "floors": {}}
    cal = None
    if not config.calibration:
        note["why_not"] = ("no calibration: in the config (judge calibrate CONFIG --dataset LABELLED.jsonl --out FILE, then "
                           "calibration: FILE; judge/data/calibration has a starter set)")
    else:
        cal = read_calibration(config.calibration)
        if cal is None:
            note["why_not"] = f"no calibration at {config.calibration}: run judge calibrate CONFIG --out {config.calibration}"
        elif cal.key != note["key"]:
            what = ", ".join(changed(cal.setup, setup)) or "the setup"
            note["why_not"] = f"{config.calibration} was made with another judge setup ({what} changed since): run judge calibrate again"
            cal = None
    trust = []
    for name in names:
        t = _trust(cal, name, Path(config.calibration).name) if cal is not None else JudgeTrust(judge=name, calibrated=False, why=note["why_not"])
        if cal is not None:
            if cal.floors.get(name) is not None:
                note["floors"][name] = cal.floors[name]
            if t.calibrated:
                note["adopted"].append(name)
        if require and (why := refusal(t)):
            t = t.model_copy(update={"refused": why})
        trust.append(t)
    return summary.model_copy(update={"judge_health": health.model_copy(update={"trust": trust}),
                                      "judge_calibration": CalibrationNote.model_validate(note)})


def user_floors(asker, names: list[str], judge_prompt: str | None) -> tuple[dict[str, float], str | None]:
    """A confirmation's floors (``asker``: judge.scoring.confirm.Asker, the user's own run config): each judge's noise
    floor from the user's own calibration file (read through its type: a share in [0, 1]), where it was made with
    the user's judge setup; ({}, None) otherwise."""
    cfg = asker.config
    if cfg is None or not getattr(cfg, "calibration", None):
        return {}, None
    cal = read_calibration(cfg.calibration)  # RunDirError (exit 2) for a file that is not one judge calibrate wrote
    if cal is None or cal.key != setup_key(judge_setup(cfg, judge_prompt)):
        return {}, None
    return {n: bounded_floor(cal.floors[n]) for n in names if cal.floors.get(n) is not None}, cfg.calibration


def bounded_floor(value) -> float:
    """A noise floor where it is read: a share in [0, 1] (issue 50.2: -0.5 made every regression noise), else ValueError."""
    import math

    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 <= value <= 1:
        raise ValueError(f"a noise floor must be a share in [0, 1], found {value!r}")
    return float(value)
