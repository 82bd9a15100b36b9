"""Commands on runs: run, rejudge, merge, score, compare, agreement."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from judge.cli.app import BadInput, GateFailed, JudgesFailed, command
from judge.cli.models import load_models
from judge.report import console, terminal
from judge.text.control import defuse


MAX_SHARDS = 1_000_000  # more shards than that is no plan; a 21-digit count was written to run.json, then refused there


def _shard(spec: Optional[str]) -> Optional[tuple[int, int]]:
    if spec is None:
        return None
    try:
        i, n = (int(x) for x in spec.split("/"))
        if not 0 <= i < n <= MAX_SHARDS:
            raise ValueError
    except ValueError:
        raise BadInput(f"--shard {spec!r}: expected i/n with 0 <= i < n <= {MAX_SHARDS:,}, e.g. 0/2 and 1/2") from None
    return i, n


def _gates(specs: list[str]) -> list:
    """The gates given, or the default gates (judge.scoring.compare.DEFAULT_GATES); ``--gate none``: no gate."""
    from judge.scoring.compare import parse_gates

    try:
        return parse_gates(specs)
    except ValueError as e:
        raise BadInput(str(e)) from None


def _baseline(value: Optional[str], baselines_dir: Optional[Path]) -> Optional[Path]:
    """A run directory, or the name of a pinned baseline (judge baseline save)."""
    from judge.runs.baseline import resolve_baseline

    return None if value is None else resolve_baseline(value, baselines_dir)


def _thresholds(cfg, max_hallucination: Optional[float], min_faithfulness: Optional[float]):
    """The config's absolute thresholds, with the command line's over them."""
    t = cfg.thresholds
    update = {k: v for k, v in (("max_hallucination_rate", max_hallucination), ("min_faithfulness", min_faithfulness)) if v is not None}
    for flag, v in (("--max-hallucination", max_hallucination), ("--min-faithfulness", min_faithfulness)):
        if v is not None and not 0 <= v <= 1:
            raise BadInput(f"{flag} {v}: expected a rate from 0 to 1")
    return t.model_copy(update=update) if update else t


def scoring_failed(run_dir: Path, e: Exception) -> str:
    """The one line of a scoring failure (exit 3: the run's results are there, its scores and reports are not)."""
    what = " ".join(str(e).split())[:300]
    return f"scoring {run_dir} failed: {type(e).__name__}{': ' + what if what else ''}; the results are intact, scores.json and the reports are not written (retry: judge score {run_dir})"


def scored(run_dir: Path, labels: list[Path] | None = None) -> dict:
    """Score the run and write its reports. Bad input (a run directory, a sheet, a file: the command's error
    boundary names it, exit 2) is raised as it is; any other failure of the scoring is one line, exit 3."""
    from judge.cli.app import _bad_input_errors
    from judge.problems import DatasetError
    from judge.report import write_reports

    try:
        return write_reports(run_dir, labels)
    except (*_bad_input_errors(), DatasetError, OSError):
        raise
    except Exception as e:
        raise JudgesFailed(scoring_failed(run_dir, e)) from None


def _reports(run_dir: Path) -> tuple[dict | None, str | None]:
    """Score the finished run and write its reports: (the scores, None), or (None, the failure's line); the run
    stays as it is, and the command exits 3 (_check_run)."""
    from judge.report import write_reports

    try:
        return write_reports(run_dir), None
    except Exception as e:  # the run itself is finished and saved: say what failed, exit 3
        return None, scoring_failed(run_dir, e)


def _finished(store, summary) -> dict:
    """The summary printed (summary.json's, judge.runs.summary.Summary, with the scores and what the terminal shows)."""
    from judge.llm.cost import unpriced
    from judge.scoring import gold_scores

    config, summary = store.config(), summary.dump()  # models called with no price known: said once, at the end (the terminal)
    summary["unpriced_models"] = unpriced(config.model(n).model for n in config.called_model_names() if n in config.models)
    summary["run_dir"] = str(store.path)
    scores, failed = _reports(store.path)
    if failed:
        summary["scoring_failed"] = failed  # exit 3 (judge.runs.decision)
    summary["scores"] = gold_scores(scores) if scores is not None else None
    summary["not_grounded"] = scores.get("not_grounded") if scores is not None else None  # the terminal shows it first
    summary["model_comparison"] = scores.get("model_comparison") if scores is not None else None  # before it, with several models
    return summary


def _check_run(summary, printed: dict) -> None:
    """Exit 3 when the finished run cannot pass (judge.runs.decision: its judges, its outcome, its scoring)."""
    from judge.runs.decision import decide

    decide(summary, scoring_failed=printed.get("scoring_failed")).enforce()


def _write_md(md_out: Path | None, result: dict) -> None:
    if md_out is None:
        return
    from judge.files import replace_with
    from judge.report.markdown import compare as compare_md

    try:
        replace_with(md_out, [compare_md(result)], follow_streams=True)
    except OSError as e:
        raise BadInput(f"--md {md_out}: cannot write it ({e.strerror or type(e).__name__})") from None


CONFIRM_HELP = ("Re-ask the judges this many times about each claim whose verdict changed against the baseline, and count it only when "
                "the re-asks tell it from the judge's noise (0: the verdicts as they are).")


def _with_engine(cfg, engine: str | None, ray_address: str | None):
    if engine not in (None, "local", "ray"):
        raise BadInput(f"--engine {engine}: expected local or ray")
    if ray_address and (engine or cfg.engine) != "ray":
        raise BadInput("--ray-address needs --engine ray")
    update = {"engine": engine} if engine else {}
    if ray_address:
        update["ray"] = cfg.ray.model_copy(update={"address": ray_address})
    return cfg.model_copy(update=update) if update else cfg


@command()
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
    baseline: Optional[str] = typer.Option(None, "--baseline", help="After the run, compare it with this run directory or pinned baseline (judge baseline save)."),
    gate: list[str] = typer.Option([], "--gate", help="With --baseline: new_LABEL:N or METRIC:MAX_DROP (repeatable; default "
                                   "new_not_grounded:0, hallucination_rate:0, faithfulness:0; 'none': no gate); exit 1 when one fails."),
    allow_missing: bool = typer.Option(False, "--allow-missing", help="A gate whose metric is missing in either run passes (default: it fails)."),
    baselines_dir: Optional[Path] = typer.Option(None, "--baselines-dir", help="Where pinned baselines are (default $JUDGE_BASELINES_DIR or ./baselines)."),
    confirm: int = typer.Option(5, "--confirm", min=0, max=50, help=CONFIRM_HELP + " Also the not-grounded claims of a run whose threshold "
                                "(--max-hallucination, --min-faithfulness) broke, before it fails."),
    md_out: Optional[Path] = typer.Option(None, "--md", help="With --baseline: also write the comparison as Markdown to this file (a PR comment), verdict first."),
    max_hallucination: Optional[float] = typer.Option(None, "--max-hallucination", help="Exit 1 when the hallucination rate (overall or of any model "
                                                      "under test) is above this (overrides the config's thresholds)."),
    min_faithfulness: Optional[float] = typer.Option(None, "--min-faithfulness", help="Exit 1 when faithfulness (overall or of any model under test) is below this."),
    engine: Optional[str] = typer.Option(None, "--engine", help="local or ray (default: the config's engine, local)."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="With --engine ray: the cluster (default: a local Ray)."),
) -> None:
    """The main job: answer (or load answers), decompose, search, adjudicate; write runs/<time>-<name>/."""
    from judge.config import load_run_config
    from judge.runs.runner import execute

    shard_spec = _shard(shard)
    if gate and baseline is None:
        raise BadInput("--gate needs --baseline RUN_DIR (or the name of a pinned baseline)")
    if allow_missing and not gate:
        raise BadInput("--allow-missing needs --gate")
    gates = _gates(gate) if baseline is not None else []
    if md_out is not None and baseline is None:
        raise BadInput("--md needs --baseline RUN_DIR (or the name of a pinned baseline)")
    baseline_dir = _baseline(baseline, baselines_dir)  # a baseline that is not there: refused before any call
    if md_out is not None:
        from judge.files import check_output

        check_output(md_out, (baseline_dir,), "--md")
    cfg = load_run_config(config)
    if limit:
        cfg = cfg.model_copy(update={"limit": limit})
    cfg = _with_engine(cfg, engine, ray_address)
    thresholds = _thresholds(cfg, max_hallucination, min_faithfulness)
    bar = console.Progress(progress and not as_json)
    try:
        store, summary = execute(
            cfg, runs_root=runs_dir, name=name or (cfg.name if resume is None else None), resume=resume, shard=shard_spec,
            use_cache=not no_cache, refresh=refresh, on_start=bar.start, on_result=bar.advance if bar.enabled else None,  # none: the Ray driver never parses a result
        )
    finally:
        bar.stop()
    printed = _finished(store, summary)
    from judge.scoring.compare import compare as compare_runs
    from judge.scoring.confirm import record_reasks, run_asker

    # a run stopped early (max_cost_usd reached) is no finished run to gate: exit 3 saying so, never compared (with no
    # record finished the compare said "no finished record in common", exit 2; issue 50.4)
    incomplete = summary.run is not None and not summary.run.complete
    result = (compare_runs(baseline_dir, store.path, gates, allow_missing=allow_missing, confirm=confirm, use_cache=not no_cache,
                           asker=run_asker(cfg, config, store)) if baseline_dir is not None and not incomplete else None)
    if result is not None:
        _write_md(md_out, result)
    from judge.runs.decision import decide

    first, settled = decide(summary, thresholds=thresholds), None
    if first.broken and confirm and not first.failures:  # a noise flag on ten questions must not break a bound: re-ask the flagged claims
        from judge.runs.run import Run
        from judge.scoring.confirm import settled_summary

        now, claims, how = settled_summary(Run.open(store.path), confirm, use_cache=not no_cache, asker=run_asker(cfg, config, store))
        settled = {**how, "rates": now, "claims": [c.model_dump() for c in claims]}
    decision = decide(summary, thresholds=thresholds, settled=settled and settled["rates"], gates_failed=bool(result and result["failed"]),
                      scoring_failed=printed.get("scoring_failed"))
    if confirm:
        record_reasks(store, printed)
    if thresholds.any:
        printed["thresholds"] = {**thresholds.model_dump(), "failed": decision.broken, "confirmed": settled}
    if as_json:
        console.print_json(printed if result is None else {"summary": printed, "compare": result})
    else:
        terminal.summary(printed)
        if result is not None:
            terminal.compare(result)
        for line in decision.broken:
            console.say(f"FAIL {line}")
    decision.enforce()


