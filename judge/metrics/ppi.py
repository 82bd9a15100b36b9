"""Prediction-powered inference for a mean: PPI++ with power tuning (Angelopoulos, Duchi and Zrnic, "PPI++",
arXiv:2311.01453), in the form of ``ppi_py.ppi_mean_ci``, written here (ppi-python pulls numba, pandas,
statsmodels, scikit-learn and gdown); the stratified estimator the labels use and why: docs/labels.md.

    estimate = lambda * mean(yhat_all) + mean(w * (y - lambda * yhat))
    variance = lambda^2 * var(yhat_all) / N + var(w * (y - lambda * yhat)) / n

lambda = 0 is the labels alone, 1 plain PPI; power tuning picks the lambda in [0, 1] of least variance, so the
interval is never wider than the labels-only one. ``w``: sampling weights (normalised to mean 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054  # the normal quantile of a two-sided 95% interval


@dataclass(frozen=True)
class MeanEstimate:
    estimate: float
    low: float
    high: float
    se: float
    lam: float  # the tuning weight used (0: the labels alone)
    n: int  # labelled items
    N: int  # items with the judge's value (0 for the labels alone)

    @property
    def width(self) -> float:
        return self.high - self.low


def _weights(w, n: int) -> np.ndarray:
    if w is None:
        return np.ones(n)
    w = np.asarray(w, dtype=float)
    if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError("weights: one positive finite weight per labelled item")
    return w / w.mean()


def _interval(point: float, se: float, z: float) -> tuple[float, float]:
    return point - z * se, point + z * se


def ppi_variance(y, yhat, yhat_all, lam: float, w=None) -> float:
    """The estimated variance of the PPI++ estimate at ``lam`` (ppi_py's ``ppi_mean_ci``: population
    standard deviations, ddof 0)."""
    y, yhat, yhat_all = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_all))
    w = _weights(w, len(y))
    return float(np.var(lam * yhat_all) / len(yhat_all) + np.var(w * (y - lam * yhat)) / len(y))


def tuned_lambda(y, yhat, yhat_all, w=None) -> float:
    """The lambda in [0, 1] that minimises :func:`ppi_variance` (a quadratic in lambda):
    cov(w y, w yhat) / n over var(w yhat) / n + var(yhat_all) / N; 0 when the judge's values do not vary."""
    y, yhat, yhat_all = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_all))
    w = _weights(w, len(y))
    a, b = w * y, w * yhat
    cov = float(np.mean((a - a.mean()) * (b - b.mean())))
    curvature = float(np.var(b)) / len(y) + float(np.var(yhat_all)) / len(yhat_all)
    if curvature <= 0:
        return 0.0
    return float(min(1.0, max(0.0, (cov / len(y)) / curvature)))


def ppi_mean(y, yhat, yhat_all, w=None, lam: float | None = None, z: float = Z95) -> MeanEstimate:
    """The PPI++ estimate of the population mean with its interval (``lam`` None: power-tuned)."""
    y, yhat, yhat_all = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_all))
    if len(y) == 0 or len(y) != len(yhat) or len(yhat_all) == 0:
        raise ValueError("ppi_mean: needs at least one labelled item, a prediction for each, and the population's predictions")
    weights = _weights(w, len(y))
    if lam is None:
        lam = tuned_lambda(y, yhat, yhat_all, weights)
    point = float(lam * yhat_all.mean() + np.mean(weights * (y - lam * yhat)))
    se = math.sqrt(ppi_variance(y, yhat, yhat_all, lam, weights))
    low, high = _interval(point, se, z)
    return MeanEstimate(point, low, high, se, float(lam), len(y), len(yhat_all))


def classical_mean(y, w=None, z: float = Z95) -> MeanEstimate:
    """The labels alone: the (weighted) mean with its normal interval, PPI++ at lambda = 0."""
    y = np.asarray(y, dtype=float)
    if len(y) == 0:
        raise ValueError("classical_mean: needs at least one labelled item")
    weights = _weights(w, len(y))
    point = float(np.mean(weights * y))
    se = float(np.std(weights * y)) / math.sqrt(len(y))
    low, high = _interval(point, se, z)
    return MeanEstimate(point, low, high, se, 0.0, len(y), 0)


def difference(a: MeanEstimate, b: MeanEstimate, z: float = Z95) -> MeanEstimate:
    """b - a for two estimates from independent samples (two runs, each with its own labels)."""
    point = b.estimate - a.estimate
    se = math.sqrt(a.se**2 + b.se**2)
    low, high = _interval(point, se, z)
    return MeanEstimate(point, low, high, se, float("nan"), a.n + b.n, a.N + b.N)


