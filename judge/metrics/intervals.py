"""Exact (Clopper-Pearson) intervals of a proportion: the one home of the bounds every count in the reports
carries (judge health on controls, calibration on labelled claims, judges against gold, corrected rates)."""

from __future__ import annotations

import math
from functools import lru_cache


@lru_cache(maxsize=4096)
def exact_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Two-sided Clopper-Pearson interval of a proportion k/n."""
    from scipy.special import betaincinv  # beta.ppf(q, a, b) is betaincinv(a, b, q); scipy.stats costs a second to import

    if n == 0:
        return 0.0, 1.0
    a = (1 - confidence) / 2
    lo = 0.0 if k == 0 else float(betaincinv(k, n - k + 1, a))
    hi = 1.0 if k == n else float(betaincinv(k + 1, n - k, 1 - a))
    return lo, hi


@lru_cache(maxsize=4096)
def lower_bound(k: int, n: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson lower bound: the recall the judge has at least, at ``confidence``."""
    from scipy.special import betaincinv

    return 0.0 if k == 0 or n == 0 else float(betaincinv(k, n - k + 1, 1 - confidence))


def min_per_label(floor: float, confidence: float = 0.95) -> int:
    """The fewest controls of a label on which a judge right every time can clear ``floor``."""
    if floor <= 0:
        return 1
    return max(1, math.ceil(math.log(1 - confidence) / math.log(floor) - 1e-9))
