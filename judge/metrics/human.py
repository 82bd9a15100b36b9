"""The judge against human raters: verdicts as 0-2 scores (judge.verdicts.scale_scores); ordinal alpha of the
judge and of each human against the others, both leave-one-out so they compare (the median of every H-1
humans); bootstrap intervals over items (seeded); Spearman's rho against the mean human score.
"""

from __future__ import annotations

import random
from itertools import combinations
from statistics import mean

import numpy as np

from judge.metrics.agreement import alpha

BOOTSTRAP = 400


def _median_low(values: list[float]) -> float | None:
    present = sorted(v for v in values if v is not None and not (isinstance(v, float) and np.isnan(v)))
    if not present:
        return None
    return present[(len(present) - 1) // 2]  # the lower median stays on the scale


def _pool(humans: list[list], members: tuple[int, ...], items: list[int]) -> list:
    return [_median_low([humans[h][j] for h in members]) for j in items]


def _alphas(judge: list, humans: list[list], items: list[int], scale) -> tuple[float | None, float | None, list]:
    h = len(humans)
    judge_alphas, human_alphas = [], []
    for members in combinations(range(h), h - 1):
        a = alpha([[judge[j] for j in items], _pool(humans, members, items)], "ordinal", scale)
        if a is not None:
            judge_alphas.append(a)
    per_human = []
    for k in range(h):
        others = tuple(i for i in range(h) if i != k)
        a = alpha([[humans[k][j] for j in items], _pool(humans, others, items)], "ordinal", scale)
        per_human.append(a)
        if a is not None:
            human_alphas.append(a)
    return (mean(judge_alphas) if judge_alphas else None), (mean(human_alphas) if human_alphas else None), per_human


def ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(x: list[float], y: list[float]) -> float | None:
    if len(x) != len(y) or len(x) < 3:
        return None
    rx, ry = np.array(ranks(x)), np.array(ranks(y))
    if rx.std() == 0 or ry.std() == 0:
        return None
    return float(np.corrcoef(rx, ry)[0, 1])


def judge_vs_humans(judge: list, humans: list[list], scale, judge_continuous: list[float] | None = None, seed: int = 0, bootstrap: int = BOOTSTRAP) -> dict:
    """``judge``: the judge's score per item; ``humans``: annotators x items; items the judge could not score
    (None) are left out."""
    items = [j for j, v in enumerate(judge) if v is not None]
    if len(humans) < 2 or len(items) < 2:
        return {"items": len(items), "alpha_judge": None, "alpha_human_ceiling": None, "reason": "fewer than 2 items or 2 raters"}
    a_judge, a_human, per_human = _alphas(judge, humans, items, scale)
    rng = random.Random(seed)
    boot_j, boot_h = [], []
    for _ in range(bootstrap):
        sample = [items[rng.randrange(len(items))] for _ in items]
        bj, bh, _ = _alphas(judge, humans, sample, scale)
        if bj is not None:
            boot_j.append(bj)
        if bh is not None:
            boot_h.append(bh)
    ci = lambda xs: [float(np.percentile(xs, 2.5)), float(np.percentile(xs, 97.5))] if len(xs) >= 10 else None  # noqa: E731
    human_mean = [mean(v for v in (humans[h][j] for h in range(len(humans))) if v is not None) for j in items]
    rho = spearman([judge_continuous[j] for j in items] if judge_continuous else [judge[j] for j in items], human_mean)
    return {
        "items": len(items),
        "alpha_judge": a_judge,
        "alpha_judge_ci95": ci(boot_j),
        "alpha_human_ceiling": a_human,
        "alpha_human_ceiling_ci95": ci(boot_h),
        "alpha_each_human": per_human,
        "spearman_rho": rho,
        "bootstrap": bootstrap,
        "seed": seed,
    }
