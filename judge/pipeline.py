"""One record, end to end: answers (recorded or generated) -> claims -> candidates and checks -> the judges'
verdicts -> a RecordResult. The runner (resume, queue, shards, finish), rejudge and the Python API all use
this; nothing here writes a file.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from functools import cache

from judge.controls.mix import ControlPlan
from judge.judges import ClaimToJudge, JudgeContext, JudgeSetup, Panel, build_judge, model_judges, offer, panel_verdict
from judge.llm import LLM, CallCache, ModelConfig, check_cross_family, family_of
from judge.llm.families import UNKNOWN_FAMILY_HINT, answer_family, require_known_family, unknown_answer_models
from judge.models import Answer, Record
from judge.prompts import Prompt, load_answer_variant, load_prompt
from judge.judges.stored import ask_stored, stored_claim
from judge.judges.triage import settle, triage as triage_verdict
from judge.models import Candidate
from judge.results import AnswerResult, ClaimResult, ControlClaim, ControlCost, ControlResult, Decomposition, JudgeVerdict, RecordResult, Usage
from judge.config import RunConfig, SearchSection
from judge.search import Index
from judge.search import offer as offer_within  # the budgeted offer; `offer` here is the judges' id-giving one
from judge.search.index import CHARS_PER_TOKEN
from judge.stages.evidence import check_claim
from judge.stages.claims import drop_unfinished
from judge.stages.decompose import decompose
from judge.stages.generate import generate
from judge.text.control import one_line
from judge.verdicts import JUDGE_ERROR, SUPPORTED

PROMPTS = ("answer", "decompose", "judge")


@dataclass
class Pipeline:
    """Everything a record needs, built once per run."""

    config: RunConfig
    llm: LLM
    prompts: dict[str, Prompt]
    panel: Panel
    recorded_answers: dict[str, list[Answer]] | None = None
    family_clashes: list[str] = field(default_factory=list)
    controls: ControlPlan | None = None  # set by the runner, which knows the run's records
    unknown_families: list[str] = field(default_factory=list)  # recorded answer models the cross-family rule cannot check

    def decomposer(self) -> ModelConfig | None:
        c = self.config.decompose
        return self.config.model(c.model) if c.method == "llm" else None


def check_families(config: RunConfig, answer_families: list[str]) -> list[str]:
    """The cross-family rule, checked before any call: each model judge against every model whose output it
    judges (the models under test, recorded answers' families, the decomposer). Returns the clashes that
    allow_same_family lets through, for the summary to flag."""
    judges = model_judges(config.adjudicate.judges)
    for name in set(config.called_model_names()):
        require_known_family(config.model(name))
    others: list[ModelConfig | str] = [config.model(m) for m in config.generate.models]
    others += [ModelConfig(model=f"answers/{f}", name=f"recorded answers ({f})", family=f) for f in answer_families]
    if config.decompose.method == "llm":
        others.append(config.model(config.decompose.model))
    clashes = []
    for name in judges:
        clashes += check_cross_family(config.model(name), others, config.adjudicate.allow_same_family)
    return clashes


def model_judged(config: RunConfig) -> bool:
    """Whether a model judge runs: a warning about model judges (the cross-family rule) means nothing without."""
    return bool(model_judges(config.adjudicate.judges))


def build_panel(config: RunConfig, llm: LLM, prompt: Prompt) -> Panel:
    a = config.adjudicate
    setup = JudgeSetup(
        models=config.models, llm=llm, prompt=prompt, batch=a.batch_claims, context_chars=config.search.context_chars,
        full_context=a.judge_context == "full", thresholds=a.deterministic, call_tokens=a.call_tokens, call_claims=a.call_claims,
    )
    return Panel([build_judge(name, setup) for name in a.judges], triage=a.triage, cascade=a.cascade)


def build_pipeline(
    config: RunConfig, recorded: dict[str, list[Answer]] | None, cache: CallCache, answer_families: list[str] | None = None
) -> Pipeline:
    """Prompts, the LLM port, the panel and the answers; the cross-family rule is checked here, before any call."""
    # an on-disk RecordedAnswers gives one answer per (model, family): all the families need, none held whole
    answers = recorded.representatives() if hasattr(recorded, "representatives") else [a for answers in (recorded or {}).values() for a in answers]
    if answer_families is None:
        answer_families = sorted({answer_family(a.model, a.family) for a in answers})
    clashes = check_families(config, answer_families)
    if unknown := (unknown_answer_models(answers) if model_judged(config) else []):
        logging.getLogger("judge").warning(
            "cannot tell the model family of the recorded answers of %s: the cross-family rule is not checked for them "
            "(%s)", one_line(", ".join(unknown), 300), UNKNOWN_FAMILY_HINT)  # a model name is data: one line, never a forged one
    prompts = {name: load_prompt(name) for name in PROMPTS}
    for variant, path in config.generate.prompts.items():  # the answer prompts under test (checked at config load)
        prompts[f"answer:{variant}"] = load_answer_variant(variant, path)
    llm = LLM(cache, config.max_cost_usd)
    return Pipeline(config, llm, prompts, build_panel(config, llm, prompts["judge"]), recorded, clashes, unknown_families=unknown)


async def process_record(p: Pipeline, record: Record) -> RecordResult:
    """One record, end to end. Raises BudgetExceeded (nothing written) when the budget runs out midway."""
    cfg = p.config
    usage = Usage()
    language = record.language
    indexes = [Index(s.text, s.doc_id) for s in record.sources]

    answers: list[tuple[str, str, str, str | None, bool, dict]] = []  # (model label, family, text, error, truncated, prompt fields)
    recorded = p.recorded_answers.get(record.id) if p.recorded_answers is not None else None
    for a in recorded or ():
        answers.append((a.model, answer_family(a.model, a.family), a.answer, None, False, {}))
    # the models under test answer a record with no recorded answer (a plain file may mix both), and every record
    # when an answers file is given beside them (recorded answers of known quality beside the models' own)
    if not recorded or cfg.answers is not None:
        for name in cfg.generate.models:
            mcfg = cfg.model(name)
            if cfg.generate.max_tokens:
                mcfg = mcfg.model_copy(update={"max_tokens": cfg.generate.max_tokens})
            for variant in cfg.generate.variants():  # each prompt under test, crossed with each model
                prompt = p.prompts["answer"] if variant is None else p.prompts[f"answer:{variant}"]
                text, error, calls = await generate(p.llm, mcfg, prompt, record, language)
                for c in calls:
                    usage.add_call(c)
                label = mcfg.label if variant is None else f"{mcfg.label}+{variant}"
                fields = {} if variant is None else {"prompt": variant, "prompt_hash": prompt.hash}
                answers.append((label, family_of(mcfg), text, error, any(c.truncated for c in calls), fields))

    results: list[AnswerResult] = []
    controls: list[ControlResult] = []
    cost = ControlCost()
    for index, (model, family, text, error, truncated, fields) in enumerate(answers):
        result, spent, mixed = await _process_answer(p, record, language, indexes, model, family, text, error, usage, index, len(controls),
                                                      truncated=truncated)
        results.append(result.model_copy(update={"truncated": truncated, **fields}))
        controls.extend(mixed)
        cost.add(spent)
    return RecordResult(
        record_id=record.id,
        genre=record.genre,
        difficulty=record.difficulty,
        question=record.question,
        language=language,
        answers=results,
        controls=controls,
        control_cost=cost.rounded(),
        usage=usage,
    )


def candidates(indexes: list[Index], text: str, search: SearchSection):
    """The top k candidates over the record's sources, or what fits the configured token budget."""
    budget = budget_tokens(search, indexes)
    if budget is not None:
        return offer_within(indexes, text, budget)
    found = [c for ix in indexes for c in ix.search(text, search.k)]
    return sorted(found, key=lambda c: -c.score)[: search.k]


def budget_tokens(search: SearchSection, indexes: list[Index]) -> int | None:
    """The evidence budget per claim in tokens, None for the top-k offer; a share counts all the sources."""
    if search.budget_share is None:
        return search.budget_tokens
    return max(1, round(search.budget_share * sum(len(ix.source) for ix in indexes) / CHARS_PER_TOKEN))


async def _process_answer(
    p: Pipeline, record: Record, language: str, indexes, model, family, text, error, usage: Usage, index: int = 0, given: int = 0,
    truncated: bool = False,
) -> tuple[AnswerResult, ControlCost, list[ControlResult]]:
    """One answer's claims, judged; and its control answer, if the plan chose it, judged in calls of its own."""
    cfg = p.config
    if not text.strip():
        how = Decomposition(method="sentences", fallback_reason="empty answer" if error is None else error)
        return AnswerResult(model=model, family=family, answer=text, generation_error=error, decomposition=how), ControlCost(), []
    claims, how, calls = await decompose(
        p.llm, p.decomposer(), p.prompts["decompose"], record.question, text, language, cfg.decompose.method
    )
    for c in calls:
        usage.add_call(c)
    if truncated:  # its last sentence is half a sentence: set apart, with the reason, not judged
        claims, unfinished = drop_unfinished(text, claims)
        how = how.model_copy(update={"dropped": [*how.dropped, *unfinished]}) if unfinished else how
    sources = {s.doc_id: s.text for s in record.sources}
    texts = JudgeContext(record.question, language, record.sources)  # what triage reads: the same input as the panel's
    real = [to_judge(indexes, c.text, str(i + 1), cfg.search, sources) for i, c in enumerate(claims)]
    settled = settle(real, texts) if p.panel.triage else {}
    controls = p.controls.for_answer(record, index, real, len(real) - len(settled), settled, given, p.panel.triage) if p.controls else []
    verdicts, _ = await judge_claims(p, record, language, real, usage)
    out = []
    for i, (claim, c) in enumerate(zip(claims, real)):
        label, evidence = panel_verdict(verdicts[c.cid])
        out.append(
            ClaimResult(
                claim_id=i,
                text=claim.text,
                answer_spans=claim.spans,
                candidates=c.candidates,
                checks=c.checks,
                verdicts=verdicts[c.cid],
                label=label,
                evidence=evidence,
                reads_question=claim.reads_question,
            )
        )
    answer = AnswerResult(model=model, family=family, answer=text, generation_error=error, decomposition=how, claims=out)
    if not controls:
        return answer, ControlCost(), []
    shown = [replace(to_judge(indexes, c.text, str(j + 1), cfg.search, sources), control=True) for j, c in enumerate(controls)]
    mixed, cost = await judge_controls(p, record, language, controls, shown, index, usage, texts if p.panel.triage else None)
    return answer, cost, withdraw(mixed, out)


async def judge_controls(p: Pipeline, record: Record, language: str, controls: list[ControlClaim], shown: list[ClaimToJudge], index: int,
                         usage: Usage, triage_texts) -> tuple[list[ControlResult], ControlCost]:
    """A control answer judged as an answer is, in calls of its own; its results and what its calls cost."""
    verdicts, calls = await judge_claims(p, record, language, shown, usage)
    results = [_control_result(c, index, j, tj, verdicts) for j, (c, tj) in enumerate(zip(controls, shown))]
    return results, _control_cost(shown, calls, triage_texts)


def withdraw(controls: list[ControlResult], claims: list[ClaimResult]) -> list[ControlResult]:
    """A supported control's label is certain only where no judge flagged the answer it was made from: one
    that some judge labelled otherwise than supported (an error aside) is kept but not counted."""
    flagged = sorted({v.judge for c in claims for v in c.verdicts if v.label not in (SUPPORTED, JUDGE_ERROR)})
    if not flagged:
        return controls
    why = f"made from an answer {', '.join(flagged)} flagged"
    return [c.model_copy(update={"withdrawn": why}) if c.control.label == SUPPORTED else c for c in controls]


def to_judge(indexes: list[Index], text: str, cid: str, search: SearchSection, sources: dict[str | None, str]) -> ClaimToJudge:
    """A claim with its offered candidates and checks (corrections are looked for in the whole source)."""
    offered = offer(candidates(indexes, text, search), cid)
    return ClaimToJudge(cid, text, offered, check_claim(text, offered, sources))


def _control_cost(controls: list[ClaimToJudge], calls: list, triage_texts) -> ControlCost:
    """What a control answer's judge calls spent (calls served from the cache spent nothing); ``shown``: its
    controls that reached a model judge (triage settles none that it would settle; ``triage_texts``: the
    record's sources when triage is on, else None), once per judge. A price unknown makes the cost unknown."""
    open_controls = sum(1 for c in controls if triage_texts is None or triage_verdict(c, triage_texts) is None)
    cost = ControlCost()
    if not open_controls or not calls:
        return cost
    for c in calls:
        if c.cached:
            continue
        cost.calls += 1
        cost.prompt_tokens += c.prompt_tokens
        cost.completion_tokens += c.completion_tokens
        if c.cost_usd is None:
            cost.priced = False
        cost.cost_usd += c.cost_usd or 0.0
    cost.shown = open_controls * len({c.model for c in calls})
    return cost


def _control_result(control: ControlClaim, answer: int, position: int, shown: ClaimToJudge, verdicts: dict[str, list[JudgeVerdict]]) -> ControlResult:
    label, _ = panel_verdict(verdicts[shown.cid])
    return ControlResult(
        control=control, answer=answer, position=position, candidates=shown.candidates, checks=shown.checks, verdicts=verdicts[shown.cid], label=label
    )


async def judge_claims(p: Pipeline, record: Record, language: str, claims: list[ClaimToJudge], usage: Usage) -> tuple[dict[str, list[JudgeVerdict]], list]:
    """The panel's verdicts on the claims, and the judges' call records (also added to ``usage``)."""
    context = JudgeContext(record.question, language, record.sources)
    verdicts = await p.panel.verdicts(claims, context)
    for c in context.calls:
        usage.add_call(c)
    return verdicts, context.calls


async def rejudge_record(p: Pipeline, old: RecordResult, record: Record) -> RecordResult:
    """A finished record's stored claims, controls and candidates, judged again by this pipeline's panel with
    the ids the original calls showed them by: each answer's claims, then its control answer in calls of its
    own. An answer the plan now chooses that had no control answer (a rejudge asking more controls per label)
    gets one, made from its stored claims as a run makes them, so the new judges' gate has its evidence."""
    usage = Usage()
    cost = ControlCost()
    answers, controls = [], []
    texts = JudgeContext(record.question, old.language, record.sources) if p.panel.triage else None
    indexes = cache(lambda: [Index(s.text, s.doc_id) for s in record.sources])  # built once, and only if a control needs a search
    for index, a in enumerate(old.answers):
        verdicts, calls = await ask_stored(p.panel, old.record_id, record, old.language, a.claims) if a.claims else ({}, [])  # the one re-ask path
        for call in calls:
            usage.add_call(call)
        new_claims = []
        for n, c in enumerate(a.claims):
            label, evidence = panel_verdict(verdicts[str(n + 1)])
            new_claims.append(ClaimResult(**{**c.model_dump(), "verdicts": verdicts[str(n + 1)], "label": label, "evidence": evidence}))
        answers.append(AnswerResult(**{**a.model_dump(), "claims": new_claims}))
        mine = sorted((c for c in old.controls if c.answer == index), key=lambda c: c.position)
        made = [c.control for c in mine] or _more_controls(p, record, index, a, len(controls), texts, indexes)
        if not made:
            continue
        shown_controls = [ClaimToJudge(str(n + 1), c.control.text, c.candidates, c.checks, control=True) for n, c in enumerate(mine)] or [
            replace(to_judge(indexes(), c.text, str(n + 1), p.config.search, {s.doc_id: s.text for s in record.sources}), control=True)
            for n, c in enumerate(made)]
        results, spent = await judge_controls(p, record, old.language, made, shown_controls, index, usage, texts)
        cost.add(spent)
        controls += withdraw(results, new_claims)
    return RecordResult(**{**old.model_dump(), "answers": answers, "controls": controls, "usage": usage, "control_cost": cost.rounded()})


def _more_controls(p: Pipeline, record: Record, index: int, answer: AnswerResult, given: int, texts, indexes) -> list[ControlClaim]:
    """The control answer this config's plan makes for an answer that had none (``indexes()``: the record's
    source indexes), its ids marked "-r" so that none takes an id of the run's own controls."""
    if p.controls is None or not answer.claims:
        return []
    real = [stored_claim(str(i + 1), c) for i, c in enumerate(answer.claims)]
    settled = settle(real, texts) if texts is not None else {}
    planned = p.controls.for_answer(record, index, real, len(real) - len(settled), settled, given, texts is not None)
    return [c.model_copy(update={"id": f"{c.id}-r"}) for c in planned]
