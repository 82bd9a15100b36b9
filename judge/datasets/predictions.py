"""Answer predictions for ``judge flashrag-eval``: a JSON object {id: answer} on one line, or JSONL rows
{id, answer}; the form is told from the text."""

from __future__ import annotations

import json
from pathlib import Path


def load_predictions(path: Path) -> dict[str, str]:
    text = path.read_text(encoding="utf-8").strip()
    if text.startswith("{") and "\n" not in text:
        return json.loads(text)
    return {str(o["id"]): o["answer"] for o in (json.loads(line) for line in text.splitlines() if line.strip())}
