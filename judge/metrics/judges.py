"""How far to trust a judge: agreement between judges, each judge against gold and humans, self-preference,
and cost and latency per judge. Works on one panel run or on several runs over the same claims (``judge
rejudge``). A claim is identified by (record, model under test, answer text, claim text).

Self-preference: for each judge, the answers written by a model of its own family; the mean faithfulness it
gives them, against the mean faithfulness the judges of *other* families give the same answers. A positive
difference means the judge is kinder to its own family than other judges are.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations
from pathlib import Path
from statistics import mean

from judge.metrics.agreement import alpha, cohen_kappa
from judge.metrics.classification import classification
from judge.runs.inputs import run_inputs
from judge.runs.store import RunStore
from judge.scoring import human_agreement_scores, matched_gold
from judge.verdicts import CREDIT, JUDGE_ERROR, LABELS, NON_MODEL_FAMILIES, REFERENCE_MODEL, SUPPORTED, TRIAGE, scale_scores

CODES = {label: i for i, label in enumerate(LABELS)}


def collect(run_dirs: list[Path]) -> dict:
    """Every judge's labels per claim, answer families, gold labels and per-judge call costs, over the runs."""
    labels: dict[str, dict[tuple, str]] = defaultdict(dict)
    families: dict[str, str] = {}
    answer_family: dict[tuple, str] = {}
    gold: dict[tuple, str] = {}
    reference_claims: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))  # judge -> record -> [(label, cites)]
    records_by_id: dict = {}
    calls: dict[str, list[dict]] = defaultdict(list)
    for run_dir in run_dirs:
        store = RunStore.open(run_dir)
        records, recorded = run_inputs(store)
        records_by_id.update(records)
        for r in store.finished():
            for a in r.answers:
                answer_key = (r.record_id, a.model, a.answer)
                answer_family[answer_key] = a.family
                for claim, g in (matched_gold(records.get(r.record_id), a, recorded) or ([], 0, 0))[0]:
                    if g[1] is not None:
                        gold[answer_key + (claim.text,)] = g[1]
                for c in a.claims:
                    key = answer_key + (c.text,)
                    triaged = [v for v in c.verdicts if v.how == TRIAGE]
                    for v in c.verdicts:
                        if v.how == TRIAGE:
                            continue
                        labels[v.judge][key] = v.label
                        families[v.judge] = v.family
                    if triaged:  # triage settled it for every judge of that run
                        for judge in store.config().adjudicate.judges:
                            labels[judge].setdefault(key, SUPPORTED)
                    if a.model == REFERENCE_MODEL:
                        for v in c.verdicts:
                            if v.how != TRIAGE:
                                reference_claims[v.judge][r.record_id].append((v.label, bool(v.evidence)))
        for call in store.calls():
            calls[call["model"]].append(call)
    return {
        "labels": labels, "families": families, "answer_family": answer_family, "gold": gold,
        "reference_claims": reference_claims, "records": records_by_id, "calls": calls,
    }


def judge_agreement(run_dirs: list[Path]) -> dict:
    data = collect(run_dirs)
    labels, families = data["labels"], data["families"]
    judges = sorted(labels)
    pairwise = []
    for j1, j2 in combinations(judges, 2):
        shared = [k for k in labels[j1] if k in labels[j2] and labels[j1][k] in CODES and labels[j2][k] in CODES]
        a = [labels[j1][k] for k in shared]
        b = [labels[j2][k] for k in shared]
        pairwise.append({
            "a": j1, "b": j2, "claims": len(shared),
            "cohen_kappa": cohen_kappa(a, b) if shared else None,
            "alpha_nominal": alpha([[CODES[x] for x in a], [CODES[x] for x in b]], "nominal", list(range(len(LABELS)))) if shared else None,
            "raw_agreement": (sum(x == y for x, y in zip(a, b)) / len(shared)) if shared else None,
        })
    per_judge = {}
    for j in judges:
        keys = [k for k in labels[j] if k in data["gold"]]
        vs_gold = classification([data["gold"][k] for k in keys], [labels[j][k] for k in keys]) if keys else None
        human = None
        ref = data["reference_claims"].get(j)
        if ref:
            items = {rid: scale_scores([lbl for lbl, _ in v], [c for _, c in v]) for rid, v in ref.items()}
            human = human_agreement_scores(items, data["records"])
        calls = data["calls"].get(j, [])
        paid = [c for c in calls if not c["cached"]]
        costs = [c["cost_usd"] for c in paid if c["cost_usd"] is not None]
        per_judge[j] = {
            "family": families.get(j),
            "claims": len(labels[j]),
            "errors": sum(1 for v in labels[j].values() if v == JUDGE_ERROR),
            "vs_gold": {"n": vs_gold["n"], "accuracy": vs_gold["accuracy"], "macro_f1": vs_gold["macro_f1"]} if vs_gold else None,
            "vs_humans": human,
            "calls": len(paid),
            "cost_usd": sum(costs) if costs else (0.0 if paid else None),
            "mean_latency_s": mean(c["latency_s"] for c in paid) if paid else None,
        }
    return {
        "runs": [str(d) for d in run_dirs],
        "judges": judges,
        "pairwise": pairwise,
        "per_judge": per_judge,
        "self_preference": self_preference(data),
    }


def self_preference(data: dict) -> list[dict]:
    labels, families, answer_family = data["labels"], data["families"], data["answer_family"]
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
