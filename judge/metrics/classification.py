"""Verdicts against gold labels: accuracy, macro-F1, confusion matrix, per-label precision and recall."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from judge.verdicts import CLAIM_LABELS, LABELS


def classification(gold: list[str], predicted: list[str], labels: tuple[str, ...] = LABELS) -> dict:
    """Pairs (gold[i], predicted[i]). A prediction outside ``labels`` counts as wrong, in a confusion column of
    its own; macro-F1 averages over the labels anyone used; a gold label outside ``labels`` is no pair."""
    if len(gold) != len(predicted):
        raise ValueError("gold and predicted differ in length")
    return classification_counts(Counter(zip(gold, predicted)), labels)


def classification_counts(pairs: Mapping[tuple[str, str], int], labels: tuple[str, ...] = LABELS) -> dict:
    """:func:`classification` from the number of times each (gold, predicted) pair occurs: what a run's
    scoring keeps, however many claims it has."""
    pairs = {(g, p): k for (g, p), k in pairs.items() if k and g in labels}  # a zero count (a bootstrap draw's) is no column
    extra = {p for _, p in pairs} - set(labels)
    columns = [*labels, *(lbl for lbl in CLAIM_LABELS if lbl in extra), *sorted(extra - set(CLAIM_LABELS))]
    confusion = {g: dict.fromkeys(columns, 0) for g in labels}
    for (g, p), k in pairs.items():
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
