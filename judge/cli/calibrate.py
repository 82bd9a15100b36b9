"""``judge calibrate``: verify a config's judges once, on a set large enough to carry the controls the gate
needs, and write the calibration file that later runs of the same judge setup adopt (judge.runs.calibration)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from judge.cli.app import BadInput, JudgesFailed, command
from judge.report import console


@command()
def calibrate(
    config: Path = typer.Argument(..., help="The run config whose judges to verify (e.g. grounding/judge.yaml)."),
    out: Path = typer.Option(..., "--out", help="The calibration file to write (name it in the config: calibration: FILE)."),
    dataset: Optional[Path] = typer.Option(None, "--dataset", help="A larger set to calibrate on, in the config's format (default: the config's dataset)."),
    per_label: int = typer.Option(24, "--per-label", min=1, max=10_000, help="Controls of each label to mix in (the gate's evidence)."),
    if_stale: bool = typer.Option(False, "--if-stale", help="Do nothing when --out already calibrates this judge setup (judges, settings, judge prompt)."),
    runs_dir: Path = typer.Option(Path("runs"), "--runs-dir", help="Where the calibration run's directory goes."),
    progress: bool = typer.Option(True, "--progress/--no-progress"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Verify the judges on a calibration run (exit 3 when they fail or lack evidence) and write --out."""
    from judge.files import check_output, replace_with
    from judge.prompts import load_prompt
    from judge.runs.calibration import calibration_of, judge_setup, read_calibration, setup_key
    from judge.runs.config import load_run_config
    from judge.runs.run import Run
    from judge.runs.runner import execute

    cfg = load_run_config(config)
    key = setup_key(judge_setup(cfg, load_prompt("judge").hash))
    old = read_calibration(out) if out.exists() else None
    if if_stale and old is not None and old.key == key:
        line = f"{out} is current (judge setup {key} unchanged since {old.made_utc}): nothing to do"
        console.print_json({"calibration": str(out), "current": True, "key": key}) if as_json else console.say(line)
        return
    check_output(out, (), "--out")
    out.parent.mkdir(parents=True, exist_ok=True)
    # a calibration is the run that carries controls: as many as the gate asks, up to half the claims judged
    update = {"calibration": None, "controls": cfg.controls.model_copy(update={"enabled": True, "gate": True, "per_label": per_label,
                                                                               "max_share": 0.5})}
    if dataset is not None:
        if not dataset.is_file():
            raise BadInput(f"--dataset {dataset}: not a file")
        update["dataset"] = cfg.dataset.model_copy(update={"path": str(dataset.resolve())})
    cfg = cfg.model_copy(update=update)
    bar = console.Progress(progress and not as_json)
    try:
        store, _ = execute(cfg, runs_root=runs_dir, name=f"{cfg.name}-calibration", on_start=bar.start, on_result=bar.advance if bar.enabled else None)
    finally:
        bar.stop()
    from judge.cli.runs import _reports

    _reports(store.path)
    try:
        cal = calibration_of(Run.open(store.path))
    except Exception as e:  # the judges did not pass: nothing is pinned
        raise JudgesFailed(f"calibration failed, {out} not written: {e}") from None
    replace_with(out, [json.dumps(cal.model_dump(mode="json"), ensure_ascii=False, indent=1) + "\n"])
    if as_json:
        console.print_json({"calibration": str(out), "current": False, "key": cal.key, "floors": cal.floors, "run_dir": str(store.path)})
        return
    console.say(cal.health.headline())
    for line in cal.health.lines():
        console.say(f"  {line}")
    floors = ", ".join(f"{j} {f:.3f}" for j, f in cal.floors.items() if f is not None) or "not measured"
    console.say(f"wrote {out} (judge setup {cal.key}; noise floors {floors}); runs of this setup adopt it with calibration: {out} in their config")
