"""Verdicts against gold labels: accuracy, macro-F1, confusion matrix, per-label precision and recall."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from judge.verdicts import LABELS


def classification(gold: list[str], predicted: list[str], labels: tuple[str, ...] = LABELS) -> dict:
    """Pairs (gold[i], predicted[i]). Labels outside ``labels`` (judge_error) count as wrong predictions and
    get a column of their own in the confusion matrix. Macro-F1 averages over the labels present in gold or
    predictions (a label nobody used does not count)."""
    if len(gold) != len(predicted):
        raise ValueError("gold and predicted differ in length")
    return classification_counts(Counter(zip(gold, predicted)), labels)


def classification_counts(pairs: Mapping[tuple[str, str], int], labels: tuple[str, ...] = LABELS) -> dict:
    """:func:`classification` from the number of times each (gold, predicted) pair occurs: what a run's
    scoring keeps, however many claims it has."""
    columns = list(labels) + sorted({p for (_, p), k in pairs.items() if k and p not in labels})
    confusion = {g: {p: 0 for p in columns} for g in labels}
    for (g, p), k in pairs.items():
        if g in confusion:
            confusion[g][p] += k
    per_label = {}
    for lbl in labels:
        tp = confusion[lbl][lbl]
        predicted_n = sum(confusion[g][lbl] for g in labels)
        gold_n = sum(confusion[lbl].values())
        precision = tp / predicted_n if predicted_n else None
        recall = tp / gold_n if gold_n else None
        f1 = (2 * precision * recall / (precision + recall)) if precision and recall else (0.0 if (predicted_n or gold_n) else None)
        per_label[lbl] = {"precision": precision, "recall": recall, "f1": f1, "support": gold_n}
    used = [lbl for lbl in labels if per_label[lbl]["f1"] is not None]
    n = sum(pairs.values())
    return {
        "n": n,
        "accuracy": (sum(k for (g, p), k in pairs.items() if g == p) / n) if n else None,
        "macro_f1": (sum(per_label[lbl]["f1"] for lbl in used) / len(used)) if used else None,
        "per_label": per_label,
        "confusion": confusion,  # gold label -> predicted label -> count
    }
