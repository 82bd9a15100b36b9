"""A run's summary (summary.json): labels, faithfulness and hallucination rate (judge.verdicts.rates) per model
under test, judge errors, usage, the judges' health and the run's outcome. ``Summary`` is its one type: written
through it (RunStore.write_summary) and read back through it (Run.summary_model), so a summary.json edited by
hand is one line naming the field."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from judge.controls.health import ControlTally, GateConfig, HealthReport, judge_health
from judge.judges.registry import model_judges
from judge.results import ControlCost, RecordResult, Usage
from judge.runs.outcome import Outcome, OutcomeTally
from judge.verdicts import TRIAGE, rates


class Rates(BaseModel):
    """judge.verdicts.rates of a set of claims: how many, their labels, faithfulness and hallucination rate."""

    claims: int = Field(ge=0)
    labels: dict[str, int]
    faithfulness: float | None = Field(None, ge=0, le=1)
    hallucination_rate: float | None = Field(None, ge=0, le=1)


class CacheState(BaseModel):
    enabled: bool
    hits: int = Field(ge=0)
    misses: int = Field(ge=0)
    disabled_reason: str | None = None


class RunState(BaseModel):
    """How far the run got: records selected and finished, whether it is complete (a run stopped early, by
    max_cost_usd or lost Ray tasks, is not), and its cache; a merged run names its shards."""

    records_selected: int = Field(ge=0)
    records_finished: int = Field(ge=0)
    complete: bool
    stopped_early: str | None = None
    cache: CacheState | None = None
    merged_from: list[str] | None = None


class CalibrationNote(BaseModel):
    """What the run adopted of its judges' calibration (judge.runs.calibration.adopt)."""

    file: str | None = None
    key: str
    adopted: list[str] = []
    floors: dict[str, float] = {}
    why_not: str | None = None


# the parts whose own keys are written only where they were set (a merged run's ``run`` has no cache)
PARTIAL = ("run", "judge_calibration")


