"""``judge calibrate``: measure a config's judges once on labelled real claims (a dataset whose answers carry
gold claim labels, or a finished run and a person's label sheet from ``judge label``) and write the calibration
file that later runs of the same judge setup adopt (judge.runs.calibration). Controls ride along as a canary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from judge.cli.app import BadInput, JudgesFailed, command
from judge.report import console


@command()
def calibrate(
    config: Path = typer.Argument(..., help="The run config whose judges to calibrate (e.g. grounding/judge.yaml)."),
    out: Path = typer.Option(..., "--out", help="The calibration file to write (name it in the config: calibration: FILE)."),
    dataset: Optional[Path] = typer.Option(None, "--dataset", help="A labelled set to calibrate on (answers with gold_claims), in the config's format (default: the config's dataset; judge/data/calibration/ ships a starter set)."),
    run_dir: Optional[Path] = typer.Option(None, "--run", help="A finished run of this judge setup to calibrate on, with --labels (no model call)."),
    labels: Optional[list[Path]] = typer.Option(None, "--labels", help="Filled label sheets of --run (judge label); better than any shipped set: your own claims."),
    per_label: int = typer.Option(24, "--per-label", min=1, max=10_000, help="Controls of each label to mix in as a canary (their supported ones give a noise floor where no grounded claim is labelled)."),
    if_stale: bool = typer.Option(False, "--if-stale", help="Do nothing when --out already calibrates this judge setup (judges, settings, judge prompt)."),
    runs_dir: Path = typer.Option(Path("runs"), "--runs-dir", help="Where the calibration run's directory goes."),
    progress: bool = typer.Option(True, "--progress/--no-progress"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Measure the judges on labelled real claims and write --out (exit 3 when there is nothing to measure)."""
    from judge.files import check_output, replace_with
    from judge.prompts import load_prompt
    from judge.runs.calibration import calibration_of, judge_setup, lines, read_calibration, setup_key
    from judge.config import load_run_config
    from judge.runs.run import Run
    from judge.runs.runner import execute

    cfg = load_run_config(config)
    key = setup_key(judge_setup(cfg, load_prompt("judge").hash))
    if labels and run_dir is None:
        raise BadInput("--labels: name the run they label with --run RUN")
    if run_dir is not None and dataset is not None:
        raise BadInput("--run and --dataset: give one (a run is calibrated on its labels, a dataset on its gold)")
    old = read_calibration(out) if out.exists() else None
    if if_stale and old is not None and old.key == key:
        line = f"{out} is current (judge setup {key} unchanged since {old.made_utc}): nothing to do"
        console.print_json({"calibration": str(out), "current": True, "key": key}) if as_json else console.say(line)
        return
    check_output(out, (), "--out")
    if run_dir is not None:
        from judge.labels.load import load_labels

        run = Run.open(run_dir)
        run_key = setup_key(judge_setup(run.config, (run.manifest.get("prompts") or {}).get("judge")))
        if run_key != key:
            raise BadInput(f"--run {run_dir}: judged with another judge setup ({run_key}) than {config} ({key}): calibrate on a run of this config")
        if not labels:
            raise BadInput(f"--run {run_dir}: give its filled label sheets with --labels (judge label {run_dir})")
        store_path, sheets = run.path, load_labels(run, list(labels))
    else:
        # controls ride along as a canary, up to half the claims (their own calls: real claims' verdicts are the same)
        update = {"calibration": None, "require": None,
                  "controls": cfg.controls.model_copy(update={"enabled": True, "gate": True, "per_label": per_label, "max_share": 0.5})}
        if dataset is not None:
            if not dataset.is_file():
                raise BadInput(f"--dataset {dataset}: not a file")
            update["dataset"] = cfg.dataset.model_copy(update={"path": str(dataset.resolve())})
        cfg = cfg.model_copy(update=update)
        out.parent.mkdir(parents=True, exist_ok=True)
        bar = console.Progress(progress and not as_json)
        try:
            store, _ = execute(cfg, runs_root=runs_dir, name=f"{cfg.name}-calibration", on_start=bar.start, on_result=bar.advance if bar.enabled else None)
        finally:
            bar.stop()
        from judge.cli.runs import _reports

        _, failed = _reports(store.path)
        if failed:  # the calibration reads the run, not its scores: said, and it goes on
            import sys

            from judge.text.control import defuse

            sys.stderr.write(defuse(failed) + "\n")
        store_path, sheets = store.path, None
    try:
        cal = calibration_of(Run.open(store_path), sheets)
    except Exception as e:  # nothing labelled and no floor measured: nothing is pinned
        raise JudgesFailed(f"calibration failed, {out} not written: {e}") from None
    out.parent.mkdir(parents=True, exist_ok=True)
    replace_with(out, [json.dumps(cal.model_dump(mode="json"), ensure_ascii=False, indent=1) + "\n"])
    if as_json:
        console.print_json({"calibration": str(out), "current": False, "key": cal.key, "floors": cal.floors, "run_dir": str(store_path),
                            "origin": cal.origin, "judges": {n: j.model_dump(mode="json") for n, j in cal.judges.items()}})
        return
    for line in lines(cal):
        console.say(line)
    if cal.health is not None:
        console.say(cal.health.canary_line())
    floors = ", ".join(f"{j} {f:.3f}" for j, f in cal.floors.items() if f is not None) or "not measured"
    console.say(f"wrote {out} (judge setup {cal.key}; noise floors {floors}); runs of this setup adopt it with calibration: {out} in their config")
