"""The ``judge`` command line: thin; it parses, calls the library, prints.

Heavy modules (numpy, the datasets, later litellm) are imported inside the commands so that
``judge --help`` stays fast.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Grounding evaluator for LLM answers.")

EXIT_BAD_INPUT = 2


def _version(value: bool) -> None:
    if value:
        from judge import __version__

        sys.stdout.write(f"judge {__version__}\n")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit.")) -> None:
    """Grounding evaluator for LLM answers."""


@app.command()
def init(directory: Path = typer.Argument(Path("."), help="Folder of the new project (created if needed).")) -> None:
    """Write a starter project: a config with the deterministic judge, a three-record example in the plain
    JSONL format and the models file. Then: judge run DIR/judge.yaml"""
    from judge.starter import CONFIG_NAME, write_starter

    try:
        written = write_starter(directory)
    except (FileExistsError, OSError) as e:
        sys.stderr.write(f"{e}\n")
        raise typer.Exit(EXIT_BAD_INPUT)
    for path in written:
        sys.stdout.write(f"wrote {path}\n")
    sys.stdout.write(f"next: judge run {Path(directory) / CONFIG_NAME}\n")


def _print_json(obj) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=1) + "\n")


def _console():
    from rich.console import Console

    return Console(highlight=False)


def _fail_with_problems(problems) -> None:
    for p in problems:
        sys.stderr.write(f"{p}\n")
    raise typer.Exit(EXIT_BAD_INPUT)


def _fmt(x) -> str:
    if x is None:
        return "n/a"
    return f"{x:.4f}" if isinstance(x, float) else str(x)


@app.command()
def validate(
    path: Path = typer.Argument(..., help="Dataset file to check."),
    format: Optional[str] = typer.Option(None, "--format", "-f", help="hebrew-qa, answers, wice or squad (sniffed if omitted)."),
    records: Optional[Path] = typer.Option(None, "--records", help="For an answers file: the records its support spans point into."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    repair: bool = typer.Option(False, "--repair", help="Propose corrected offsets for spans that do not match."),
    write: Optional[Path] = typer.Option(None, "--write", help="With --repair: write a repaired copy here (never over the input)."),
) -> None:
    """Re-verify every span and print the dataset's key numbers and annotator agreement.

    Exit code 2 when anything is wrong, with one line per problem naming the file, record and field."""
    from judge.problems import DatasetError
    from judge.validate import propose_repairs, validate as run_validate, write_repaired

    try:
        loaded, rep = run_validate(str(path), format, str(records) if records else None)
    except DatasetError as e:
        _fail_with_problems(e.problems)
    repairs = propose_repairs(loaded) if (repair or write) else []
    if repairs or repair:
        rep["repairs"] = [r.as_dict() for r in repairs]
    if write is not None:
        try:
            rep["repairs_written"] = {"path": str(write), "applied": write_repaired(loaded, repairs, write)}
        except ValueError as e:
            sys.stderr.write(f"{e}\n")
            raise typer.Exit(EXIT_BAD_INPUT)
    if as_json:
        _print_json(rep)
    else:
        _print_validation(rep)
    if rep["errors"]:
        if not as_json:
            _fail_with_problems(loaded.problems)
        raise typer.Exit(EXIT_BAD_INPUT)


def _print_validation(rep: dict) -> None:
    from rich.table import Table

    console = _console()
    t = Table(title=f"{rep['file']} ({rep['format']})", show_header=False)
    for key in ("records", "claims", "spans", "spans_verified", "rating_entries"):
        t.add_row(key, str(rep[key]))
    t.add_row("genres", ", ".join(f"{k} {v}" for k, v in rep["genres"].items()) or "-")
    t.add_row("difficulties", ", ".join(f"{k}: {v}" for k, v in rep["difficulties"].items()) or "-")
    t.add_row("perfect agreement (records)", _fmt(rep["perfect_agreement"]))
    t.add_row("alpha, ordinal, pooled", _fmt(rep["alpha_pooled"]))
    for dim, value in rep["alpha_by_dimension"].items():
        t.add_row(f"  alpha {dim}", _fmt(value))
    sid = rep["sentence_ids"]
    t.add_row("sentence_id agrees with our segmentation", f"{sid['agree']} of {sid['stated']} (information)")
    for key in ("answers_by_model", "gold_labels"):
        if key in rep:
            t.add_row(key, ", ".join(f"{k} {v}" for k, v in rep[key].items()))
    t.add_row("errors", str(len(rep["errors"])))
    console.print(t)
    if "repairs" in rep:
        found = sum(1 for r in rep["repairs"] if r["new"])
        console.print(f"repairs proposed: {found} of {len(rep['repairs'])} broken spans")
        for r in rep["repairs"]:
            target = f"[{r['new'][0]}, {r['new'][1]}) by {r['method']} ({r['score']:.2f})" if r["new"] else "not found"
            console.print(f"  {r['record_id']} {r['field']}: [{r['old'][0]}, {r['old'][1]}) -> {target}", markup=False, soft_wrap=True)
    if "repairs_written" in rep:
        w = rep["repairs_written"]
        console.print(f"wrote {w['path']} with {w['applied']} spans repaired", markup=False)


@app.command("search-eval")
def search_eval(
    path: Path = typer.Argument(..., help="Dataset with gold spans."),
    format: Optional[str] = typer.Option(None, "--format", "-f"),
    k: int = typer.Option(5, "--k", min=1, help="Candidates per claim."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Recall@k, hit@k and MRR, and hit within token budgets (0.05-0.3x the source), against plain BM25."""
    from judge.datasets import load_checked
    from judge.problems import DatasetError
    from judge.search.evaluate import evaluate

    try:
        loaded = load_checked(path, format)
    except DatasetError as e:
        _fail_with_problems(e.problems)
    if loaded.problems:
        _fail_with_problems(loaded.problems)
    rep = evaluate(loaded.items, loaded.format, k)
    rep["file"] = str(path)
    if as_json:
        _print_json(rep)
        return
    from rich.table import Table

    metrics = [m for m in rep["overall"] if m not in ("claims", "spans")]
    t = Table(title=f"search-eval {path} (k={k}, {rep['overall']['claims']} claims, {rep['overall']['spans']} spans)")
    t.add_column("group")
    for m in metrics:
        t.add_column(m, justify="right")
    t.add_row("judge.search", *(_fmt(rep["overall"][m]) for m in metrics))
    t.add_row("plain BM25", *(_fmt(rep["baseline_overall"][m]) for m in metrics))
    t.add_row("ratio", *(_fmt(rep["ratio_to_baseline"][m]) for m in metrics))
    for g, row in rep["by_group"].items():
        t.add_row(f"{g} ({row['claims']})", *(_fmt(row[m]) for m in metrics))
    console = _console()
    console.print(t)
    console.print(f"{rep['found_rule']}; search time {rep['seconds']:.2f} s (indexing included)", soft_wrap=True)
    if "budget" in rep:
        o = rep["offered"]
        console.print(
            f"top-{k} offers {o['ours']['sentences_per_claim']} sentences, {o['ours']['tokens_per_claim']} tokens per claim "
            f"({o['ours']['share_of_source']:.3f}x the source); hit {_fmt(o['ours']['hit'])} against plain BM25 given the same "
            f"sentences {_fmt(o['plain_same_sentences']['hit'])}", soft_wrap=True)
        b = Table(title=f"hit within a token budget (source: {rep['source_tokens_per_claim']} tokens per claim)")
        for col in ("budget", "x source", "hit", "span recall", "sentences", "BM25 same sentences", "ratio", "BM25 same tokens", "ratio"):
            b.add_column(col, justify="right")
        for row in rep["budget"]:
            ours = row["ours"]
            b.add_row(str(row["budget_tokens"]), f"{ours['share_of_source']:.3f}", _fmt(ours["hit"]), _fmt(ours["span_recall"]),
                      str(ours["sentences_per_claim"]), _fmt(row["plain_same_sentences"]["hit"]), _fmt(row["ratio_same_sentences"]),
                      _fmt(row["plain_same_tokens"]["hit"]), _fmt(row["ratio_same_tokens"]))
        console.print(b)


