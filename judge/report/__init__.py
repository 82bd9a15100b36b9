"""Reports of a run: scores.json, report.md and a self-contained report.html, written into the run directory."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from judge.runs.run import Run

# The renderers and the scoring are imported where they are used: every command imports this package for
# its terminal module, and `judge --help` should not pay for numpy, jinja and the scoring (about 0.7 s).


def write_reports(run: Run | Path, labels: list[Path] | None = None) -> dict:
    """Score the run and write scores.json, report.md and report.html next to its results. ``labels``: filled
    labelling sheets (default: the run's own, judge.labels.load), for the corrected rates."""
    from judge.jsonstream import json_parts
    from judge.labels.load import load_labels
    from judge.report import html, markdown
    from judge.runs.run import Run
    from judge.scoring import score

    run = run if isinstance(run, Run) else Run.open(run)
    given = load_labels(run, labels)
    scores = score(run, given)
    if labels and given is not None:  # labels given once stay with the run (judge.labels.load.keep_with_run)
        from judge.labels.load import keep_with_run

        keep_with_run(run, given)
    run.store.write_parts("scores.json", json_parts(scores))  # written piece by piece: per_answer is read back from disk
    run.store.write_text("report.md", markdown.render(scores))
    run.store.write_parts("report.html", html.render(scores, run.results(), run.records, sheet=sheet_rows(run)))
    return scores


def sheet_rows(run: Run) -> list:
    """The rows of the run's own labelling sheets (judge label), for report.html's labelling mode; a sheet with
    problems is left out of the page (judge score and judge validate name them)."""
    from judge.labels.load import SHEET_NAMES
    from judge.labels.sheet import read_sheet

    rows = []
    for name in SHEET_NAMES.values():
        if (run.path / name).is_file():
            sheet = read_sheet(run.path / name)
            if not sheet.problems:
                rows += [r for _, r in sheet.rows]
    return rows


def agreement_path(run_dirs: list[Path]) -> Path:
    """A new file in the first run's directory named after the runs (agreement-A+B.html, then -2, -3, ...):
    a later call never overwrites an earlier one."""
    names = "+".join(Path(d).resolve().name for d in run_dirs)
    if len(names) > 120:
        names = f"{Path(run_dirs[0]).resolve().name}+{len(run_dirs) - 1}-more-{hashlib.sha1(names.encode()).hexdigest()[:8]}"
    folder = Path(run_dirs[0])
    path, n = folder / f"agreement-{names}.html", 1
    while path.exists():
        n += 1
        path = folder / f"agreement-{names}-{n}.html"
    return path


def write_agreement(agreement: dict, path: Path) -> Path:
    """``judge agreement``'s one output file: JSON when ``path`` ends in .json, else the HTML page. An
    existing file is never overwritten (FileExistsError)."""
    from judge.report import html

    text = json.dumps(agreement, ensure_ascii=False, indent=1, default=str) + "\n" if path.suffix == ".json" else html.agreement_page(agreement)
    from judge.files import write_new

    path.parent.mkdir(parents=True, exist_ok=True)
    write_new(path, [text])  # never over a file, never through a link; /dev/null or a pipe as such
    return path
