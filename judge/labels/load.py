"""Reading filled sheets for a run's scores: every sheet line checked, then checked against the run (its run
id, its items); any problem refuses the labels with one line each (judge.problems.DatasetError), so no label
is dropped in silence."""

from __future__ import annotations

from pathlib import Path

from judge.labels.sheet import ANSWER, CLAIM, Labels, check_against_run, item_id, read_sheet
from judge.problems import DatasetError, Problem
from judge.runs.merge import identity
from judge.runs.run import Run
from judge.verdicts import answer_label, is_judged

SHEET_NAMES = {CLAIM: "labels.jsonl", ANSWER: "labels-answers.jsonl"}  # judge label's sheets, in the run directory


def run_items(run: Run) -> set[str]:
    """The ids of every item a sheet of this run may name (judged claims, answers with a judged claim)."""
    out = set()
    for r in run.results():
        for i, a in enumerate(r.answers):
            out.update(item_id(r.record_id, i, c.claim_id) for c in a.claims if is_judged(c.label))
            if answer_label(c.label for c in a.claims) is not None:
                out.add(item_id(r.record_id, i))
    return out


def own_sheets(run: Run) -> list[Path]:
    """The run's own sheets (judge label wrote them) that hold at least one label."""
    out = []
    for name in SHEET_NAMES.values():
        path = run.path / name
        if path.is_file():
            sheet = read_sheet(path)
            if sheet.problems or sheet.labelled():
                out.append(path)
    return out


def load_labels(run: Run, paths: list[Path] | None = None) -> Labels | None:
    """The labels to score ``run`` with: the sheets given, else the run's own filled sheets (None when there
    are none). DatasetError with one problem per bad line, foreign item or run mismatch."""
    given = paths is not None and len(paths) > 0
    paths = list(paths) if given else own_sheets(run)
    if not paths:
        return None
    problems: list[Problem] = []
    sheets = []
    run_id, items = identity(run.store), None
    levels: dict[str, str] = {}
    for path in paths:
        sheet = read_sheet(path)
        problems += sheet.problems
        if items is None:
            items = run_items(run)
        problems += check_against_run(sheet, run_id, items, str(run.path))
        for lineno, row in sheet.rows:
            if row.level in levels and levels[row.level] != str(path):
                problems.append(Problem(file=str(path), record_id=f"line {lineno}", field="level",
                                        message=f"{row.level} labels come from {levels[row.level]} already: give one sheet per level"))
                break
            levels.setdefault(row.level, str(path))
        sheets.append(sheet)
    if problems:
        raise DatasetError(problems)
    return Labels(sheets)


def check_sheet(path: Path, run_dir: Path | None = None) -> tuple[list[Problem], dict]:
    """``judge validate`` on a sheet: every line checked (unknown fields, labels outside the vocabulary, an item
    on two lines), and against its run when given or when the sheet sits in a run directory (run id, items)."""
    from collections import Counter

    sheet = read_sheet(path)
    problems = list(sheet.problems)
    if run_dir is None and (Path(path).parent / "run.json").is_file():
        run_dir = Path(path).parent
    if run_dir is not None and sheet.rows:
        run = Run.open(run_dir)
        problems += check_against_run(sheet, identity(run.store), run_items(run), str(run.path))
    labels = Counter(r.label or "(empty)" for _, r in sheet.rows)
    report = {"file": str(path), "format": "judge-labels", "run_id": sheet.run_ids[0] if sheet.run_ids else None,
              "checked_against_run": str(run_dir) if run_dir is not None else None, "items": len(sheet.rows),
              "labelled": len(sheet.labelled()), "labels": dict(sorted(labels.items())), "errors": [p.model_dump() for p in problems]}
    return problems, report
