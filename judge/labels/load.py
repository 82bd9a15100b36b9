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


KEPT_NAMES = {CLAIM: "labels-scored.jsonl", ANSWER: "labels-answers-scored.jsonl"}  # the last sheets judge score was given, kept with the run


def own_sheets(run: Run) -> list[Path]:
    """The run's own sheets holding a label, one per level: judge label's, or the copy of the one judge score
    was last given (issue 47 item 5), whichever was written last."""
    out = []
    for level, name in SHEET_NAMES.items():
        found = []
        for path in (run.path / KEPT_NAMES[level], run.path / name):
            if path.is_file():
                sheet = read_sheet(path)
                if sheet.problems or sheet.labelled():
                    found.append(path)
        if found:
            out.append(max(found, key=lambda p: p.stat().st_mtime_ns))  # a tie: the kept copy (first)
    return out


def keep_with_run(run: Run, labels: Labels) -> None:
    """A copy of each sheet a score was given, in the run directory (KEPT_NAMES): a later score without
    --labels (judge label's own, a rescoring) uses it, so the corrected rates never vanish in silence."""
    from judge.labels.sheet import sheet_text

    for sheet in labels.sheets:
        rows = [r for _, r in sheet.rows]
        if rows:
            run.store.write_text(KEPT_NAMES[rows[0].level], sheet_text(rows))


def load_labels(run: Run, paths: list[Path] | None = None) -> Labels | None:
    """The labels to score ``run`` with: the sheets given, else the run's own filled sheets (None when there
    are none). DatasetError with one problem per bad line, foreign item or run mismatch."""
    given = paths is not None and len(paths) > 0
    paths = list(paths) if given else own_sheets(run)
    if not paths:
        before = _last_files(run)
        if before:  # scored with labels before, none with the run now: said, never dropped in silence
            return Labels([], notes=[f"the labels of the last score ({', '.join(before)}) are no longer with the run: no corrected rate is "
                                     "given now; score it again with judge score RUN --labels FILE"])
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
        mine = check_against_run(sheet, run_id, items, str(run.path))
        problems += mine
        if not sheet.problems and not mine and sheet.rows:  # the design comes from the run's own draw, never the sheet (issue 50 item 3)
            from judge.labels.sample import check_draw

            problems += check_draw(sheet, run)
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


def _last_files(run: Run) -> list[str]:
    """The sheets the run's last score read (scores.json's corrected block), for saying they are gone."""
    try:
        block = (run.scores or {}).get("corrected")
    except (DatasetError, OSError, ValueError):
        return []
    files = block.get("files") if isinstance(block, dict) else None
    return [f for f in files if isinstance(f, str)][:4] if isinstance(files, list) and block.get("levels") else []


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
        if not problems:  # what judge score refuses, judge validate refuses: the sheet is the run's seeded draw
            from judge.labels.sample import check_draw

            problems += check_draw(sheet, run)
    labels = Counter(r.label or "(empty)" for _, r in sheet.rows)
    report = {"file": str(path), "format": "judge-labels", "run_id": sheet.run_ids[0] if sheet.run_ids else None,
              "checked_against_run": str(run_dir) if run_dir is not None else None, "items": len(sheet.rows),
              "labelled": len(sheet.labelled()), "labels": dict(sorted(labels.items())), "errors": [p.model_dump() for p in problems]}
    return problems, report
