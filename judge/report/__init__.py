"""Reports of a run: scores.json, report.md and a self-contained report.html, written into the run directory."""

from __future__ import annotations

import json
from pathlib import Path

from judge.report import html, markdown
from judge.runs.run import Run
from judge.scoring import score


def write_reports(run: Run | Path) -> dict:
    """Score the run and write scores.json, report.md and report.html next to its results."""
    run = run if isinstance(run, Run) else Run.open(run)
    scores = score(run)
    run.store.write_text("scores.json", json.dumps(scores, ensure_ascii=False, indent=1) + "\n")
    run.store.write_text("report.md", markdown.render(scores))
    run.store.write_parts("report.html", html.render(scores, run.results(), run.records))
    return scores


def write_agreement(agreement: dict, folder: Path) -> list[Path]:
    """agreement.json and agreement.html (``judge agreement``) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    json_path, html_path = folder / "agreement.json", folder / "agreement.html"
    json_path.write_text(json.dumps(agreement, ensure_ascii=False, indent=1, default=str) + "\n", encoding="utf-8")
    html_path.write_text(html.agreement_page(agreement), encoding="utf-8")
    return [json_path, html_path]
