"""Answers against golden answers (SQuAD's normalisation), and retrieval gold recall at chunk level against
title level: the gap is how much title matching inflates retrieval scores. Supporting titles are resolved as
the alignment resolves them (:meth:`TitleIndex.resolve`).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable
from pathlib import Path

_ARTICLES = re.compile(r"\b(a|an|the)\b")


def squad_normalize(text: str) -> str:
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, golden: list[str]) -> float:
    p = squad_normalize(prediction)
    return float(any(p == squad_normalize(g) for g in golden))


def token_f1(prediction: str, golden: list[str]) -> float:
    best = 0.0
    p_tokens = squad_normalize(prediction).split()
    for g in golden:
        g_tokens = squad_normalize(g).split()
        common = sum((Counter(p_tokens) & Counter(g_tokens)).values())
        if not p_tokens or not g_tokens:
            f1 = float(p_tokens == g_tokens)
        elif common == 0:
            f1 = 0.0
        else:
            precision, recall = common / len(p_tokens), common / len(g_tokens)
            f1 = 2 * precision * recall / (precision + recall)
        best = max(best, f1)
    return best


def gold_at_k(retrieved: list[str], gold_ids: list[str], titles: dict[str, str], supporting_titles: set[str], k: int) -> dict:
    """One row's retrieval in the top k against chunk-level gold (ids) and title-level gold (any chunk of a
    supporting title): recall over the gold, precision over k."""
    top = retrieved[:k]
    gold = set(gold_ids)
    found_titles = {titles.get(c) for c in top}
    return {
        "recall_chunk": len(set(top) & gold) / len(gold) if gold else 0.0,
        "recall_title": len(found_titles & supporting_titles) / len(supporting_titles) if supporting_titles else 0.0,
        "precision_chunk": sum(c in gold for c in top) / k,
        "precision_title": sum(titles.get(c) in supporting_titles for c in top) / k,
    }


def supporting_titles(row: dict, resolve: Callable[[str], str | None] | None = None) -> set[str]:
    """The row's supporting titles, each as the corpus has it (``resolve``; a title not found stays as given)."""
    meta = row.get("metadata") or {}
    if meta.get("question_decomposition"):
        raw = {(h.get("support_paragraph") or {}).get("title", "") for h in meta["question_decomposition"]}
    else:
        sf = meta.get("supporting_facts") or []
        raw = set(sf.get("title", [])) if isinstance(sf, dict) else {x[0] for x in sf}
    return {(resolve(t) if resolve else None) or t for t in raw}


def evaluate_flashrag(
    rows: list[dict],
    predictions: dict[str, str] | None,
    run: dict[str, dict[str, float]] | None,
    titles: dict[str, str],
    k: int = 5,
    resolve_title: Callable[[str], str | None] | None = None,
) -> dict:
    """EM and token F1 of predictions; chunk- against title-level gold of a retrieval run (mean over rows)."""
    out: dict = {"rows": len(rows)}
    if predictions is not None:
        scored = [r for r in rows if str(r["id"]) in predictions]
        ids = {str(r["id"]) for r in rows}
        out["answers"] = {
            "scored": len(scored),
            "missing_predictions": len(rows) - len(scored),
            "predictions_for_unknown_ids": len([p for p in predictions if p not in ids]),
            "exact_match": sum(exact_match(predictions[str(r["id"])], r["golden_answers"]) for r in scored) / len(scored) if scored else None,
            "token_f1": sum(token_f1(predictions[str(r["id"])], r["golden_answers"]) for r in scored) / len(scored) if scored else None,
        }
    if run is not None:
        per = []
        for r in rows:
            gold = (r.get("metadata") or {}).get("gold_doc_ids")
            if not gold:
                continue
            ranked = [d for d, _ in sorted(run.get(str(r["id"]), {}).items(), key=lambda kv: (-kv[1], kv[0]))]
            per.append(gold_at_k(ranked, [str(g) for g in gold], titles, supporting_titles(r, resolve_title), k))
        out["retrieval"] = {"k": k, "rows": len(per), "rows_without_gold_doc_ids": len(rows) - len(per)}
        if per:
            out["retrieval"].update({key: sum(p[key] for p in per) / len(per) for key in per[0]})
            out["retrieval"]["title_inflation_precision"] = out["retrieval"]["precision_title"] - out["retrieval"]["precision_chunk"]
    return out


def flashrag_report(data: str | Path, corpus: str | Path, predictions: str | Path | None = None,
                    retrieval: str | Path | None = None, k: int = 5) -> dict:
    """``judge flashrag-eval``: load everything (input problems raise DatasetError), then evaluate."""
    from judge.datasets.beir import load_run
    from judge.datasets.flashrag import TitleIndex, load_predictions, load_rows

    rows = load_rows(data)
    index = TitleIndex(corpus)
    preds = load_predictions(predictions) if predictions is not None else None
    run = load_run(retrieval) if retrieval is not None else None
    titles = index.titles() if run is not None else {}
    return evaluate_flashrag(rows, preds, run, titles, k, resolve_title=index.resolve)
