"""Agreement: Krippendorff's alpha (the ``krippendorff`` package), perfect agreement over items (the dataset
card's) and over units (item x dimension), Cohen's kappa.
"""

from __future__ import annotations

from collections import Counter

import krippendorff
import numpy as np

from judge.datasets.ratings import RatingTable


def alpha(matrix, level: str = "ordinal", value_domain=None) -> float | None:
    """Krippendorff's alpha of a raters x units matrix (NaN or None = missing); None when undefined."""
    m = np.array(matrix, dtype=float)
    if m.size == 0 or np.sum(~np.isnan(m)) < 2:
        return None
    try:
        with np.errstate(invalid="ignore", divide="ignore"):  # no variation at all: alpha is undefined
            value = krippendorff.alpha(
                reliability_data=m, level_of_measurement=level, value_domain=list(value_domain) if value_domain is not None else None
            )
    except (ValueError, ZeroDivisionError):
        return None
    return None if np.isnan(value) else float(value)


def _all_equal(values: list) -> bool:
    present = [v for v in values if v is not None]
    return len(present) >= 2 and len(set(present)) == 1


def agreement(table: RatingTable, level: str = "ordinal") -> dict:
    """Alpha per dimension and pooled (dimensions joined column-wise), perfect agreement by item and unit."""
    dims = table.dimensions
    matrices = {d: table.values[d] for d in dims}
    pooled = [sum((matrices[d][a] for d in dims), []) for a in range(len(table.annotators))]
    n = len(table.items)
    columns = {d: [[matrices[d][a][j] for a in range(len(table.annotators))] for j in range(n)] for d in dims}
    unit_agree = {d: sum(_all_equal(col) for col in columns[d]) for d in dims}
    item_agree = sum(all(_all_equal(columns[d][j]) for d in dims) for j in range(n))
    return {
        "name": table.name,
        "items": n,
        "annotators": len(table.annotators),
        "dimensions": dims,
        "scale": table.scale,
        "rating_entries": sum(1 for d in dims for row in matrices[d] for v in row if v is not None),
        "perfect_agreement": (item_agree / n) if n else None,
        "perfect_agreement_items": item_agree,
        "perfect_agreement_units": (sum(unit_agree.values()) / (n * len(dims))) if n else None,
        "alpha_pooled": alpha(pooled, level, table.scale),
        "alpha_by_dimension": {d: alpha(matrices[d], level, table.scale) for d in dims},
        "perfect_agreement_by_dimension": {d: (unit_agree[d] / n) if n else None for d in dims},
        "notes": table.notes,
    }


def cohen_kappa(a: list, b: list) -> float | None:
    """Cohen's kappa of two raters' nominal labels over the same items; None when undefined."""
    if len(a) != len(b) or not a:
        return None
    return cohen_kappa_counts(Counter(zip(a, b)))


def cohen_kappa_counts(cells) -> float | None:
    """Cohen's kappa from the counts of each (label of rater 1, label of rater 2) pair; None when undefined."""
    n = sum(cells.values())
    if not n:
        return None
    ca, cb = Counter(), Counter()
    for (x, y), k in cells.items():
        ca[x] += k
        cb[y] += k
    observed = sum(k for (x, y), k in cells.items() if x == y) / n
    expected = sum(ca[k] * cb.get(k, 0) for k in ca) / (n * n)
    if expected == 1.0:
        return None
    return (observed - expected) / (1 - expected)