@app.command()
def families(
    config: Optional[Path] = typer.Option(None, "--config", "-c", help="A YAML file with models: show each one's family."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """The model-family registry (model-id patterns -> family), and the families of a config's models."""
    from judge.llm.families import PROVIDER_FAMILIES, REGISTRY, family_of

    out: dict = {"patterns": [{"pattern": p, "family": f} for p, f in REGISTRY], "providers": PROVIDER_FAMILIES}
    if config is not None:
        models = _load_models_or_exit(config)
        out["models"] = {name: {"model": m.model, "family": family_of(m), "override": m.family} for name, m in models.items()}
    if as_json:
        _print_json(out)
        return
    from rich.table import Table

    t = Table(title="model families (first matching pattern wins; then the provider prefix)")
    t.add_column("pattern on a model name")
    t.add_column("family")
    for row in out["patterns"]:
        t.add_row(row["pattern"], row["family"])
    for provider, family in PROVIDER_FAMILIES.items():
        t.add_row(f"provider {provider}/...", family)
    console = _console()
    console.print(t)
    if "models" in out:
        m = Table(title=str(config))
        for col in ("name", "model", "family"):
            m.add_column(col)
        for name, row in out["models"].items():
            m.add_row(name, row["model"], row["family"] + (" (override)" if row["override"] else ""))
        console.print(m)


def _load_models_or_exit(path: Path) -> dict:
    from pydantic import ValidationError

    from judge.llm.config import load_models

    try:
        return load_models(path)
    except (FileNotFoundError, ValueError, ValidationError) as e:
        sys.stderr.write(f"{path}: {e}\n")
        raise typer.Exit(EXIT_BAD_INPUT)


@app.command()
def ping(
    config: Path = typer.Argument(..., help="YAML file with models: (e.g. configs/models.yaml)."),
    name: str = typer.Argument(..., help="Which model of that file to call."),
    cache_dir: Path = typer.Option(Path(".cache/judge"), "--cache-dir", help="Where model calls are cached."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the cache."),
    refresh: bool = typer.Option(False, "--refresh", help="Call the model again and overwrite the cached answer."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """One small structured call through the LLM port, to check a model config (key, server, mode)."""
    import asyncio

    from judge.llm import LLM, CallCache, LLMError
    from judge.llm.ping import PING_MESSAGES, PingAnswer

    models = _load_models_or_exit(config)
    if name not in models:
        sys.stderr.write(f"{config}: no model named {name!r}; known: {', '.join(models)}\n")
        raise typer.Exit(EXIT_BAD_INPUT)
    cache = CallCache(cache_dir, enabled=not no_cache, refresh=refresh)
    llm = LLM(cache)
    try:
        answer, record = asyncio.run(llm.structured(models[name], PING_MESSAGES, PingAnswer, prompt_hash="ping-v1"))
    except LLMError as e:
        sys.stderr.write(f"{name}: {e}\n")
        raise typer.Exit(1)
    finally:
        cache.close()
    out = {"answer": answer.model_dump(), "call": record.model_dump(), "cache": {"hits": cache.hits, "misses": cache.misses}}
    if as_json:
        _print_json(out)
        return
    console = _console()
    console.print(f"{name} ({record.model_id}, family {record.family}): {answer.label}: {answer.rationale}", markup=False, soft_wrap=True)
    cost = "unknown" if record.cost_usd is None else f"${record.cost_usd:.6f}"
    console.print(
        f"cached: {record.cached}; attempts {record.attempts}; tokens {record.prompt_tokens} + {record.completion_tokens}; "
        f"cost {cost}; {record.latency_s:.2f} s; cache hits {cache.hits}, misses {cache.misses}",
        soft_wrap=True,
    )


def _parse_shard(shard: Optional[str]) -> Optional[tuple[int, int]]:
    if shard is None:
        return None
    try:
        i, n = (int(x) for x in shard.split("/"))
        if not 0 <= i < n:
            raise ValueError
    except ValueError:
        sys.stderr.write(f"--shard {shard!r}: expected i/n with 0 <= i < n, e.g. 0/2 and 1/2\n")
        raise typer.Exit(EXIT_BAD_INPUT)
    return i, n


class _Progress:
    """A rich progress bar: records, claims, model calls, cache hits, tokens, cost and ETA."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.claims = self.calls = self.hits = self.tokens = 0
        self.cost = 0.0
        self.bar = None

    def start(self, total: int, done: int) -> None:
        if not self.enabled:
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.bar = Progress(
            TextColumn("records"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[stats]}"), TimeRemainingColumn(),
            console=_console().__class__(stderr=True),
        )
        self.task = self.bar.add_task("run", total=total, completed=done, stats="")
        self.bar.start()

    def advance(self, result) -> None:
        self.claims += sum(len(a.claims) for a in result.answers)
        u = result.usage
        self.calls += u.calls
        self.hits += u.cache_hits
        self.tokens += u.prompt_tokens + u.completion_tokens
        self.cost += u.cost_usd
        if self.bar is not None:
            stats = f"claims {self.claims} | calls {self.calls} | cache hits {self.hits} | tokens {self.tokens} | ${self.cost:.4f}"
            self.bar.update(self.task, advance=1, stats=stats)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _run_errors():
    from judge.llm import LLMError, SameFamilyError
    from judge.llm.families import UnknownFamilyError
    from judge.problems import DatasetError
    from judge.runs.config import ConfigError
    from judge.runs.store import RunDirError

    return (ConfigError, DatasetError, SameFamilyError, UnknownFamilyError, RunDirError, LLMError, FileNotFoundError)


def _report_run_error(e: Exception) -> None:
    from judge.problems import DatasetError

    if isinstance(e, DatasetError):
        _fail_with_problems(e.problems)
    sys.stderr.write(f"{e}\n")
    raise typer.Exit(EXIT_BAD_INPUT)


@app.command()
def run(
    config: Path = typer.Argument(..., help="Run config (YAML), e.g. configs/default.yaml."),
    name: Optional[str] = typer.Option(None, "--name", help="Run name (default: the config's name)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Only the first N records."),
    resume: Optional[Path] = typer.Option(None, "--resume", help="Finish an interrupted run directory."),
    shard: Optional[str] = typer.Option(None, "--shard", help="i/n: every n-th record from the i-th (0-based)."),
    runs_dir: Path = typer.Option(Path("runs"), "--runs-dir", help="Where run directories go."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the model-call cache."),
    refresh: bool = typer.Option(False, "--refresh", help="Call models again and overwrite cached answers."),
    progress: bool = typer.Option(True, "--progress/--no-progress"),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    baseline: Optional[Path] = typer.Option(None, "--baseline", help="After the run, compare it with this run directory."),
    gate: list[str] = typer.Option([], "--gate", help="With --baseline: METRIC:MAX_DROP (repeatable); exit 1 on a real drop."),
) -> None:
    """The main job: answer (or load answers), decompose, search, adjudicate; write runs/<time>-<name>/."""
    from judge.runs.config import load_run_config
    from judge.runs.runner import execute

    shard_spec = _parse_shard(shard)
    gates = _parse_gates(gate)
    if gates and baseline is None:
        sys.stderr.write("--gate needs --baseline RUN_DIR\n")
        raise typer.Exit(EXIT_BAD_INPUT)
    bar = _Progress(progress and not as_json)
    try:
        cfg = load_run_config(config)
        if limit:
            cfg = cfg.model_copy(update={"limit": limit})
        if resume is None and name is None:
            name = cfg.name
        store, summary = execute(
            cfg, runs_root=runs_dir, name=name, resume=resume, shard=shard_spec, use_cache=not no_cache,
            refresh=refresh, on_start=bar.start, on_result=bar.advance,
        )
    except _run_errors() as e:
        bar.stop()
        _report_run_error(e)
    except KeyboardInterrupt:
        bar.stop()
        sys.stderr.write("interrupted: every finished record is saved; finish with --resume RUN_DIR\n")
        raise typer.Exit(130)
    bar.stop()
    summary["run_dir"] = str(store.path)
    summary["scores"] = _write_reports_or_warn(store.path)
    if baseline is None:
        _print_summary(summary, as_json)
        return
    from judge.compare import compare as do_compare

    try:
        result = do_compare(baseline, store.path, gates)
    except _run_errors() as e:
        _report_run_error(e)
    if as_json:
        _print_json({"summary": summary, "compare": result})
    else:
        _print_summary(summary, False)
        _print_compare(result)
    if result["failed"]:
        raise typer.Exit(1)


def _parse_gates(gates: list[str]) -> list:
    from judge.compare import Gate

    try:
        return [Gate.parse(g) for g in gates]
    except ValueError as e:
        sys.stderr.write(f"{e}\n")
        raise typer.Exit(EXIT_BAD_INPUT)


@app.command()
def compare(
    run_a: Path = typer.Argument(..., help="The baseline run."),
    run_b: Path = typer.Argument(..., help="The run to check against it."),
    gate: list[str] = typer.Option([], "--gate", help="METRIC:MAX_DROP (repeatable): faithfulness, hallucination_rate, judge_error_rate, accuracy."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Metric deltas (B - A) with paired bootstrap 95% intervals, flipped verdicts; exit 1 when a gate fails."""
    from judge.compare import compare as do_compare

    gates = _parse_gates(gate)
    try:
        result = do_compare(run_a, run_b, gates)
    except _run_errors() as e:
        _report_run_error(e)
    if as_json:
        _print_json(result)
    else:
        _print_compare(result)
    if result["failed"]:
        raise typer.Exit(1)


def _print_compare(result: dict) -> None:
    from rich.table import Table

    console = _console()
    t = Table(title=f"B - A over {result['records_compared']} records (A {result['run_a']}, B {result['run_b']})")
    for col in ("metric", "A", "B", "delta", "95% CI"):
        t.add_column(col)
    for name, m in result["metrics"].items():
        ci = f"[{m['ci95'][0]:+.4f}, {m['ci95'][1]:+.4f}]" if m["ci95"] else "n/a"
        t.add_row(name, _fmt(m["a"]), _fmt(m["b"]), f"{m['delta']:+.4f}", ci)
    console.print(t)
    if result["note"]:
        console.print(result["note"], markup=False, soft_wrap=True)
    if result["flips"]:
        f = Table(title=f"{len(result['flips'])} claims whose verdict flipped")
        for col in ("record", "model", "claim", "A", "B"):
            f.add_column(col)
        for x in result["flips"]:
            f.add_row(x["record_id"], x["model"], x["claim"][:80], x["a"], x["b"])
        console.print(f)
    for g in result["gates"]:
        console.print(("FAIL " if g["failed"] else "ok   ") + f"{g['gate']}: {g['why']}", markup=False, soft_wrap=True)


@app.command()
def agreement(
    run_dirs: list[Path] = typer.Argument(..., help="One panel run, or several runs over the same claims (judge rejudge)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for agreement.json and agreement.html (default: the first run)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Judges against each other (Cohen's kappa, nominal alpha), against gold and humans; self-preference; cost."""
    from judge.metrics.judges import judge_agreement
    from judge.report.html import agreement_page

    try:
        rep = judge_agreement(run_dirs)
    except _run_errors() as e:
        _report_run_error(e)
    target = out or run_dirs[0]
    target.mkdir(parents=True, exist_ok=True)
    (target / "agreement.json").write_text(json.dumps(rep, ensure_ascii=False, indent=1, default=str) + "\n", encoding="utf-8")
    (target / "agreement.html").write_text(agreement_page(rep), encoding="utf-8")
    if as_json:
        _print_json(rep)
        return
    from rich.table import Table

    console = _console()
    t = Table(title="pairwise agreement")
    for col in ("judge a", "judge b", "claims", "kappa", "alpha (nominal)"):
        t.add_column(col)
    for p in rep["pairwise"]:
        t.add_row(p["a"], p["b"], str(p["claims"]), _fmt(p["cohen_kappa"]), _fmt(p["alpha_nominal"]))
    console.print(t)
    j = Table(title="per judge")
    for col in ("judge", "family", "claims", "accuracy vs gold", "calls", "cost $", "latency s"):
        j.add_column(col)
    for name, v in rep["per_judge"].items():
        j.add_row(name, str(v["family"]), str(v["claims"]), _fmt((v["vs_gold"] or {}).get("accuracy")), str(v["calls"]), _fmt(v["cost_usd"]), _fmt(v["mean_latency_s"]))
    console.print(j)
    for p in rep["self_preference"]:
        if p["own_family_answers"]:
            console.print(f"self-preference of {p['judge']} ({p['family']}): {p['self_preference']:+.3f} over {p['own_family_answers']} answers", markup=False)
    console.print(f"written: {target / 'agreement.json'}, {target / 'agreement.html'}", markup=False, soft_wrap=True)


@app.command()
def retrieval(
    bench_dir: Path = typer.Argument(..., help="Benchmark folder: queries.jsonl, qrels/test.tsv, corpus.jsonl|parquet, manifest.json."),
    run_file: Path = typer.Argument(..., help="A retrieval run: TREC (qid Q0 docid rank score tag) or JSON."),
    corpus: Optional[Path] = typer.Option(None, "--corpus", help="The chunk corpus, if not in the folder."),
    qrels: Optional[Path] = typer.Option(None, "--qrels", help="A qrels file other than qrels/test.tsv (3 or 4 columns)."),
    fingerprint: Optional[str] = typer.Option(None, "--fingerprint", help="Expected corpus fingerprint (overrides manifest.json)."),
    allow_mismatch: bool = typer.Option(False, "--allow-fingerprint-mismatch", help="Score even if the corpus is another revision."),
    by: list[str] = typer.Option([], "--by", help="Query fields to stratify by (default: regime tipo registro fonte_origem modo persona)."),
    work_field: Optional[str] = typer.Option(None, "--work-field", help="Corpus field naming each chunk's work, for dup_group tolerance."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Score a retrieval run: hit@k, recall@k, MRR@10, nDCG@10 (ir-measures), stratified; dup_group-tolerant too."""
    from judge.datasets.beir import load_benchmark, load_run
    from judge.metrics.retrieval import evaluate_run, retrieval_notes, retrieval_tables
    from judge.problems import DatasetError

    try:
        bench = load_benchmark(bench_dir, corpus, fingerprint, allow_mismatch, qrels)
        rep = evaluate_run(bench, load_run(run_file), strata=tuple(by) or None, work_field=work_field)
    except DatasetError as e:
        _fail_with_problems(e.problems)
    if as_json:
        _print_json(rep)
        return
    console = _console()
    for t in retrieval_tables(rep, str(bench_dir)):
        console.print(t)
    for n in retrieval_notes(rep):
        console.print(n, markup=False)


@app.command()
def align(
    data: Path = typer.Argument(..., help="FlashRAG rows (JSONL): id, question, golden_answers, metadata."),
    corpus: Path = typer.Argument(..., help="wiki-18 chunks (JSONL): {id, contents} or {id, title, text}."),
    out: Path = typer.Option(..., "--out", help="Where the kept rows, with metadata.gold_doc_ids, are written."),
    report: Optional[Path] = typer.Option(None, "--report", help="Also write a JSON report listing every dropped row with its reason."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Align supporting facts to the wiki-18 chunks that hold them; drop rows with any unaligned hop."""
    from judge.align import align_file
    from judge.problems import DatasetError

    try:
        rep = align_file(data, corpus, out, report)
    except DatasetError as e:
        _fail_with_problems(e.problems)
    if as_json:
        _print_json(rep)
        return
    rate = f"{rep['rate']:.2%}" if rep["rate"] is not None else "n/a"
    _console().print(f"kept {rep['kept']} of {rep['total']} rows ({rate}); dropped {rep['dropped']}: {rep['reasons']}; "
                     f"matched by {rep['match_branches']}; title-suffix fallbacks {rep['suffix_fallbacks']}; wrote {out}", markup=False, soft_wrap=True)


@app.command()
def longcontext(
    data: Path = typer.Argument(..., help="Aligned rows (with metadata.gold_doc_ids)."),
    corpus: Path = typer.Argument(..., help="The wiki-18 chunk corpus the ids point into."),
    num_docs: int = typer.Option(100, "--num-docs", min=1, help="Documents per context (e.g. 50, 100, 500)."),
    seed: int = typer.Option(4, "--seed"),
    out: Path = typer.Option(..., "--out"),
) -> None:
    """Long-context variants: gold chunks among seeded random distractors, Document-numbered."""
    from judge.longcontext import build_file
    from judge.problems import DatasetError

    try:
        n = build_file(data, corpus, out, num_docs, seed)
    except DatasetError as e:
        _fail_with_problems(e.problems)
    _console().print(f"wrote {n} rows of {num_docs} documents to {out}", markup=False)


@app.command("flashrag-eval")
def flashrag_eval(
    data: Path = typer.Argument(..., help="Aligned FlashRAG rows."),
    corpus: Path = typer.Option(..., "--corpus", help="The wiki-18 chunk corpus (for chunk titles)."),
    predictions: Optional[Path] = typer.Option(None, "--predictions", help="JSON {id: answer} or JSONL {id, answer}."),
    retrieval_run: Optional[Path] = typer.Option(None, "--retrieval", help="A retrieval run (TREC or JSON) over the corpus."),
    k: int = typer.Option(5, "--k", min=1),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Answer EM and token F1 against golden_answers; chunk- against title-level gold of a retrieval run."""
    from judge.metrics.qa import flashrag_report
    from judge.problems import DatasetError

    try:
        rep = flashrag_report(data, corpus, predictions, retrieval_run, k)
    except DatasetError as e:
        _fail_with_problems(e.problems)
    _print_json(rep) if as_json else _console().print_json(json.dumps(rep))


def _write_reports_or_warn(run_dir: Path) -> dict | None:
    """Score the run and write its reports; a scoring failure is reported, the run stays as it is."""
    from judge.report import write_reports

    try:
        scores = write_reports(run_dir)
    except Exception as e:  # the run itself is finished and saved: say what failed, keep the exit code
        sys.stderr.write(f"scoring {run_dir} failed: {type(e).__name__}: {e}; the results are intact (retry: judge score {run_dir})\n")
        return None
    return {k: scores.get(k) for k in ("gold_labels", "evidence", "human", "claim_matching", "chunk_attribution")}


@app.command()
def score(
    run_dir: Path = typer.Argument(..., help="A run directory."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Score a run against the gold its data carries; write scores.json, report.md and report.html."""
    from judge.report import write_reports

    try:
        scores = write_reports(run_dir)
    except _run_errors() as e:
        _report_run_error(e)
    if as_json:
        _print_json(scores)
        return
    console = _console()
    console.print((run_dir / "report.md").read_text(encoding="utf-8"), markup=False, soft_wrap=True)
    console.print(f"written: {run_dir / 'scores.json'}, {run_dir / 'report.md'}, {run_dir / 'report.html'}", markup=False, soft_wrap=True)


@app.command("agreement-humans")
def agreement_humans(
    path: Path = typer.Argument(..., help="Ratings: a hebrew-qa file, DialSummEval's human_judgment.jsonl, or FaithBench batches (a file or its folder)."),
    format: Optional[str] = typer.Option(None, "--format", "-f", help="hebrew-qa, dialsummeval or faithbench (sniffed if omitted)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Inter-rater agreement: ordinal Krippendorff's alpha per dimension and pooled, perfect agreement."""
    from judge.datasets.ratings import load_ratings
    from judge.metrics.agreement import agreement
    from judge.problems import DatasetError

    try:
        rep = agreement(load_ratings(path, format))
    except DatasetError as e:
        _fail_with_problems(e.problems)
    if as_json:
        _print_json(rep)
        return
    from rich.table import Table

    t = Table(title=f"{rep['name']}: {rep['items']} items, {rep['annotators']} annotators, scale {rep['scale'][0]}-{rep['scale'][-1]}")
    for col in ("dimension", "alpha (ordinal)", "perfect agreement (units)"):
        t.add_column(col)
    for d in rep["dimensions"]:
        t.add_row(d, _fmt(rep["alpha_by_dimension"][d]), _fmt(rep["perfect_agreement_by_dimension"][d]))
    t.add_row("pooled", _fmt(rep["alpha_pooled"]), _fmt(rep["perfect_agreement_units"]))
    console = _console()
    console.print(t)
    console.print(f"perfect agreement over items (all dimensions): {_fmt(rep['perfect_agreement'])} ({rep['perfect_agreement_items']} of {rep['items']})", markup=False)
    for note in rep["notes"]:
        console.print(f"note: {note}", markup=False, soft_wrap=True)


@app.command()
def rejudge(
    run_dir: Path = typer.Argument(..., help="A finished run directory."),
    judge: list[str] = typer.Option(..., "--judge", help="Judge name (repeatable): a model of the run's config or of --models, or 'deterministic'."),
    models: Optional[Path] = typer.Option(None, "--models", help="A YAML file with more models (e.g. configs/models.yaml)."),
    name: Optional[str] = typer.Option(None, "--name"),
    runs_dir: Path = typer.Option(Path("runs"), "--runs-dir"),
    no_cache: bool = typer.Option(False, "--no-cache"),
    refresh: bool = typer.Option(False, "--refresh"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Judge a run's stored claims and candidates again with other judges, into a new run."""
    from judge.runs.rejudge import rejudge as do_rejudge

    extra = _load_models_or_exit(models) if models else {}
    try:
        store, summary = do_rejudge(run_dir, judge, extra, runs_root=runs_dir, name=name, use_cache=not no_cache, refresh=refresh)
    except _run_errors() + (ValueError, KeyError) as e:
        _report_run_error(e)
    summary["run_dir"] = str(store.path)
    summary["scores"] = _write_reports_or_warn(store.path)
    _print_summary(summary, as_json)


@app.command()
def merge(
    run_dirs: list[Path] = typer.Argument(..., help="Run directories of one config (e.g. its shards)."),
    name: str = typer.Option("merged", "--name"),
    runs_dir: Path = typer.Option(Path("runs"), "--runs-dir"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Merge shards into one run: every record once, in dataset order."""
    from judge.runs.merge import merge as do_merge

    try:
        store, summary = do_merge(run_dirs, runs_root=runs_dir, name=name)
    except _run_errors() as e:
        _report_run_error(e)
    summary["run_dir"] = str(store.path)
    summary["scores"] = _write_reports_or_warn(store.path)
    _print_summary(summary, as_json)


def _print_summary(summary: dict, as_json: bool) -> None:
    if as_json:
        _print_json(summary)
        return
    from rich.table import Table

    from judge.verdicts import VERDICT_LABELS

    t = Table(title=f"{summary['run_dir']}  ({summary['records']} records, {summary['answers']} answers)")
    t.add_column("model under test", overflow="fold")
    for col in ("claims", "S/P/U/C/E", "faithful", "halluc."):
        t.add_column(col, justify="right", no_wrap=True)
    rows = list(summary["by_model"].items()) + [("all", summary["overall"])]
    t.caption = (
        "S supported, P partially supported, U unsupported, C contradicted, E judge error; faithfulness = "
        "(S + 0.5 P) / judged claims; hallucination = (U + C) / judged claims"
    )
    for model, r in rows:
        lb = r["labels"]
        counts = "/".join(str(lb[k]) for k in VERDICT_LABELS)
        t.add_row(model, str(r["claims"]), counts, _fmt(r["faithfulness"]), _fmt(r["hallucination_rate"]))
    console = _console()
    console.print(t)
    u = summary["usage"]
    run = summary.get("run", {})
    cost = f"${u['cost_usd']:.4f}" + (f" (+{u['unknown_cost_calls']} calls of unknown price)" if u["unknown_cost_calls"] else "")
    console.print(
        f"judges: {', '.join(summary['judges'])}; claims triaged: {summary['claims_triaged']}; model calls {u['calls']} "
        f"(errors {u['errors']}), cache hits {u['cache_hits']}, tokens {u['prompt_tokens']} + {u['completion_tokens']}, cost {cost}",
        soft_wrap=True, markup=False,
    )
    for note in summary.get("notes", []):
        console.print(note, soft_wrap=True, markup=False)
    if summary.get("same_family_clashes"):
        console.print("same-family judging (allowed by allow_same_family): " + "; ".join(summary["same_family_clashes"]), soft_wrap=True, markup=False)
    if summary.get("scores") is not None:
        console.print(f"reports: {summary['run_dir']}/report.md, report.html, scores.json", soft_wrap=True, markup=False)
    if run and not run.get("complete", True):
        console.print(f"incomplete: {run['records_finished']}/{run['records_selected']} records ({run.get('stopped_early')}); finish with --resume", soft_wrap=True, markup=False)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
