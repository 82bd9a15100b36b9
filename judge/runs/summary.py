"""A run's summary: labels, faithfulness and hallucination rate (judge.verdicts.rates) per model under test,
judge errors, usage."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from judge.controls.health import ControlTally, GateConfig, judge_health
from judge.judges.registry import model_judges
from judge.results import ControlCost, RecordResult, Usage
from judge.runs.outcome import OutcomeTally
from judge.verdicts import TRIAGE, rates


def summarize(results: Iterable[RecordResult], manifest: dict, config, spent: Usage | None = None) -> dict:
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
    return {
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
    }


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
