"""The run's own attacker: a detector trained to tell its controls from its real claims, as a judge that wanted
to pass without judging would. L2-regularised logistic regression (numpy, Newton steps) over claim and call
features, scored by grouped cross-validation (no record in both a fold's training and test part), so a record's
controls never teach the detector about themselves. Its out-of-fold AUC: near 0.5 nothing tells controls apart.
A research tool (bench/controls_tells.py): runs neither compute nor gate on it; controls are a canary only."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

FOLDS = 5
MIN_EACH = 8  # fewer controls (or real claims) than this: too few to train and test a detector
L2 = 1.0


def fit(x: np.ndarray, y: np.ndarray, l2: float = L2, steps: int = 25) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weights (bias first) of a logistic regression on standardised ``x``, with the mean and scale used."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    w = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-np.clip(z @ w, -30, 30)))
        grad = z.T @ (p - y) + penalty * w
        hess = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w, mean, scale


def predict(model: tuple[np.ndarray, np.ndarray, np.ndarray], x: np.ndarray) -> np.ndarray:
    w, mean, scale = model
    return 1 / (1 + np.exp(-np.clip(w[0] + ((x - mean) / scale) @ w[1:], -30, 30)))


def auc(scores: Sequence[float], labels: Sequence[int]) -> float:
    """The chance a random control scores above a random real claim (ties count half)."""
    s, y = np.asarray(scores, dtype=float), np.asarray(labels, dtype=int)
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s))
    sorted_s = s[order]
    i = 0
    while i < len(s):  # average ranks of ties
        j = i
        while j + 1 < len(s) and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    pos, neg = int(y.sum()), int(len(y) - y.sum())
    return float((ranks[y == 1].sum() - pos * (pos + 1) / 2) / (pos * neg))


def fold_of(group: str, folds: int = FOLDS) -> int:
    return zlib.crc32(group.encode("utf-8", "surrogatepass")) % folds


def grouped_cv_auc(rows: Sequence[dict[str, float]], labels: Sequence[int], groups: Sequence[str], features: Sequence[str]) -> float | None:
    """Out-of-fold AUC of the detector (labels: 1 control, 0 real claim), folds by group (record): None when
    there are too few of either kind to train and test on."""
    y = np.asarray(labels, dtype=float)
    if y.sum() < MIN_EACH or len(y) - y.sum() < MIN_EACH:
        return None
    x = np.asarray([[r[f] for f in features] for r in rows], dtype=float)
    folds = np.asarray([fold_of(g) for g in groups])
    scores = np.full(len(y), np.nan)
    for k in range(FOLDS):
        test = folds == k
        train = ~test
        if not test.any() or y[train].sum() < 2 or (1 - y[train]).sum() < 2:
            continue
        scores[test] = predict(fit(x[train], y[train]), x[test])
    kept = ~np.isnan(scores)
    if y[kept].sum() < MIN_EACH or (1 - y[kept]).sum() < MIN_EACH:
        return None
    return round(auc(scores[kept], y[kept].astype(int)), 4)
