"""``judge label``: write (or extend) a run's labelling sheet, for human labels that correct its rates."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Optional

import typer

from judge.cli.app import BadInput, JudgesFailed, command
from judge.report import console


@command(also=(ValueError,))
def label(
    run_dir: Path = typer.Argument(..., help="A finished run directory."),
    n: Optional[int] = typer.Option(None, "--n", min=1, help="Items to sample for a new sheet (e.g. 50)."),
    more: Optional[int] = typer.Option(None, "--more", min=1, help="Extend the existing sheet by this many items (its labels are kept)."),
    level: str = typer.Option("claim", "--level", help="claim (one label per claim, four labels) or answer (grounded or not)."),
    seed: int = typer.Option(0, "--seed", min=0, help="The draw's seed (the same seed draws the same items)."),
    from_gold: bool = typer.Option(False, "--from-gold", help="Fill the labels from the dataset's gold claim labels (they count as human labels)."),
    out: Optional[Path] = typer.Option(None, "--out", help="The sheet's path (default: labels.jsonl, or labels-answers.jsonl, in the run directory)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """A seeded random sample of the run's claims (stratified by the panel's verdict) as a labelling sheet: label
    it in report.html (labelling mode) or any editor, then: judge score RUN --labels SHEET."""
    from judge.labels.load import SHEET_NAMES
    from judge.labels.sample import make_sheet
    from judge.labels.sheet import read_sheet, sheet_text
    from judge.problems import DatasetError
    from judge.cli.runs import scored
    from judge.runs.locks import reading
    from judge.runs.run import Run

    if level not in SHEET_NAMES:
        raise BadInput(f"--level {level}: expected claim or answer")
    if (n is None) == (more is None):
        raise BadInput("give --n N for a new sheet, or --more N to extend the existing one")
    run = Run.open(run_dir)
    if run.summary_model is None or not run.summary_model.complete:  # a killed or stopped run: a sample of part of it reads as the whole
        raise BadInput(f"{run_dir} did not finish ({'its summary.json says incomplete' if run.summary else 'no summary.json'}): judge label "
                       f"samples a finished run directory (finish it first: judge run CONFIG --resume {run_dir})")
    from judge.runs.selection import check_whole

    check_whole(run.store, run.summary_model)  # complete by its summary, and by its own files (issue 50.12)
    path = out or run.path / SHEET_NAMES[level]
    if out is not None:
        from judge.files import check_output

        check_output(out, (), "--out")
    existing = None
    if more is not None:
        if not path.is_file():
            raise BadInput(f"--more: {path} does not exist; start a sheet with --n N")
        existing = read_sheet(path)
        if existing.problems:
            raise DatasetError(existing.problems)
    failed = None
    with reading(run.path):
        rows = make_sheet(run, level, more or n, seed, from_gold, existing)
        text = sheet_text(rows)
        if more is None and (path.exists() or path.is_symlink()) and not _same_text(path, text):
            raise BadInput(f"{path} exists (it may hold labels): extend it with --more N, or write another with --out FILE")
        if more is None and path.exists():
            pass  # the same draw wrote it (a rerun, e.g. after a scoring failure): taken as it is
        elif out is None:
            run.store.write_text(path.name, text)
        else:
            from judge.files import replace_with

            replace_with(path, [text])
        try:
            scored(run.path)  # report.html offers the sheet in its labelling mode
        except JudgesFailed as e:  # the sheet is written: said first, then the scoring's failure (exit 3)
            failed = e
    strata = Counter(r.stratum for r in rows)
    labelled = sum(r.labelled for r in rows)
    report = {"sheet": str(path), "items": len(rows), "added": more or n, "level": level, "labelled": labelled, "strata": dict(strata),
              "report": str(run.path / "report.html"), "scoring_failed": str(failed) if failed else None}
    if as_json:
        console.print_json(report)
        if failed:
            raise failed
        return
    console.say(f"wrote {len(rows)} {level}s to {path} ({', '.join(f'{k} {v}' for k, v in sorted(strata.items()))}; {labelled} labelled)")
    if from_gold and labelled < len(rows):
        console.say(f"{len(rows) - labelled} sampled {level}s have no gold label: label them, or they are left out (with a warning)")
    console.say(f"label them in {run.path / 'report.html'} (Label a sample) or in any editor; then: judge score {run.path} --labels {path}")
    if failed:
        raise failed


def _same_text(path: Path, text: str) -> bool:
    """Whether ``path`` is a regular file (no link, no device) holding exactly ``text``: a sheet this draw wrote."""
    data = text.encode("utf-8")
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size != len(data):
            return False
        with open(path, "rb") as f:
            return f.read(len(data) + 1) == data
    except OSError:
        return False
