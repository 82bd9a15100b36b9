"""Reports of a run: scores.json, report.md and a self-contained report.html, written into the run directory."""

from __future__ import annotations

import json
from pathlib import Path

from judge.runs.inputs import dataset_records
from judge.report import html, markdown
from judge.runs.store import RunStore
from judge.scoring import score_store


def write_reports(run_dir: Path) -> dict:
    """Score the run and write scores.json, report.md and report.html next to its results."""
    store = RunStore.open(run_dir)
    config = store.config()
    records = {r.id: r for r in dataset_records(config)}  # loaded once, for the scores and the page
    scores = score_store(store, records)
    if len(config.adjudicate.judges) > 1:
        from judge.metrics.judges import judge_agreement

        scores["judge_agreement"] = judge_agreement([run_dir])
    store.write_text("scores.json", json.dumps(scores, ensure_ascii=False, indent=1) + "\n")
    store.write_text("report.md", markdown.render(scores))
    store.write_parts("report.html", html.render(scores, store.iter_finished(), records))
    return scores


def write_agreement(agreement: dict, folder: Path) -> list[Path]:
    """agreement.json and agreement.html (``judge agreement``) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    json_path, html_path = folder / "agreement.json", folder / "agreement.html"
    json_path.write_text(json.dumps(agreement, ensure_ascii=False, indent=1, default=str) + "\n", encoding="utf-8")
    html_path.write_text(html.agreement_page(agreement), encoding="utf-8")
    return [json_path, html_path]
