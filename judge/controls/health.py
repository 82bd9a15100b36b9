"""Judge health on control claims: a canary that fails a plainly broken judge, never a measure of trust.

Planted errors are easier than real ones (docs/controls.md: statuses, the gate, why ``canary_min``); how far a
judge is right comes from its calibration on labelled real claims (judge.runs.calibration).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import Literal, NamedTuple

from pydantic import BaseModel, computed_field

from judge.metrics.intervals import exact_interval, lower_bound, min_per_label  # noqa: F401 (re-exported)
from judge.results import ControlCost, RecordResult
from judge.verdicts import CONTRADICTED, CONTROL_LABELS, DETERMINISTIC, JUDGE_ERROR, SUPPORTED, TRIAGE, UNSUPPORTED

TELL_BAR = 0.7  # a surface feature (or the detector) separating controls from real claims better than this is flagged
PLANTED = ("planted errors are easier to catch than real ones: the canary says only that a judge is not plainly broken, "
           "not how often it is right; that is its calibration on labelled real claims (judge calibrate), and the rate "
           "corrected by human labels (judge label) is the estimate to trust")
WEAK = 0.5  # a label or kind recalled less often than this is named as a blind spot
Status = Literal["passed", "failed", "unchecked", "unverified", "reported"]  # unverified: read back from older runs only
RULE_HOWS = (DETERMINISTIC, TRIAGE)  # verdicts of rules, not models: reported, never gated


class GateConfig(BaseModel):
    """What the gate asks of a judge (``controls.floor``, ``controls.confidence``, ``controls.gate``)."""

    gate: bool = True
    floor: float = 0.4
    confidence: float = 0.95
    detector_bar: float = TELL_BAR  # read, never gated on: the tells detector is bench's (bench/tells.py)


class ControlObservation(BaseModel):
    """One judge's verdict on one control."""

    judge: str
    control_id: str
    label: str  # the control's known label
    kind: str
    answered: str  # the judge's label, or "judge_error"
    how: str = "model"  # how the verdict was reached: a rule's verdicts are reported, not gated


class LabelRecall(BaseModel):
    label: str
    controls: int
    correct: int
    recall: float
    ci95: list[float]  # two-sided exact interval
    lower: float  # one-sided lower bound at the gate's confidence
    answered_instead: dict[str, int] = {}  # the judge's other answers on these controls, most frequent first


class JudgeHealth(BaseModel):
    judge: str
    gated: bool  # a model judge under a gate that is on
    controls: int
    correct: int
    errors: int
    accuracy: float | None
    accuracy_ci95: list[float] | None
    by_label: list[LabelRecall]
    by_kind: list[LabelRecall]
    real_labels: dict[str, int] = {}  # its verdicts on the real claims
    blind_spots: list[str] = []  # "misses negations: 0 of 7"
    status: Status
    verdict: str
    excluded: bool = False  # left out of the panel's verdicts (judge.runs.trust): not gated, the panel went on without it

    @computed_field
    @property
    def passed(self) -> bool | None:
        """None where the canary told nothing (a rule, the gate off, too few controls); else whether it passed."""
        return None if self.status in ("reported", "unchecked") else self.status == "passed"


UNFIT_AT = 0.5  # a calibrated judge is unfit where its not-grounded recall is surely below this, or its noise surely not


class JudgeTrust(BaseModel):
    """How far one judge is calibrated on labelled real claims (judge.runs.calibration), as a run adopted it:
    what the first line of every report says of it."""

    judge: str
    calibrated: bool
    claims: int = 0  # labelled real claims it was measured on
    recall: list[int] | None = None  # [k, n]: not-grounded claims it called not grounded, of the labelled ones
    recall_ci95: list[float] | None = None
    source: str | None = None  # the calibration file
    origin: str | None = None  # what was labelled: "gold labels of calibration.jsonl", "human labels (labels.jsonl) of run ..."
    why: str | None = None  # not calibrated: why (and what to do)
    refused: str | None = None  # require: calibrated refused it: why
    noise: list[int] | None = None  # [k, n]: labelled grounded claims it flagged, of the labelled ones
    noise_ci95: list[float] | None = None

    def unfit(self) -> str | None:
        """Why its calibration shows its flags cannot be trusted, or None: it misses real errors (not-grounded
        recall below UNFIT_AT at its upper bound), or it flags grounded claims as often as not (noise at least
        UNFIT_AT at its lower bound: a judge that flags everything hides every regression)."""
        if not self.calibrated:
            return None
        if self.recall and self.recall_ci95 and self.recall_ci95[1] < UNFIT_AT:
            return (f"misses real errors: not-grounded recall {self.recall[0]}/{self.recall[1]}, upper bound "
                    f"{self.recall_ci95[1]:.2f} < {UNFIT_AT} ({self.source})")
        if self.noise and self.noise_ci95 and self.noise_ci95[0] >= UNFIT_AT:
            return (f"flags grounded claims as often as not: {self.noise[0]}/{self.noise[1]} flagged, lower bound "
                    f"{self.noise_ci95[0]:.2f} >= {UNFIT_AT} ({self.source})")
        return None