def labels_to_halve(n: int, N: int) -> int | None:
    """How many more labels would halve the interval's width: its variance falls as 1/n, so 4n labels in all
    (3n more); None when the population has fewer than 4n items to label."""
    if n <= 0 or 4 * n > N:
        return None
    return 3 * n


CC = 1.0  # a continuity correction of one item's worth (1 / N) either side: a rate over N items moves by whole items
PRIOR = 1.0  # the pseudo-labels of each stratum's rate for its variance: (k + 1) / (n_h + 2)


@dataclass(frozen=True)
class Stratum:
    """One stratum of a stratified sample: ``size`` items in the population, the labels of the ``labelled`` ones
    (values in [0, 1]), and ``guess``: the judge's value, constant within the stratum (the sample is stratified
    by the judge's verdict), used only where no item of the stratum is labelled."""

    size: int
    labels: tuple[float, ...]
    guess: float


def stratified_mean(strata: list[Stratum], z: float = Z95) -> MeanEstimate:
    """The stratified mean of labels with an interval that cannot vanish (issue 47 item 1; docs/labels.md).

    Strata are the judge's verdicts, so PPI++'s estimate is this post-stratified mean, sum_h W_h mean(labels_h).
    Its variance uses p_h = (k_h + 1) / (n_h + 2), so a stratum whose labels all agree still has one; the
    interval is Wilson's on the effective number of labels, Student's quantile, 1 / N wider either side. A
    stratum with no label is taken at the judge's value and widened by its whole share (bench/ppi_coverage.py)."""
    total = sum(s.size for s in strata)
    if total <= 0:
        raise ValueError("stratified_mean: the strata hold no item")
    point = var = guessed = unlabelled = 0.0
    n = 0
    for s in strata:
        if s.size <= 0:
            continue
        share = s.size / total
        k = len(s.labels)
        if k == 0:  # any rate from 0 to 1: the judge's value moves the point, never the interval
            point += share * s.guess
            guessed += share * s.guess
            unlabelled += share
            continue
        n += k
        point += share * (sum(s.labels) / k)
        p = (sum(s.labels) + PRIOR) / (k + 2 * PRIOR)
        var += share**2 * max(0.0, 1 - k / s.size) * p * (1 - p) / k * (s.size / (s.size - 1) if s.size > 1 else 1.0)
    se = math.sqrt(var)
    smoothed = sum(s.size / total * ((sum(s.labels) + PRIOR) / (len(s.labels) + 2 * PRIOR)) for s in strata if s.size > 0 and s.labels)
    labelled = sum(1 for s in strata if s.size > 0 and s.labels)
    if z == Z95:  # few labels: Student's quantile on the labels' degrees of freedom (n - strata), as a t interval would
        from scipy.stats import t as student

        z = float(student.ppf(0.975, max(1, n - labelled)))
    low, high = wilson(point - guessed, smoothed, var, z) if n else (0.0, 0.0)  # the labelled strata's part
    cc = CC / total if var > 0 else 0.0
    return MeanEstimate(point, low - cc, high + unlabelled + cc, se, float("nan"), n, total)


def labels_alone(y, w, size: int, z: float = Z95) -> MeanEstimate:
    """The labels without the judge: their weighted mean with :func:`stratified_mean`'s interval for one
    stratum (Kish's effective number of labels): what a simple random sample of the labels would say."""
    y, w = np.asarray(y, dtype=float), np.asarray(w, dtype=float)
    n = len(y)
    if n == 0 or size <= 0:
        raise ValueError("labels_alone: needs at least one label and a population")
    point = float(np.sum(w * y) / np.sum(w))
    n_eff = float(np.sum(w) ** 2 / np.sum(w**2))
    p = (point * n_eff + PRIOR) / (n_eff + 2 * PRIOR)
    var = p * (1 - p) / n_eff * max(0.0, 1 - n / size) * (size / (size - 1) if size > 1 else 1.0)
    if z == Z95:
        from scipy.stats import t as student

        z = float(student.ppf(0.975, max(1, n - 1)))
    low, high = wilson(point, p, var, z)
    cc = CC / size if var > 0 else 0.0
    return MeanEstimate(point, low - cc, high + cc, math.sqrt(var), 0.0, n, size)


def wilson(point: float, smoothed: float, var: float, z: float = Z95) -> tuple[float, float]:
    """A Wilson interval around ``point`` for a mean of values in [0, 1] of estimated variance ``var``, on the
    effective sample size p(1 - p) / var: near 0 or 1 it reaches further toward the middle, as it should."""
    if var <= 0:
        return point, point
    m = smoothed * (1 - smoothed) / var
    centre = (point + z * z / (2 * m)) / (1 + z * z / m)
    half = z / (1 + z * z / m) * math.sqrt(max(0.0, point * (1 - point)) / m + z * z / (4 * m * m))
    return centre - half, centre + half
