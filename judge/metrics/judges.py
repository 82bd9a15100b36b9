"""How far to trust a judge, as pure functions over labels collected by judge.scoring.agreement: agreement
between judges, each against gold, cost and latency, and self-preference (the faithfulness a judge gives its
own family's answers, against what judges of other families give them). A claim is identified by (record,
model under test, answer text, claim text).
"""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations
from statistics import mean

from judge.metrics.agreement import alpha, cohen_kappa
from judge.metrics.classification import classification
from judge.verdicts import CREDIT, JUDGE_ERROR, LABELS, NON_MODEL_FAMILIES

CODES = {label: i for i, label in enumerate(LABELS)}
ClaimKey = tuple[str, str, str, str]  # record id, model under test, answer text, claim text


def pairwise(labels: dict[str, dict[ClaimKey, str]]) -> list[dict]:
    """Every pair of judges over the claims both labelled (judge errors left out)."""
    out = []
    for j1, j2 in combinations(sorted(labels), 2):
        shared = [k for k in labels[j1] if k in labels[j2] and labels[j1][k] in CODES and labels[j2][k] in CODES]
        a = [labels[j1][k] for k in shared]
        b = [labels[j2][k] for k in shared]
        out.append({
            "a": j1, "b": j2, "claims": len(shared),
            "cohen_kappa": cohen_kappa(a, b) if shared else None,
            "alpha_nominal": alpha([[CODES[x] for x in a], [CODES[x] for x in b]], "nominal", list(range(len(LABELS)))) if shared else None,
            "raw_agreement": (sum(x == y for x, y in zip(a, b)) / len(shared)) if shared else None,
        })
    return out


def per_judge(labels: dict[str, dict[ClaimKey, str]], families: dict[str, str], gold: dict[ClaimKey, str],
              calls: dict[str, list[dict]], vs_humans: dict[str, dict | None]) -> dict[str, dict]:
    """Each judge: family, claims, errors, against gold, against humans (given), calls, cost and latency."""
    out = {}
    for j in sorted(labels):
        keys = [k for k in labels[j] if k in gold]
        vs_gold = classification([gold[k] for k in keys], [labels[j][k] for k in keys]) if keys else None
        paid = [c for c in calls.get(j, []) if not c["cached"]]
        unknown = sum(1 for c in paid if c["cost_usd"] is None)  # no price known: the cost is unknown, not 0
        out[j] = {
            "family": families.get(j),
            "claims": len(labels[j]),
            "errors": sum(1 for v in labels[j].values() if v == JUDGE_ERROR),
            "vs_gold": {"n": vs_gold["n"], "accuracy": vs_gold["accuracy"], "macro_f1": vs_gold["macro_f1"]} if vs_gold else None,
            "vs_humans": vs_humans.get(j),
            "calls": len(paid),
            "cost_usd": None if unknown or not paid else sum(c["cost_usd"] for c in paid),
            "unknown_cost_calls": unknown,
            "mean_latency_s": mean(c["latency_s"] for c in paid) if paid else None,
        }
    return out


def disagreements(labels: dict[str, dict[ClaimKey, str]], rationales: dict[str, dict[ClaimKey, str]], gold: dict[ClaimKey, str] | None = None) -> list[dict]:
    """Every claim two judges labelled differently (judge errors left out), with each judge's label and
    rationale and the gold label where the data has one, in the order the claims were seen."""
    keys = dict.fromkeys(k for j in sorted(labels) for k in labels[j])
    out = []
    for k in keys:
        given = {j: labels[j][k] for j in sorted(labels) if labels[j].get(k) in CODES}
        if len(set(given.values())) > 1:
            out.append({"record_id": k[0], "model": k[1], "claim": k[3], "gold": (gold or {}).get(k),
                        "judges": {j: {"label": labels[j][k], "rationale": rationales.get(j, {}).get(k, "")} for j in sorted(labels) if k in labels[j]}})
    return out


def self_preference(labels: dict[str, dict[ClaimKey, str]], families: dict[str, str], answer_family: dict[tuple, str]) -> list[dict]:
    by_answer: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for j, claims in labels.items():
        for key, label in claims.items():
            if label in CREDIT:
                by_answer[key[:3]][j].append(CREDIT[label])
    out = []
    for j in sorted(labels):
        fam = families.get(j)
        if fam in (None, "unknown", *NON_MODEL_FAMILIES):
            continue
        own = [k for k, fam_k in answer_family.items() if fam_k == fam and j in by_answer.get(k, {})]
        mine, theirs = [], []
        for k in own:
            others = [mean(v) for other, v in by_answer[k].items() if other != j and families.get(other) not in (fam, *NON_MODEL_FAMILIES)]
            if others:
                mine.append(mean(by_answer[k][j]))
                theirs.append(mean(others))
        out.append({
            "judge": j, "family": fam, "own_family_answers": len(mine),
            "faithfulness_by_judge": mean(mine) if mine else None,
            "faithfulness_by_other_families": mean(theirs) if theirs else None,
            "self_preference": (mean(mine) - mean(theirs)) if mine else None,
        })
    return out