def trust_line(trust: list[JudgeTrust]) -> str | None:
    """One sentence: each model judge's calibration on labelled real claims, or that it has none."""
    if not trust:
        return None
    out = []
    for t in trust:
        if t.calibrated and t.recall:
            k, n = t.recall
            lo, hi = t.recall_ci95 or [0.0, 1.0]
            out.append(f"{t.judge} calibrated on {t.claims} labelled claims: not-grounded recall {k}/{n} [{lo:.2f}, {hi:.2f}] "
                       f"({t.source}: {t.origin})")
        elif t.recall and t.recall[1]:  # measured, on fewer labels than the intervals need: the figures, and that
            k, n = t.recall
            lo, hi = t.recall_ci95 or [0.0, 1.0]
            out.append(f"{t.judge} NOT CALIBRATED ({t.why}); measured so far on {t.claims} labelled claims: not-grounded recall "
                       f"{k}/{n} [{lo:.2f}, {hi:.2f}] ({t.source}: {t.origin})")
        else:
            out.append(f"{t.judge} NOT CALIBRATED ({t.why}): how far its verdicts are right is unmeasured")
    refused = [t for t in trust if t.refused]
    lead = "JUDGES REFUSED (require: calibrated): " + "; ".join(f"{t.judge} {t.refused}" for t in refused) + "; " if refused else ""
    return lead + "; ".join(out)


