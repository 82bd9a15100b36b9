"""Commands on datasets and benchmarks: validate, search-eval, agreement-humans, retrieval, align,
longcontext, flashrag-eval."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from judge.cli.app import EXIT_BAD_INPUT, command
from judge.report import console, terminal_data


@command(also=(ValueError,))  # --write over the input
def validate(
    path: Path = typer.Argument(..., help="Dataset file to check."),
    format: Optional[str] = typer.Option(None, "--format", "-f", help="hebrew-qa, answers, wice or squad (sniffed if omitted)."),
    records: Optional[Path] = typer.Option(None, "--records", help="For an answers file: the records its support spans point into."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    repair: bool = typer.Option(False, "--repair", help="Propose corrected offsets for spans that do not match."),
    write: Optional[Path] = typer.Option(None, "--write", help="With --repair: write a repaired copy here (never over the input)."),
    run: Optional[Path] = typer.Option(None, "--run", help="For a labelling sheet (judge label): the run its items must belong to "
                                       "(default: the run directory it sits in)."),
) -> None:
    """Re-verify every span and print the dataset's key numbers and annotator agreement; or check a filled
    labelling sheet (labels in the vocabulary, each item once, items of its run).

    Exit code 2 when anything is wrong, with one line per problem naming the file, record and field."""
    from judge.labels.sheet import is_sheet
    from judge.validate import validate_and_repair

    if is_sheet(path):  # a labelling sheet (judge label), filled in an editor or exported from report.html
        from judge.labels.load import check_sheet

        problems, rep = check_sheet(path, run)
        if as_json:
            console.print_json(rep)
        else:
            console.say(f"{path}: labelling sheet of run {rep['run_id']}: {rep['items']} items, {rep['labelled']} labelled "
                        f"({', '.join(f'{k} {v}' for k, v in rep['labels'].items())})")
            console.problems(problems)
        if problems:
            raise typer.Exit(EXIT_BAD_INPUT)
        return
    if run is not None:
        raise typer.BadParameter("--run is for a labelling sheet (judge label); this file is not one")

    problems, rep = validate_and_repair(str(path), format, str(records) if records else None, repair, write)
    console.print_json(rep) if as_json else terminal_data.validation(rep)
    if rep["errors"]:
        if not as_json:
            console.problems(problems)
        raise typer.Exit(EXIT_BAD_INPUT)


@command("search-eval")
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

    loaded = load_checked(path, format)
    if loaded.problems:
        raise DatasetError(loaded.problems)
    rep = {**evaluate(loaded.items, loaded.format, k), "file": str(path)}
    console.print_json(rep) if as_json else terminal_data.search_eval(rep, path, k)


@command("agreement-humans")
def agreement_humans(
    path: Path = typer.Argument(..., help="Ratings: a hebrew-qa file, DialSummEval's human_judgment.jsonl, or FaithBench batches (a file or its folder)."),
    format: Optional[str] = typer.Option(None, "--format", "-f", help="hebrew-qa, dialsummeval or faithbench (sniffed if omitted)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Inter-rater agreement: ordinal Krippendorff's alpha per dimension and pooled, perfect agreement."""
    from judge.datasets.ratings import load_ratings
    from judge.metrics.agreement import agreement

    rep = agreement(load_ratings(path, format))
    console.print_json(rep) if as_json else terminal_data.rater_agreement(rep)


@command()
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
    from judge.metrics.retrieval import evaluate_run

    bench = load_benchmark(bench_dir, corpus, fingerprint, allow_mismatch, qrels)
    rep = evaluate_run(bench, load_run(run_file), strata=tuple(by) or None, work_field=work_field)
    console.print_json(rep) if as_json else terminal_data.retrieval(rep, bench_dir)


@command()
def align(
    data: Path = typer.Argument(..., help="FlashRAG rows (JSONL): id, question, golden_answers, metadata."),
    corpus: Path = typer.Argument(..., help="wiki-18 chunks (JSONL): {id, contents} or {id, title, text}."),
    out: Path = typer.Option(..., "--out", help="Where the kept rows, with metadata.gold_doc_ids, are written."),
    report: Optional[Path] = typer.Option(None, "--report", help="Also write a JSON report listing every dropped row with its reason."),
    engine: str = typer.Option("local", "--engine", help="local, or ray: Ray Data on a local Ray, the title index split over --workers shards."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Shards of the title index with --engine ray (default: the CPUs Ray sees)."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="With --engine ray: the cluster (default: a local Ray). Every node must reach the corpus at the same path."),
    split_dir: Optional[Path] = typer.Option(None, "--split-dir", help="With --engine ray: where the corpus is split by shard, once (default: .judge-split beside the corpus; on storage every node reaches)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Align supporting facts to the wiki-18 chunks that hold them; drop rows with any unaligned hop."""
    from judge.align_file import align_file

    if engine not in ("local", "ray"):
        raise typer.BadParameter(f"--engine must be local or ray, not {engine!r}")
    if (ray_address or split_dir) and engine != "ray":
        raise typer.BadParameter("--ray-address and --split-dir need --engine ray")
    rep = align_file(data, corpus, out, report, engine=engine, workers=workers, address=ray_address, split_dir=split_dir)
    console.print_json(rep) if as_json else terminal_data.aligned(rep)


@command()
def longcontext(
    data: Path = typer.Argument(..., help="Aligned rows (with metadata.gold_doc_ids)."),
    corpus: Path = typer.Argument(..., help="The wiki-18 chunk corpus the ids point into."),
    num_docs: int = typer.Option(100, "--num-docs", min=1, help="Documents per context (e.g. 50, 100, 500)."),
    seed: int = typer.Option(4, "--seed"),
    out: Path = typer.Option(..., "--out"),
) -> None:
    """Long-context variants: gold chunks among seeded random distractors, Document-numbered."""
    from judge.longcontext import build_file

    n = build_file(data, corpus, out, num_docs, seed)
    console.say(f"wrote {n} rows of {num_docs} documents to {out}")


@command("flashrag-eval")
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

    rep = flashrag_report(data, corpus, predictions, retrieval_run, k)
    console.print_json(rep) if as_json else console.pretty_json(rep)
