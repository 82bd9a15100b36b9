"""Intervals and tests over records compared on the same records: seeded bootstraps, the exact sign test and
McNemar's test. Pure functions over numbers."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

BOOTSTRAP = 1000
SEED = 0


def sign_test(worse: int, better: int) -> float:
    """The exact one-sided p-value of ``worse`` against ``better``, if neither were more likely:
    P(X >= worse) for X ~ Binomial(worse + better, 1/2). 1.0 when nothing changed."""
    n = worse + better
    if n == 0:
        return 1.0
    return sum(math.comb(n, k) for k in range(worse, n + 1)) / 2**n


def sign_test_two_sided(a: int, b: int) -> float:
    return min(1.0, 2 * sign_test(max(a, b), min(a, b))) if a + b else 1.0


def _draws(n: int, samples: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, n, size=(samples, n))


def ratio_ci(num: Sequence[float], den: Sequence[float], samples: int = BOOTSTRAP, seed: int = SEED) -> list[float] | None:
    """95% bootstrap interval (over rows, seeded) of sum(num) / sum(den)."""
    num, den = np.asarray(num, float), np.asarray(den, float)
    if not len(num) or den.sum() == 0:
        return None
    idx = _draws(len(num), samples, seed)
    d = den[idx].sum(axis=1)
    values = num[idx].sum(axis=1)[d > 0] / d[d > 0]
    return [float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))] if len(values) else None


def mean_ci(values: Sequence[float], samples: int = BOOTSTRAP, seed: int = SEED) -> list[float] | None:
    """95% bootstrap interval (over rows, seeded) of the mean: of paired per-record differences, say."""
    v = np.asarray(values, float)
    if not len(v):
        return None
    means = v[_draws(len(v), samples, seed)].mean(axis=1)
    return [float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))]


def counts_ci(cells: dict, statistic: Callable[[dict], float | None], samples: int = BOOTSTRAP, seed: int = SEED) -> list[float] | None:
    """95% bootstrap interval of a statistic of a contingency table (``cells``: key -> count), resampling the
    items it counts (a multinomial draw over the cells: as fast for a million claims as for ten)."""
    keys = [k for k, v in cells.items() if v]
    n = sum(cells[k] for k in keys)
    if not n:
        return None
    p = np.array([cells[k] for k in keys], float) / n
    draws = np.random.default_rng(seed).multinomial(n, p, size=samples)
    values = [v for row in draws if (v := statistic(dict(zip(keys, map(int, row))))) is not None]
    if len(values) < samples / 2:
        return None
    return [float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))]


def mcnemar(only_a: int, only_b: int) -> float:
    """McNemar's exact test (two-sided) of two classifiers on the same items: ``only_a`` items only the first
    got right, ``only_b`` only the second (scipy's binomial test on the discordant pairs)."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(only_a, n, 0.5).pvalue)