class HealthReport(BaseModel):
    enabled: bool = True  # controls were mixed in at all
    gate: bool = True
    floor: float = 0.4
    confidence: float = 0.95
    judges: list[JudgeHealth] = []
    cost: ControlCost = ControlCost()
    judge_tokens: int = 0  # prompt + completion tokens of every judge call, for the controls' share
    tells: dict | None = None  # read back from older runs: the run no longer measures tells (bench/tells.py does)
    detector_bar: float = TELL_BAR
    trust: list[JudgeTrust] = []  # each model judge's calibration on labelled real claims (judge.runs.calibration.adopt)

    @property
    def failed(self) -> list[JudgeHealth]:
        """Gated judges that failed the canary (each exits 3); too few controls is never a failure."""
        return [j for j in self.judges if j.gated and j.status == "failed"]

    @property
    def refused(self) -> list[JudgeTrust]:
        """Judges ``require: calibrated`` refused (each exits 3)."""
        return [t for t in self.trust if t.refused]

    def headline(self) -> str:
        """The first line of every report about the judges: a judge that failed the canary, then how far each is
        calibrated on labelled real claims, then what the canary caught (never more than that)."""
        canary = self.canary_line()
        trust = trust_line(self.trust)
        if self.failed or not trust:
            return canary + (f"; {trust}" if trust else "")
        return f"{trust}; {canary}"

    def canary_line(self) -> str:
        """What the controls said: off, failed (named), caught planted errors, or too few to tell."""
        if not self.enabled:
            return "JUDGES UNCHECKED: controls are off (controls.enabled: false); no judge was checked on claims of known label"
        if not self.gate:
            return "JUDGES UNCHECKED: the control gate is off (controls.gate: false); health is reported, nothing gated"
        gated = [j for j in self.judges if j.gated]
        left = [j for j in self.judges if j.excluded]
        left_out = ", ".join(f"{j.judge} ({'failed the canary' if j.status == 'failed' else 'its calibration shows it misses real errors'})" for j in left)
        if not gated:
            if left:  # a model judge the panel went on without: never "no model judge"
                return (f"JUDGES LEFT OUT: {left_out}, excluded from the panel's verdicts; the verdicts are the no-model "
                        "judge's (a rule: reported, never gated)")
            return "judges: no model judge to check (rules are reported with their control figures)"
        bad = [j for j in gated if j.status == "failed"]
        if bad:
            return "JUDGES NOT CLEARED: " + "; ".join(f"{j.judge} {j.verdict}" for j in bad)
        parts = []
        caught_by = [j for j in gated if j.status == "passed"]
        if caught_by:
            parts.append("canary: " + "; ".join(f"{j.judge} {caught_line(j.by_label)}" for j in caught_by))
        if unchecked := [j for j in gated if j.status != "passed"]:
            parts.append("canary: too few controls to tell for " + ", ".join(j.judge for j in unchecked) + " (not a failure)")
        also = f"; left out of the panel: {left_out}" if left else ""
        return "; ".join(parts) + also + "; planted errors are easier than real ones: the canary says a judge is not plainly broken, not how often it is right"

    def lines(self) -> list[str]:
        """One plain line per judge (terminal, report.md): recall per label with its interval, the verdict; then
        the run's lines (:meth:`run_lines`)."""
        out = []
        for j in self.judges:
            if not j.controls:
                out.append(f"{j.judge}: no controls; {j.verdict}")
                continue
            recalls = ", ".join(f"{r.label} {r.correct}/{r.controls} [{r.ci95[0]:.2f}, {r.ci95[1]:.2f}]" for r in j.by_label)
            out.append(f"{j.judge}: {recalls}; {j.verdict}")
            kinds = ", ".join(f"{_KIND_NAMES.get(k.label, k.label)} {k.controls} ({k.controls / j.controls:.0%}) caught {k.correct}" for k in j.by_kind)
            out.append(f"{j.judge} by kind of planted control: {kinds}")
        return out + self.run_lines()

    def run_lines(self) -> list[str]:
        """The lines about the controls as a whole, one sentence each (every report shows them one per line):
        their cost, how far they can be told from real claims, what passing means."""
        out = []
        if self.cost.shown:
            c = self.cost
            share = f", {(c.prompt_tokens + c.completion_tokens) / self.judge_tokens:.1%} of judge tokens" if self.judge_tokens else ""
            out.append(f"controls cost: {c.shown} control claims shown to model judges, {c.calls:.1f} calls, "
                       f"{c.prompt_tokens + c.completion_tokens:.0f} tokens{share}, " + (f"${c.cost_usd:.4f}" if c.priced else "cost unknown (no price for some model)"))
        if self.tells:
            out += self.tells_lines()
        if any(j.gated for j in self.judges):
            out.append(PLANTED[:1].upper() + PLANTED[1:] + ".")
        return out

    def tells_lines(self) -> list[str]:
        """How far the run's own detector, then each surface feature, tell its controls from its real claims."""
        t = self.tells or {}
        auc = ", ".join(f"{k} {v:.2f}" for k, v in t.get("auc", {}).items() if v is not None)
        worst = max((v for v in t.get("auc", {}).values() if v is not None), default=0.5)
        d = t.get("detector_auc")
        detector = "too few to train" if d is None else f"{d:.2f}" + (" - above the bar: controls can be told apart" if d > self.detector_bar else "")
        return [f"controls vs real claims ({t.get('controls', 0)} controls, {t.get('real', 0)} claims; AUC 0.5: no tell): the run's own detector "
                f"(claim and call features, cross-validated by record) AUC {detector}",
                f"AUC per surface feature: {auc or 'none measured'}" + (" - one above 0.7" if worst > TELL_BAR else "")]

    def table(self) -> tuple[list[str], list[list]]:
        """Headers and rows of the judge-health table that report.md and report.html both render."""
        headers = ["judge", "controls", *(f"{lbl} recall [95% CI]" for lbl in CONTROL_LABELS), "status", "verdict"]
        rows = []
        for j in self.judges:
            recall = {r.label: f"{r.correct}/{r.controls} [{r.ci95[0]:.2f}, {r.ci95[1]:.2f}]" for r in j.by_label}
            rows.append([j.judge, j.controls, *(recall.get(lbl, "none") for lbl in CONTROL_LABELS), j.status, j.verdict])
        return headers, rows

    def failure_lines(self) -> list[str]:
        """One line per gated judge that failed the canary or was refused for want of calibration (exit 3)."""
        return ([f"judge {j.judge} failed on its controls: {j.verdict}" for j in self.failed]
                + [f"judge {t.judge} refused (require: calibrated): {t.refused}" for t in self.refused])


def caught_line(by_label: list[LabelRecall]) -> str:
    """'caught 22 of 24 planted supported, 20 of 24 contradicted, 23 of 24 unsupported'."""
    return "caught " + ", ".join(f"{r.correct} of {r.controls}" + (" planted " if i == 0 else " ") + r.label for i, r in enumerate(by_label))


