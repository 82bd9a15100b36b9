"""The exact intervals are computed with scipy.special.betaincinv, not scipy.stats.beta.ppf (issue 48:
scipy.stats took a second and ~45 MB of every run's start-up): the same numbers, to the last bit."""

from __future__ import annotations

import subprocess
import sys

from scipy.stats import beta

from judge.metrics.intervals import exact_interval, lower_bound


def test_the_bounds_are_scipy_stats_beta_ppf_bit_for_bit():
    for n in (*range(1, 60), 99, 100, 240, 1000, 5000):
        for k in sorted({0, 1, 2, n // 3, n // 2, n - 1, n} & set(range(n + 1))):
            for confidence in (0.9, 0.95, 0.99):
                a = (1 - confidence) / 2
                lo = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
                hi = 1.0 if k == n else float(beta.ppf(1 - a, k + 1, n - k))
                assert exact_interval(k, n, confidence) == (lo, hi), (k, n, confidence)
                one = 0.0 if k == 0 else float(beta.ppf(1 - confidence, k, n - k + 1))
                assert lower_bound(k, n, confidence) == one, (k, n, confidence)
    assert exact_interval(0, 0) == (0.0, 1.0) and lower_bound(0, 0) == 0.0


def test_an_interval_does_not_import_scipy_stats():
    code = "import sys; from judge.metrics.intervals import exact_interval; exact_interval(3, 7); print('scipy.stats' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
