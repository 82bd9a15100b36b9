"""Inter-annotator agreement of human ratings: Krippendorff's alpha (the ``krippendorff`` package) and the
dataset card's perfect-agreement fraction."""

from __future__ import annotations

import krippendorff
import numpy as np

from judge.models import DIMENSIONS, Record

VALUE_DOMAIN = (0, 1, 2)


def annotators(records: list[Record]) -> list[str]:
    """Annotator ids in order of first appearance."""
    return list(dict.fromkeys(r.annotator_id for rec in records for r in rec.human_ratings))


def rating_matrix(records: list[Record], dimension: str) -> np.ndarray:
    """Annotators (rows) by records (columns, file order); NaN where an annotator did not rate a record."""
    ids = annotators(records)
    m = np.full((len(ids), len(records)), np.nan)
    row = {a: i for i, a in enumerate(ids)}
    for j, rec in enumerate(records):
        for rating in rec.human_ratings:
            m[row[rating.annotator_id], j] = getattr(rating.scores, dimension)
    return m


def alpha(matrix: np.ndarray, level: str = "ordinal", value_domain=VALUE_DOMAIN) -> float | None:
    """Krippendorff's alpha, or None when it is undefined (fewer than two values to compare)."""
    if matrix.size == 0 or np.sum(~np.isnan(matrix)) < 2:
        return None
    try:
        with np.errstate(invalid="ignore", divide="ignore"):  # no variation at all: alpha is undefined
            value = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level, value_domain=list(value_domain))
    except (ValueError, ZeroDivisionError):
        return None
    return None if np.isnan(value) else float(value)


def human_agreement(records: list[Record]) -> dict:
    """Alpha per dimension and pooled (dimensions joined column-wise, in DIMENSIONS order), and the share
    of records on which every annotator gives the same score on every dimension."""
    rated = [r for r in records if r.human_ratings]
    matrices = {d: rating_matrix(rated, d) for d in DIMENSIONS}
    pooled = np.concatenate([matrices[d] for d in DIMENSIONS], axis=1) if rated else np.empty((0, 0))
    perfect = sum(
        1 for r in rated if all(len({getattr(h.scores, d) for h in r.human_ratings}) == 1 for d in DIMENSIONS)
    )
    return {
        "rated_records": len(rated),
        "perfect_agreement": (perfect / len(rated)) if rated else None,
        "perfect_agreement_records": perfect,
        "alpha_pooled": alpha(pooled),
        "alpha_by_dimension": {d: alpha(matrices[d]) for d in DIMENSIONS},
    }