def observations(result: RecordResult) -> list[ControlObservation]:
    """Every judge's verdict on each control of a record (triage's settlements under the name "triage")."""
    return [
        ControlObservation(
            judge=TRIAGE if v.how == TRIAGE else v.judge,
            control_id=c.control.id,
            label=c.control.label,
            kind=c.control.kind,
            answered=v.label,
            how=v.how,
        )
        for c in result.controls
        if not c.withdrawn
        for v in c.verdicts
    ]


class ControlTally:
    """The judges' verdicts on controls, counted per (judge, label, kind, answered, how) in the order first seen:
    all that :func:`judge_health` reads, in memory that does not grow with the run (a few hundred keys however
    many controls). Tallies of shards or batches add up (:meth:`update`)."""

    def __init__(self):
        self.counts: dict[tuple[str, str, str, str, str], int] = {}

    @classmethod
    def of(cls, observations: Iterable[ControlObservation]) -> ControlTally:
        tally = cls()
        for o in observations:
            tally.count(o.judge, o.label, o.kind, o.answered, o.how)
        return tally

    def count(self, judge: str, label: str, kind: str, answered: str, how: str, n: int = 1) -> None:
        key = (judge, label, kind, answered, how)
        self.counts[key] = self.counts.get(key, 0) + n

    def add(self, result: RecordResult) -> None:
        """A record's controls, as :func:`observations` gives them."""
        for c in result.controls:
            for v in c.verdicts if not c.withdrawn else ():
                self.count(TRIAGE if v.how == TRIAGE else v.judge, c.control.label, c.control.kind, v.label, v.how)

    def update(self, other: ControlTally) -> None:
        for key, n in other.counts.items():
            self.count(*key, n=n)

    def rows(self) -> dict[str, list[_Counted]]:
        """Each judge's counted rows, in the order first seen."""
        out: dict[str, list[_Counted]] = {}
        for (judge, label, kind, answered, how), n in self.counts.items():
            out.setdefault(judge, []).append(_Counted(label, kind, answered, how, n))
        return out


class _Counted(NamedTuple):
    label: str
    kind: str
    answered: str
    how: str
    n: int


def _recalls(rows: list[_Counted], key: str, order: Iterable[str], confidence: float) -> list[LabelRecall]:
    out = []
    for value in order:
        mine = [r for r in rows if getattr(r, key) == value]
        if not mine:
            continue
        n = sum(r.n for r in mine)
        correct = sum(r.n for r in mine if caught(r.label, r.answered))
        instead: Counter = Counter()
        for r in mine:  # rows in the order first seen: ties among the other answers keep the observations' order
            if r.answered != r.label:
                instead[r.answered] += r.n
        out.append(LabelRecall(
            label=value, controls=n, correct=correct, recall=correct / n,
            ci95=list(exact_interval(correct, n)), lower=lower_bound(correct, n, confidence),
            answered_instead=dict(instead.most_common()),
        ))
    return out


def _miss(r: LabelRecall, what: str) -> str:
    top, times = next(iter(r.answered_instead.items()), ("?", 0))
    return f"misses {what}: {r.correct} of {r.controls}" + (f", calls {times} {top.replace('_', ' ')}" if times else "")


def canary_min(floor: float, confidence: float = 0.95) -> int:
    """The fewest controls of a label on which finding none is plainly broken: a judge that finds at least
    ``floor`` of them would have found one with probability ``confidence`` (6 at floor 0.4)."""
    if floor >= 1:
        return 1
    return max(1, math.ceil(math.log(1 - confidence) / math.log(1 - floor) - 1e-9))


def _assess(by_label: list[LabelRecall], errors: int, gate: GateConfig) -> tuple[Status, str]:
    """failed (plainly broken) / passed (caught planted errors) / unchecked (too few to tell), with the sentence
    that says why. Only ``failed`` exits 3: the canary never stands in for the calibration."""
    need = canary_min(gate.floor, gate.confidence)
    have = {r.label: r for r in by_label}
    planted = [r for r in by_label if r.label != SUPPORTED]
    shown, found = sum(r.controls for r in planted), sum(r.correct for r in planted)
    broken = [r for r in by_label if r.controls >= need and r.correct == 0]
    if not broken and len(planted) > 1 and shown >= need and found == 0:
        broken = planted
    if broken:
        detail = "; ".join(_miss(r, r.label) for r in broken)
        return "failed", (f"failed the canary: {detail} (none of >= {need} found: plainly broken)"
                          + (f"; {errors} judge errors on controls" if errors else ""))
    if shown and found:
        return "passed", f"caught planted errors: {caught_line(by_label)} (a canary, not a measure of how often it is right)"
    lacking = ", ".join(f"{have[lbl].controls if lbl in have else 0} {lbl}" for lbl in CONTROL_LABELS)
    return "unchecked", (f"too few controls for the canary to tell ({lacking}; it fails a judge that finds none of >= {need} "
                         "of a label); not a failure: its calibration on labelled claims says how far it is right")