class Summary(BaseModel):
    """summary.json. Fields in the order the file has always written them; a key that was never set (a run
    with no judge health has no ``judge_calibration``) is not written. Keys of another version are kept."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)

    name: str | None = None
    config_hash: str | None = None
    prompts: dict[str, str] = {}
    judges: list[str] = []
    same_family_clashes: list[str] = []
    unknown_family_answer_models: list[str] = []  # recorded answers whose model's family cannot be told (issue 17.7)
    records: int = Field(0, ge=0)
    answers: int = Field(0, ge=0)
    overall: Rates | None = None
    by_model: dict[str, Rates] = {}
    by_judge: dict[str, Rates] = {}
    claims_triaged: int = Field(0, ge=0)
    decomposition_fallbacks: int = Field(0, ge=0)
    claims_dropped: int = Field(0, ge=0)
    claims_dropped_by_reason: dict[str, int] = {}
    claims_read_with_question: int = Field(0, ge=0)
    generation_errors: int = Field(0, ge=0)
    answers_truncated: int = Field(0, ge=0)
    judge_health: HealthReport | None = None
    usage: Usage | None = None
    outcome: Outcome | None = None
    notes: list[str] = []
    judge_calibration: CalibrationNote | None = None
    panel_excluded: dict[str, str] | None = None  # judges the panel went on without, and why (judge.runs.trust)
    run: RunState | None = None

    @property
    def complete(self) -> bool:
        """Every record selected finished (a run stopped early, by max_cost_usd or lost Ray tasks, did not)."""
        return self.run is None or self.run.complete

    def dump(self) -> dict[str, Any]:
        """The JSON object summary.json holds (and ``Run.summary`` gives): the fields set, in their order."""
        out = self.model_dump(include=set(self.model_fields_set) | set(self.model_extra or {}))
        for key in PARTIAL:
            part = getattr(self, key)
            if key in out and part is not None:
                out[key] = part.model_dump(exclude_unset=True)
        return out


def load_summary(path: Path) -> Summary | None:
    """summary.json read back through ``Summary`` (None: the run never finished). A value that does not fit, a
    file edited by hand or written by another version, is the run directory's problem: one line naming the file
    and the field (RunDirError, exit 2), never a traceback."""
    from judge.runs.reading import read_json_object, validated

    if not (path.exists() or path.is_symlink()):
        return None
    data = read_json_object(path)  # corrupt, too deep, not an object, a device: RunDirError
    if not data:
        return None
    return validated(Summary, data, path)


def summarize(results: Iterable[RecordResult], manifest: dict, config, spent: Usage | None = None) -> Summary:
    """``spent``: the run's usage from calls.jsonl (RunStore.usage), which also counts calls made for records
    a kill lost; the per-record usage of the results is summed only where a run has no call log."""
    by_model: dict[str, Counter] = defaultdict(Counter)
    by_judge: dict[str, Counter] = defaultdict(Counter)
    overall: Counter = Counter()
    usage = Usage()
    answers = triaged = fallbacks = generation_errors = truncated = records = read_with_question = 0
    dropped: Counter = Counter()  # what decomposition dropped (judge.stages.claims), by reason (its words before ":")
    seen = ControlTally()  # the judges' verdicts on the controls, counted (flat memory)
    control_cost = ControlCost()
    tally = OutcomeTally(getattr(config, "max_error_rate", 0.0))
    for r in results:
        records += 1
        tally.add(r)
        seen.add(r)
        control_cost.add(r.control_cost)
        usage.add(r.usage)
        for a in r.answers:
            answers += 1
            fallbacks += a.decomposition.fallback_reason is not None and a.answer.strip() != ""
            dropped.update(d.reason.split(":")[0] for d in a.decomposition.dropped)
            generation_errors += a.generation_error is not None
            truncated += a.truncated
            for c in a.claims:
                overall[c.label] += 1
                by_model[a.model][c.label] += 1
                triaged += any(v.how == TRIAGE for v in c.verdicts)
                read_with_question += c.reads_question
                for v in c.verdicts:
                    if v.how != TRIAGE:
                        by_judge[v.judge][v.label] += 1
    return Summary.model_validate({
        "name": manifest.get("name"),
        "config_hash": manifest.get("config_hash"),
        "prompts": manifest.get("prompts", {}),
        "judges": list(config.adjudicate.judges),
        "same_family_clashes": manifest.get("same_family_clashes", []),
        # recorded answers whose model's family cannot be told: no judge was checked against them (issue 17.7)
        "unknown_family_answer_models": manifest.get("unknown_family_answer_models", []),
        "records": records,
        "answers": answers,
        "overall": rates(overall),
        "by_model": {m: rates(c) for m, c in sorted(by_model.items())},
        "by_judge": {j: rates(c) for j, c in sorted(by_judge.items())},
        "claims_triaged": triaged,
        "decomposition_fallbacks": fallbacks,
        "claims_dropped": sum(dropped.values()),
        "claims_dropped_by_reason": dict(sorted(dropped.items())),
        "claims_read_with_question": read_with_question,
        "generation_errors": generation_errors,
        "answers_truncated": truncated,
        "judge_health": health(config, seen, by_judge, control_cost, usage).model_dump(),
        "usage": (spent if spent is not None else usage).model_dump(),
        "outcome": tally.outcome().model_dump(),
        "notes": notes(config),
    })


def health(config, seen, by_judge, cost: ControlCost, usage: Usage):
    """The judges' health on the canary under the config's gate, and the controls' share of the judges' tokens
    (how far controls can be told from real claims is bench's question: bench/tells.py)."""
    c = config.controls
    return judge_health(seen, by_judge, GateConfig(gate=c.gate, floor=c.floor, confidence=c.confidence, detector_bar=c.detector_bar), enabled=c.enabled,
                        cost=cost, judge_tokens=usage.prompt_tokens + usage.completion_tokens,
                        model_judges=model_judges(config.adjudicate.judges))


def embedded_models(config) -> list[str]:
    """The run's models that are embedded (``local/...``): generation, decomposition and judging."""
    return sorted({n for n in config.called_model_names() if config.model(n).embedded_name})


def notes(config) -> list[str]:
    """Plain lines the terminal summary prints under the table (and summary.json keeps)."""
    local = embedded_models(config)
    if not local:
        return []
    demonstration = (
        f"demonstration: the embedded models ({', '.join(local)}) are tiny models that run offline; their answers "
        "and verdicts show the pipeline working and are not to be trusted. For real verdicts use a hosted judge "
        "(configs/hosted.yaml)."
    )
    return [demonstration]
