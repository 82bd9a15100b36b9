"""Small gradient-boosted trees for a weighted binary target (logistic loss, second-order, histogram splits),
in numpy: the learned no-model judge's model. The trees come out as plain nested dicts
(``{"f": feature, "t": threshold, "l": ..., "r": ...}`` or ``{"v": leaf}``) that
:func:`judge.judges.deterministic.score` walks in pure Python at run time.
"""

from __future__ import annotations

import numpy as np

BINS = 32


def edges(x: np.ndarray, bins: int = BINS) -> list[np.ndarray]:
    """Candidate thresholds per feature: distinct quantiles (a value <= threshold goes left)."""
    qs = np.linspace(0, 1, bins + 1)[1:-1]
    return [np.unique(np.quantile(x[:, j], qs)) for j in range(x.shape[1])]


def binned(x: np.ndarray, cuts: list[np.ndarray]) -> np.ndarray:
    return np.stack([np.searchsorted(c, x[:, j], side="left") for j, c in enumerate(cuts)], axis=1)


def fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, names: list[str], rounds: int = 150, depth: int = 3,
        rate: float = 0.1, l2: float = 1.0, min_child: float = 0.02, monotone: dict[str, int] | None = None) -> dict:
    """Boosted trees on ``x`` (rows x features) for 0/1 ``y`` with sample weights ``w`` (normalised to sum 1;
    ``min_child``: the least weight of hessian a leaf may hold, as a share of the total; ``monotone``: feature
    -> +1 or -1, the direction the prediction must move as the feature grows, whatever the other features:
    a set that never shows a case, e.g. a short answer the source never writes, cannot teach it backwards)."""
    signs = np.array([(monotone or {}).get(n, 0) for n in names])
    w = w / w.sum()
    cuts = edges(x)
    xb = binned(x, cuts)
    prior = float(np.clip((w * y).sum(), 1e-6, 1 - 1e-6))
    base = float(np.log(prior / (1 - prior)))
    f = np.full(len(y), base)
    trees = []
    for _ in range(rounds):
        p = 1 / (1 + np.exp(-f))
        g, h = w * (p - y), w * p * (1 - p)
        l2_scaled = l2 * h.sum() / len(h) * 10
        tree = _grow(xb, g, h, np.arange(len(y)), depth, cuts, names, rate, l2_scaled, min_child * h.sum(), signs, (-np.inf, np.inf))
        trees.append(tree)
        f += _apply(tree, x, names)
    return {"base": base, "trees": trees}


def _grow(xb, g, h, idx, depth, cuts, names, rate, l2, min_child, signs, bounds) -> dict:
    """One node: a leaf (its value clipped to ``bounds``, what monotone splits above allow) or the split of
    best gain; a split on a monotone feature must order its children's values the feature's way."""
    G, H = g[idx].sum(), h[idx].sum()
    value = float(np.clip(-G / (H + l2), *bounds))
    leaf = {"v": round(value * rate, 6)}
    if depth == 0 or len(idx) < 4:
        return leaf
    best = (0.0, None, None, 0.0)
    parent = G * G / (H + l2)
    sub, gi, hi = xb[idx], g[idx], h[idx]
    for j, c in enumerate(cuts):
        nb = len(c) + 1
        if nb < 2:
            continue
        gs = np.cumsum(np.bincount(sub[:, j], weights=gi, minlength=nb))[:-1]
        hs = np.cumsum(np.bincount(sub[:, j], weights=hi, minlength=nb))[:-1]
        ok = (hs >= min_child) & (H - hs >= min_child)
        wl, wr = np.clip(-gs / (hs + l2), *bounds), np.clip(-(G - gs) / (H - hs + l2), *bounds)
        if signs[j]:
            ok &= (wr - wl) * signs[j] >= 0
        if not ok.any():
            continue
        gain = np.where(ok, gs * gs / (hs + l2) + (G - gs) ** 2 / (H - hs + l2) - parent, -np.inf)
        b = int(np.argmax(gain))
        if gain[b] > best[0]:
            best = (float(gain[b]), j, b, float((wl[b] + wr[b]) / 2))
    if best[1] is None:
        return leaf
    _, j, b, mid = best
    lo, hi_ = bounds
    lb, rb = ((lo, mid), (mid, hi_)) if signs[j] > 0 else ((mid, hi_), (lo, mid)) if signs[j] < 0 else (bounds, bounds)
    left = idx[sub[:, j] <= b]
    right = idx[sub[:, j] > b]
    return {"f": names[j], "t": float(cuts[j][b]),
            "l": _grow(xb, g, h, left, depth - 1, cuts, names, rate, l2, min_child, signs, lb),
            "r": _grow(xb, g, h, right, depth - 1, cuts, names, rate, l2, min_child, signs, rb)}


def _apply(tree: dict, x: np.ndarray, names: list[str]) -> np.ndarray:
    """The tree's value for every row of ``x`` (vectorised)."""
    if "v" in tree:
        return np.full(len(x), tree["v"])
    col = x[:, names.index(tree["f"])]
    return np.where(col <= tree["t"], _apply(tree["l"], x, names), _apply(tree["r"], x, names))


def predict(model: dict, x: np.ndarray, names: list[str]) -> np.ndarray:
    f = np.full(len(x), model["base"])
    for t in model["trees"]:
        f += _apply(t, x, names)
    return 1 / (1 + np.exp(-f))