@command(also=(ValueError, KeyError))
def rejudge(
    run_dir: Path = typer.Argument(..., help="A finished run directory."),
    judge: list[str] = typer.Option(..., "--judge", help="Judge name (repeatable): a model of the run's config or of --models, or 'deterministic'."),
    models: Optional[Path] = typer.Option(None, "--models", help="A YAML file with the judges' models (default: the packaged configs/models.yaml; never the run's own config)."),
    name: Optional[str] = typer.Option(None, "--name"),
    runs_dir: Path = typer.Option(Path("runs"), "--runs-dir"),
    no_cache: bool = typer.Option(False, "--no-cache"),
    refresh: bool = typer.Option(False, "--refresh"),
    as_json: bool = typer.Option(False, "--json"),
    controls_per_label: Optional[int] = typer.Option(None, "--controls-per-label", min=1, help="Controls and their gate on, asking for this "
                                                     "many per label: the run's controls are kept and more are made from its claims."),
) -> None:
    """Judge a run's stored claims and candidates again with other judges, into a new run."""
    from judge.runs.rejudge import rejudge as do_rejudge

    from judge.runs.locks import reading

    extra = load_models(models) if models else None  # None: the packaged models file (never the run's config.yaml)
    with reading(run_dir):  # refused while a run is being written into it
        store, summary = do_rejudge(run_dir, judge, extra, runs_root=runs_dir, name=name, use_cache=not no_cache, refresh=refresh,
                                    controls_per_label=controls_per_label)
    printed = _finished(store, summary)
    console.print_json(printed) if as_json else terminal.summary(printed)
    _check_run(summary, printed)