_KIND_NAMES = {"number": "numbers", "date": "dates", "entity": "names", "negation": "negations", "subject": "swapped subjects",
               "claim": "aligned claims", "reworded": "reworded claims", "recombined": "slots filled from elsewhere in the source",
               "detail": "added details", "about": "claims the source does not make"}


def judge_health(
    observations: Iterable[ControlObservation] | ControlTally,
    real_labels: dict[str, Counter] | None = None,
    gate: GateConfig | None = None,
    enabled: bool = True,
    cost: ControlCost | None = None,
    judge_tokens: int = 0,
    tells: dict | None = None,
    model_judges: Iterable[str] = (),
) -> HealthReport:
    """Every judge's health from its verdicts on the controls, given one by one or counted (a ControlTally),
    and its label counts on real claims. ``model_judges``: the run's model judges, each listed even where no
    control or claim reached it (a cascade's deterministic judge settled them): unchecked, never absent, so
    the headline never says "no model judge" of a run that has one."""
    gate = gate or GateConfig()
    by_judge = (observations if isinstance(observations, ControlTally) else ControlTally.of(observations)).rows()
    real_labels = real_labels or {}
    judges = []
    for name in sorted(set(by_judge) | set(real_labels) | set(model_judges)):
        rows = by_judge.get(name, [])
        n = sum(r.n for r in rows)
        correct = sum(r.n for r in rows if caught(r.label, r.answered))
        errors = sum(r.n for r in rows if r.answered == JUDGE_ERROR)
        by_label = _recalls(rows, "label", CONTROL_LABELS, gate.confidence)
        by_kind = _recalls(rows, "kind", sorted({r.kind for r in rows}), gate.confidence)
        blind = [_miss(k, _KIND_NAMES.get(k.label, k.label)) for k in by_kind if k.recall < WEAK and k.controls >= 2]
        rule = name == TRIAGE or name == DETERMINISTIC or (rows and all(r.how in RULE_HOWS for r in rows))
        gated = enabled and gate.gate and not rule
        if not gated:
            status: Status = "reported"
            why = "a rule with no model: reported, not gated" if rule else "not gated"
            if rows:
                weak = [r for r in by_label if r.recall < WEAK]
                why = "; ".join([why] + [_miss(r, r.label) for r in weak])
        elif not n:
            status, why = "unchecked", ("no control reached this judge: no claim of the answers it judged was certain enough to make "
                                        "one from, or triage settled their claims; not a failure: its calibration says how far it is right")
        else:
            status, why = _assess(by_label, errors, gate)
        if blind and status != "failed":
            why += "; blind spots: " + "; ".join(blind)
        judges.append(JudgeHealth(
            judge=name, gated=gated, controls=n, correct=correct, errors=errors,
            accuracy=correct / n if n else None, accuracy_ci95=list(exact_interval(correct, n)) if n else None,
            by_label=by_label, by_kind=by_kind, real_labels=dict(sorted(real_labels.get(name, Counter()).items())),
            blind_spots=blind, status=status, verdict=why,
        ))
    return HealthReport(enabled=enabled, gate=gate.gate, floor=gate.floor, confidence=gate.confidence, judges=judges,
                        cost=(cost or ControlCost()).rounded(), judge_tokens=judge_tokens, tells=tells, detector_bar=gate.detector_bar)


def caught(planted: str, answered: str) -> bool:
    """Whether a judge caught a control: its label, or, for a planted error, the other not-grounded label (an
    added detail read as gainsaid by the source, or a changed name read as a statement the source never makes:
    the glossary's unsupported, issue 49.5) is a flag all the same, no miss."""
    return answered == planted or (planted in _PLANTED_ERRORS and answered in _PLANTED_ERRORS)


_PLANTED_ERRORS = (UNSUPPORTED, CONTRADICTED)
