"""The main job: records -> answers -> claims -> candidates and checks -> verdicts, one result line per record.

Records are independent: they run concurrently (``record_concurrency``), each result is appended the moment
its record finishes, ``--resume`` skips what is finished, and ``--shard i/n`` takes every n-th record.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Awaitable, Callable

from judge.llm import LLM, BudgetExceeded, CallCache, ModelConfig, check_cross_family, family_of
from judge.llm.families import require_known_family
from judge.models import Answer, Record
from judge.prompts import Prompt, load_prompt
from judge.results import AnswerResult, ClaimResult, Decomposition, JudgeVerdict, RecordResult, Usage
from judge.runs.config import RunConfig
from judge.runs.inputs import dataset_records, recorded_answers
from judge.runs.store import RunDirError, RunStore
from judge.runs.summary import summarize
from judge.search import Index
from judge.stages.adjudicate import (
    DETERMINISTIC,
    ClaimToJudge,
    deterministic_verdict,
    judge_with_model,
    offer,
    panel_verdict,
    triage,
)
from judge.stages.checks import check_claim
from judge.stages.decompose import decompose
from judge.stages.generate import generate
from judge.text import detect_language


@dataclass
class Pipeline:
    """Everything a record needs, built once per run."""

    config: RunConfig
    llm: LLM
    prompts: dict[str, Prompt]
    recorded_answers: dict[str, list[Answer]] | None = None
    family_clashes: list[str] = field(default_factory=list)

    @property
    def judge_names(self) -> list[str]:
        return self.config.adjudicate.judges

    def decomposer(self) -> ModelConfig | None:
        c = self.config.decompose
        return self.config.model(c.model) if c.method == "llm" else None


def check_families(config: RunConfig, answer_families: list[str]) -> list[str]:
    """The cross-family rule, checked before any call: each LLM judge against every model whose output it
    judges (the models under test, recorded answers' families, the decomposer). Returns the clashes that
    allow_same_family lets through, for the summary to flag."""
    for name in set(config.generate.models) | {j for j in config.adjudicate.judges if j != DETERMINISTIC} | (
        {config.decompose.model} if config.decompose.method == "llm" else set()
    ):
        require_known_family(config.model(name))
    others: list[ModelConfig | str] = [config.model(m) for m in config.generate.models]
    others += [ModelConfig(model=f"answers/{f}", name=f"recorded answers ({f})", family=f) for f in answer_families]
    if config.decompose.method == "llm":
        others.append(config.model(config.decompose.model))
    clashes = []
    for name in config.adjudicate.judges:
        if name == DETERMINISTIC:
            continue
        clashes += check_cross_family(config.model(name), others, config.adjudicate.allow_same_family)
    return clashes


def load_inputs(config: RunConfig) -> tuple[list[Record], dict[str, list[Answer]] | None]:
    records = dataset_records(config)
    answers = recorded_answers(config, records)
    if answers is None:
        return records, None
    by_record: dict[str, list[Answer]] = {}
    for a in answers:
        by_record.setdefault(a.record_id, []).append(a)
    return records, by_record


def select(records: list[Record], limit: int | None, shard: tuple[int, int] | None) -> list[Record]:
    picked = records[:limit] if limit else records
    if shard:
        i, n = shard
        picked = [r for k, r in enumerate(picked) if k % n == i]
    return picked


def build_pipeline(
    config: RunConfig, recorded: dict[str, list[Answer]] | None, cache: CallCache, answer_families: list[str] | None = None
) -> Pipeline:
    """Prompts, the LLM port and the answers; the cross-family rule is checked here, before any call."""
    if answer_families is None:
        answer_families = sorted({a.family or family_of(a.model) for answers in (recorded or {}).values() for a in answers})
    clashes = check_families(config, answer_families)
    prompts = {name: load_prompt(name) for name in ("answer", "decompose", "judge")}
    return Pipeline(config, LLM(cache, config.max_cost_usd), prompts, recorded, clashes)


async def process_record(p: Pipeline, record: Record) -> RecordResult:
    """One record, end to end. Raises BudgetExceeded (nothing written) when the budget runs out midway."""
    cfg = p.config
    usage = Usage()
    language = detect_language(record.question + " " + record.sources[0].text[:2000])
    indexes = [Index(s.text, s.doc_id) for s in record.sources]
    sources = {s.doc_id: s.text for s in record.sources}
    if len(record.sources) == 1:
        sources[None] = record.sources[0].text

    answers: list[tuple[str, str, str, str | None, bool]] = []  # (model label, family, text, error, truncated)
    recorded = p.recorded_answers.get(record.id) if p.recorded_answers is not None else None
    if recorded:  # else the models under test answer it (a plain file may mix both)
        for a in recorded:
            answers.append((a.model, a.family or family_of(a.model), a.answer, None, False))
    else:
        for name in cfg.generate.models:
            mcfg = cfg.model(name)
            if cfg.generate.max_tokens:
                mcfg = mcfg.model_copy(update={"max_tokens": cfg.generate.max_tokens})
            text, error, calls = await generate(p.llm, mcfg, p.prompts["answer"], record, language)
            for c in calls:
                usage.add_call(c)
            answers.append((mcfg.label, family_of(mcfg), text, error, any(c.truncated for c in calls)))

    results = []
    for model, family, text, error, truncated in answers:
        result = await _process_answer(p, record, language, indexes, sources, model, family, text, error, usage)
        results.append(result.model_copy(update={"truncated": truncated}))
    return RecordResult(
        record_id=record.id,
        genre=record.genre,
        difficulty=record.difficulty,
        question=record.question,
        language=language,
        answers=results,
        usage=usage,
    )


def _candidates(indexes: list[Index], text: str, k: int):
    found = [c for ix in indexes for c in ix.search(text, k)]
    return sorted(found, key=lambda c: -c.score)[:k]


async def _process_answer(p, record, language, indexes, sources, model, family, text, error, usage) -> AnswerResult:
    cfg = p.config
    if not text.strip():
        how = Decomposition(method="sentences", fallback_reason="empty answer" if error is None else error)
        return AnswerResult(model=model, family=family, answer=text, generation_error=error, decomposition=how)
    claims, how, calls = await decompose(
        p.llm, p.decomposer(), p.prompts["decompose"], record.question, text, language, cfg.decompose.method
    )
    for c in calls:
        usage.add_call(c)
    to_judge = []
    for i, (claim_text, spans) in enumerate(claims, start=1):
        offered = offer(_candidates(indexes, claim_text, cfg.search.k), str(i))
        to_judge.append(ClaimToJudge(str(i), claim_text, offered, check_claim(claim_text, offered)))
    verdicts = await judge_claims(p, record, language, to_judge, sources, usage)
    out = []
    for i, (c, (claim_text, spans)) in enumerate(zip(to_judge, claims)):
        label, evidence = panel_verdict(verdicts[c.cid])
        out.append(
            ClaimResult(
                claim_id=i,
                text=claim_text,
                answer_spans=spans,
                candidates=c.candidates,
                checks=c.checks,
                verdicts=verdicts[c.cid],
                label=label,
                evidence=evidence,
            )
        )
    return AnswerResult(model=model, family=family, answer=text, generation_error=error, decomposition=how, claims=out)


async def judge_claims(p: Pipeline, record: Record, language: str, claims: list[ClaimToJudge], sources, usage: Usage) -> dict[str, list[JudgeVerdict]]:
    """Triage, then every judge of the panel on the claims triage did not settle."""
    cfg = p.config.adjudicate
    verdicts: dict[str, list[JudgeVerdict]] = {c.cid: [] for c in claims}
    open_claims = []
    for c in claims:
        settled = triage(c) if cfg.triage else None
        if settled is not None:
            verdicts[c.cid].append(settled)
        else:
            open_claims.append(c)
    if not open_claims:
        return verdicts
    full = record.sources if cfg.judge_context == "full" else None

    async def one_judge(name: str):
        if name == DETERMINISTIC:
            return {c.cid: deterministic_verdict(c, cfg.deterministic) for c in open_claims}, []
        return await judge_with_model(
            p.llm,
            p.config.model(name),
            p.prompts["judge"],
            record.question,
            language,
            open_claims,
            sources,
            batch=cfg.batch_claims,
            context_chars=p.config.search.context_chars,
            full_sources=full,
        )

    for by_claim, calls in await asyncio.gather(*(one_judge(n) for n in p.judge_names)):
        for c in calls:
            usage.add_call(c)
        for cid, v in by_claim.items():
            verdicts[cid].append(v)
    return verdicts


def config_hash(config: RunConfig) -> str:
    return hashlib.sha256(config.model_dump_json().encode()).hexdigest()[:16]


async def run_items(
    items: list,
    work: Callable[[object], Awaitable[RecordResult]],
    store: RunStore,
    concurrency: int,
    on_result: Callable[[RecordResult], None] | None = None,
) -> str | None:
    """Process items concurrently, appending each result as it finishes. Returns why it stopped early, if it did."""
    queue: asyncio.Queue = asyncio.Queue()
    for item in items:
        queue.put_nowait(item)
    stopped: list[str] = []

    async def worker():
        while not queue.empty() and not stopped:
            item = queue.get_nowait()
            try:
                result = await work(item)
            except BudgetExceeded as e:
                stopped.append(str(e))
                store.log(f"budget reached: {e}; no new work is started")
                return
            store.append(result)
            if on_result:
                on_result(result)

    await asyncio.gather(*(worker() for _ in range(min(concurrency, max(1, len(items))))))
    return stopped[0] if stopped else None


def finish(store: RunStore, order: list[str], config: RunConfig, cache: CallCache, stopped: str | None) -> dict:
    """Results in dataset order, and the summary written beside them."""
    finished = store.rewrite_in_order(order)
    summary = summarize(store.iter_finished(), store.manifest(), config)
    summary["run"] = {
        "records_selected": len(order),
        "records_finished": finished,
        "complete": finished == len(order),
        "stopped_early": stopped,
        "cache": {"enabled": cache.enabled, "hits": cache.hits, "misses": cache.misses, "disabled_reason": cache.disabled_reason},
    }
    store.write_summary(summary)
    return summary


def execute(
    config: RunConfig,
    *,
    runs_root: Path = Path("runs"),
    name: str | None = None,
    resume: Path | None = None,
    shard: tuple[int, int] | None = None,
    use_cache: bool = True,
    refresh: bool = False,
    on_start: Callable[[int, int], None] | None = None,
    on_result: Callable[[RecordResult], None] | None = None,
) -> tuple[RunStore, dict]:
    """Run (or resume) a config; returns the run directory and its summary."""
    records, recorded = load_inputs(config)
    selected = select(records, config.limit, shard)
    cache = CallCache(config.cache_dir, enabled=use_cache, refresh=refresh)
    pipeline = build_pipeline(config, recorded, cache)  # the cross-family rule, before any call
    if resume is not None:
        store = RunStore.open(resume)
        manifest = store.manifest()
        if manifest.get("config_hash") != config_hash(config):
            raise RunDirError(
                f"{resume} was made with another config (hash {manifest.get('config_hash')}; this one is "
                f"{config_hash(config)}): resume it with the config, --limit and --shard it was started with"
            )
        wanted = set(manifest.get("records_selected", []))
        selected = [r for r in records if r.id in wanted]  # the run's own records, whatever --shard says now
        pipeline.llm.on_call = store.append_call
    else:
        meta = {
            "name": name or config.name,
            "config_hash": config_hash(config),
            "shard": list(shard) if shard else None,
            "prompts": {k: v.hash for k, v in pipeline.prompts.items()},
            "same_family_clashes": pipeline.family_clashes,
            "records_selected": [r.id for r in selected],
        }
        store = RunStore.create(runs_root, name or config.name, config, meta)
        pipeline.llm.on_call = store.append_call
    done = store.finished_ids()
    todo = [r for r in selected if r.id not in done]
    store.log(f"start: {len(selected)} records selected, {len(done)} already finished, {len(todo)} to do")
    if on_start:
        on_start(len(selected), len(done))
    started = time.perf_counter()
    try:
        work = lambda record: process_record(pipeline, record)  # noqa: E731
        stopped = asyncio.run(run_items(todo, work, store, config.record_concurrency, on_result))
    finally:
        cache.close()
    elapsed = time.perf_counter() - started
    store.update_manifest(wall_seconds=round(store.manifest().get("wall_seconds", 0.0) + elapsed, 3))
    summary = finish(store, [r.id for r in selected], config, cache, stopped)
    store.log(f"done in {elapsed:.1f} s: {summary['run']['records_finished']}/{len(selected)} records")
    return store, summary