@command()
def merge(
    run_dirs: list[Path] = typer.Argument(..., help="Run directories of one config (e.g. its shards)."),
    name: str = typer.Option("merged", "--name"),
    runs_dir: Path = typer.Option(Path("runs"), "--runs-dir"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Merge shards into one run: every record once, in dataset order."""
    from judge.runs.merge import merge as do_merge

    from judge.runs.locks import reading

    with reading(*run_dirs):  # no shard is being written (a --resume of it) while it is merged
        store, summary = do_merge(run_dirs, runs_root=runs_dir, name=name)
    printed = _finished(store, summary)
    console.print_json(printed) if as_json else terminal.summary(printed)
    _check_run(summary, printed)


@command()
def score(
    run_dir: Path = typer.Argument(..., help="A run directory."),
    as_json: bool = typer.Option(False, "--json"),
    labels: list[Path] = typer.Option([], "--labels", help="A filled labelling sheet (judge label; repeatable: one per level): the rates "
                                      "corrected by its human labels (default: the run's own sheets, once labelled)."),
) -> None:
    """Score a run against the gold its data carries; write scores.json, report.md and report.html."""
    from judge.runs.locks import reading

    with reading(run_dir):  # refused while a run writes into it
        from judge.runs.selection import check_whole
        from judge.runs.store import RunStore

        check_whole(RunStore.open(run_dir))  # a run that says complete is held to its own files (issue 50.12)
        scores = scored(run_dir, labels or None)
    console.print_json(scores) if as_json else terminal.scores(scores, run_dir)
    for warning in (scores.get("corrected") or {}).get("warnings", []):  # never silent, whatever the format
        sys.stderr.write(defuse(f"warning: {warning}") + "\n")


@command()
def compare(
    run_a: str = typer.Argument(..., help="The baseline: a run directory, or the name of a pinned baseline (judge baseline save)."),
    run_b: str = typer.Argument(..., help="The run to check against it (may be the same run, with --prompt-a/--prompt-b)."),
    gate: list[str] = typer.Option([], "--gate", help="Repeatable. new_LABEL:N (more than N claims newly LABEL fails; LABEL not_grounded, "
                                   "hallucinated, contradicted, unsupported, partially_supported) or METRIC:MAX_DROP (faithfulness, "
                                   "hallucination_rate, judge_error_rate, accuracy). Default: new_not_grounded:0, hallucination_rate:0, "
                                   "faithfulness:0. 'none': report only."),
    allow_missing: bool = typer.Option(False, "--allow-missing", help="A gate whose metric is missing in either run passes (default: it fails)."),
    prompt_a: Optional[str] = typer.Option(None, "--prompt-a", help="Only run A's answers of this prompt variant (generate.prompts), paired by model."),
    prompt_b: Optional[str] = typer.Option(None, "--prompt-b", help="Only run B's answers of this prompt variant, paired by model."),
    baselines_dir: Optional[Path] = typer.Option(None, "--baselines-dir", help="Where pinned baselines are (default $JUDGE_BASELINES_DIR or ./baselines)."),
    as_json: bool = typer.Option(False, "--json"),
    md_out: Optional[Path] = typer.Option(None, "--md", help="Also write the comparison as Markdown to this file (e.g. for a PR comment)."),
    confirm: int = typer.Option(0, "--confirm", min=0, max=50, help=CONFIRM_HELP + " Calls run B's judges (default 0 here; judge run "
                                "--baseline confirms 5 times)."),
    model_a: Optional[str] = typer.Option(None, "--model-a", help="Only run A's answers of this model under test (MODEL or MODEL+VARIANT)."),
    model_b: Optional[str] = typer.Option(None, "--model-b", help="Only run B's answers of this model under test: two models compared on the same records."),
    models: Optional[Path] = typer.Option(None, "--models", help="With --confirm: your own run config (its judges, dataset, calibration and cache re-ask "
                                          "the changed claims); a plain models file, or none, re-asks nothing and says why. Never run B's config.yaml."),
    max_cost_usd: Optional[float] = typer.Option(None, "--max-cost-usd", min=0, help="With --confirm: stop re-asking once this much is spent."),
) -> None:
    """Metric deltas (B - A) with a sign test over records, claims newly not grounded, fixed and flipped; exit 1 when a gate fails."""
    if allow_missing and not gate:
        raise BadInput("--allow-missing needs --gate")
    gates = _gates(gate)
    path_a, path_b = _baseline(run_a, baselines_dir), _baseline(run_b, baselines_dir)
    if md_out is not None:  # never an input, a file of a run directory, or a link: refused before any work
        from judge.files import check_output

        check_output(md_out, (path_a, path_b), "--md")
    from judge.runs.locks import reading

    if (model_a is None) != (model_b is None):
        raise BadInput("--model-a and --model-b go together: the two models under test to compare")
    if model_a is not None and (prompt_a or prompt_b):
        raise BadInput("--model-a/--model-b compare two models; --prompt-a/--prompt-b two prompt variants: give one pair")
    asker = None
    if confirm:  # the re-asking judges: the user's own models file, read before anything else is
        from judge.scoring.confirm import default_asker, user_asker

        asker = user_asker(models, max_cost_usd, load_models) if models else default_asker(max_cost_usd)
    with reading(path_a, path_b):  # neither run is being written while it is read
        if model_a is not None:
            from judge.scoring.models import compare_models

            result = compare_models(path_a, path_b, model_a, model_b)
        else:
            from judge.scoring.compare import compare as compare_runs

            result = compare_runs(path_a, path_b, gates, allow_missing=allow_missing, prompt_a=prompt_a, prompt_b=prompt_b, confirm=confirm,
                                  asker=asker)
    if model_a is not None:
        console.print_json(result) if as_json else terminal.model_pairs(result)
        if md_out is not None:
            from judge.files import replace_with
            from judge.report.markdown import model_pairs_md

            replace_with(md_out, [model_pairs_md(result)], follow_streams=True)
        return
    _write_md(md_out, result)
    console.print_json(result) if as_json else terminal.compare(result)
    if result["failed"]:
        raise GateFailed()


@command()
def baseline(
    action: str = typer.Argument(..., help="save (pin RUN_DIR as --name) or list (the pinned baselines)."),
    run_dir: Optional[Path] = typer.Argument(None, help="With save: the finished run to pin."),
    name: Optional[str] = typer.Option(None, "--name", help="With save: the baseline's name (e.g. main); --baseline NAME resolves it."),
    baselines_dir: Optional[Path] = typer.Option(None, "--baselines-dir", help="Where baselines are kept (default $JUDGE_BASELINES_DIR or ./baselines)."),
    allow_failed: bool = typer.Option(False, "--allow-failed", help="With save: pin a run that cannot pass (its judges failed or were unverified)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Pin a finished run as a named baseline (a folder to commit or cache in CI), or list the pinned ones."""
    from judge.runs.baseline import list_baselines, marked, marked_line, save_baseline

    if action == "save":
        if run_dir is None or not name:
            raise BadInput("judge baseline save RUN_DIR --name NAME: give the run directory and the baseline's name")
        path = save_baseline(run_dir, name, baselines_dir, allow_failed=allow_failed)
        console.print_json({"baseline": name, "path": str(path), **marked(path)}) if as_json else console.say(
            f"pinned {run_dir} as baseline {name!r} in {path}; use it with --baseline {name}" + marked_line(path))
    elif action == "list":
        if run_dir is not None or name:
            raise BadInput("judge baseline list takes no run directory and no --name")
        found = list_baselines(baselines_dir)
        broken = [f"{b['name']}: {b['problem']}" for b in found if b.get("problem")]  # exit 2 after the list: a marker to fix
        if as_json:
            console.print_json(found)
            if broken:
                raise BadInput("\n".join(broken))
            return
        if not found:
            from judge.runs.baseline import baselines_dir as where

            console.say(f"no baseline pinned in {where(baselines_dir)} (judge baseline save RUN_DIR --name NAME)")
        for b in found:
            if b.get("problem"):
                continue
            overall = b.get("overall") if isinstance(b.get("overall"), dict) else {}  # an edited marker: shown, never a traceback
            console.say(f"{b['name']}: {b.get('records')} records, faithfulness {overall.get('faithfulness')}, hallucination rate "
                         f"{overall.get('hallucination_rate')}; from {b.get('source')} ({b.get('saved_utc')})")
        if broken:
            raise BadInput("\n".join(broken))
    else:
        raise BadInput(f"judge baseline {action}: expected save or list")


@command(also=(FileExistsError,))
def agreement(
    run_dirs: list[Path] = typer.Argument(..., help="One panel run, or several runs over the same claims (judge rejudge)."),
    out: Optional[Path] = typer.Option(None, "--out", help="The file to write: .json for JSON, else the HTML page; never overwritten "
                                       "(default: a new agreement-<runs>.html in the first run)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Judges against each other (kappa, alpha), gold and humans; self-preference; cost; the claims they disagree on."""
    from judge.report import agreement_path, write_agreement
    from judge.runs.run import Run
    from judge.scoring.agreement import judge_agreement

    if out is not None:
        from judge.files import check_output, is_stream

        if not is_stream(out) and (out.exists() or out.is_symlink()):
            check_output(out, (), "--out")  # a block device, a socket, a folder: said as such
            raise BadInput(f"--out {out}: the file exists; judge agreement never overwrites (choose another name)")
        check_output(out, (), "--out")  # a new file (a run's own names and links refused); O_EXCL when written
    from judge.runs.locks import reading

    with reading(*run_dirs):
        rep = judge_agreement([Run.open(d) for d in run_dirs])
    written = write_agreement(rep, out or agreement_path(run_dirs))
    console.print_json(rep) if as_json else terminal.agreement(rep, [written])


@command(also=(FileExistsError, OSError))
def init(directory: Path = typer.Argument(Path("."), help="Folder of the new project (created if needed).")) -> None:
    """Write a starter project: a config with the deterministic judge, a three-record example in the plain
    JSONL format and the models file. Then: judge run DIR/judge.yaml"""
    from judge.starter import CONFIG_NAME, write_starter

    for path in write_starter(directory):
        console.say(f"wrote {path}")
    console.say(f"next: judge run {Path(directory) / CONFIG_NAME}")
