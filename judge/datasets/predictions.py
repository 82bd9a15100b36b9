"""Answer predictions for ``judge flashrag-eval``: a JSON object {id: answer}, or JSONL rows {id, answer}; the
form is told from the text. One reader, through the input boundary: judge.datasets.flashrag.load_predictions."""

from __future__ import annotations

from judge.datasets.flashrag import load_predictions

__all__ = ["load_predictions"]
