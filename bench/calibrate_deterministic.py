"""Calibrate the deterministic judge on labelled data, report it on data it was not calibrated on.

    python bench/calibrate_deterministic.py [--data ../shared/data] [--write judge/data/deterministic.yaml]

Data (read from ``--data``; nothing is copied into the package):

- Hebrew answers (``he_model_answers_sample.jsonl`` against ``he_qa_sample.json``): every gold claim with
  its 4-way label; folds are records (4 folds), so no record's claims are both fitted and scored;
- WiCE test (``external/wice/claim_test.jsonl``): 3-way labels; 2 folds by a hash of the claim id;
- FaithBench (``external/faithbench/batch_*.json``): summary sentences, "not supported" when any annotator
  marked a span inside them; used for triage precision only (no 4-way labels).

Every claim is searched (``k`` candidates, the run default), checked (numbers aligned by context, names,
conflicts in the whole source), and reduced to the features of :mod:`judge.stages.support`. The thresholds
are fitted by grid search, maximising macro-F1 (Hebrew) or accuracy (WiCE), on a score smoothed over each
grid point's neighbours (a lone lucky point on little data is not chosen). Reported figures are pooled
held-out predictions (each claim predicted by values fitted on the other folds); the values written to the
config are then fitted on all the data of their profile. Baselines in the same run: the previous rule
(best-candidate score >= 0.8 supported, < 0.5 unsupported, a number mismatch with the best candidate
contradicted) and the majority label.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.ndimage import uniform_filter

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from judge.datasets import load
from judge.metrics.classification import classification
from judge.metrics.free import EvidenceCeiling
from judge.models import LABELS
from judge.pipeline import candidates
from judge.runs.config import SearchSection
from judge.search import Index
from judge.stages.checks import check_claim
from judge.stages.support import (
    PARAMS_FILE,
    RuleParams,
    SupportFeatures,
    decide,
    free_supported,
    support_features,
)
from judge.text import split_sentences

GRID = {
    "unsupported_below": [round(x, 2) for x in np.arange(0.20, 0.66, 0.05)],
    "supported_min_coverage": [round(x, 2) for x in np.arange(0.50, 0.96, 0.05)],
    "supported_max_run": [0, 1, 2, 3, 4],
    "contradict_missing_number_min_coverage": [0.4, 0.6, 0.8, 1.01],
    "contradict_mismatch": [True, False],
    "partial_on_added_connective": [True, False],
    "supported_max_tail_run": [0, 1, 2, 99],
}
LABEL_INDEX = {lbl: i for i, lbl in enumerate(LABELS)}


@dataclass
class Item:
    dataset: str
    group: str  # the unit folds are drawn by (a record, a claim)
    text: str
    label: str
    language: str
    features: SupportFeatures | None = None
    triage: bool = False  # triage would settle it "supported"
    old_label: str = ""  # the previous rule's label
    gold_sets: list = field(default_factory=list)  # alternative gold support sets: [[(doc_id, start, end)]]
    offered: list = field(default_factory=list)  # the candidates' spans, as offered to the judges
    # WiCE and FaithBench have no "contradicted": their "not supported" holds contradictions too
    collapse_contradicted: bool = False

    def seen_as(self, label: str) -> str:
        """A predicted label as this dataset's labels can tell it."""
        return "unsupported" if self.collapse_contradicted and label == "contradicted" else label


def _featurize(item: Item, sources: dict, indexes: list[Index], search: SearchSection) -> Item:
    found = candidates(indexes, item.text, search)  # what a run's judges are shown, top k or by budget
    checks = check_claim(item.text, found, sources)
    item.features = support_features(item.text, found, checks)
    item.triage = free_supported(item.features)
    item.old_label = _old_rule(found, checks)
    item.offered = [(p.doc_id, p.start_char, p.end_char) for c in found for p in c.parts]
    return item


def _old_rule(found, checks) -> str:
    """The rule this calibration replaces (the same-run baseline)."""
    score = found[0].score if found else 0.0
    if found and found[0].method in ("exact", "normalized", "folded"):
        return "supported"  # triage
    if not found or score < 0.5:
        return "unsupported"
    if checks.numbers_mismatched:
        return "contradicted"
    if score >= 0.8 and not (checks.numbers_missing or checks.names_missing):
        return "supported"
    return "partially_supported"


def hebrew_items(data: Path, search: SearchSection) -> list[Item]:
    records = {r.id: r for r in load(data / "he_qa_sample.json")}
    out = []
    for a in load(data / "he_model_answers_sample.jsonl"):
        r = records[a.record_id]
        sources = {s.doc_id: s.text for s in r.sources}
        indexes = [Index(s.text, s.doc_id) for s in r.sources]
        for g in a.gold_claims:
            spans = [(s.doc_id or r.sources[0].doc_id, s.start_char, s.end_char) for s in g.support]
            out.append(_featurize(Item("hebrew answers", r.id, g.text, g.label, "he", gold_sets=[spans]), sources, indexes, search))
    return out


def wice_items(path: Path, search: SearchSection) -> list[Item]:
    out = []
    for r in load(path):
        sources = {s.doc_id: s.text for s in r.sources}
        indexes = [Index(s.text, s.doc_id) for s in r.sources]
        for c in r.claims:
            sets = [[(a.doc_id or r.sources[0].doc_id, a.start_char, a.end_char) for a in g] for g in c.gold_sets()]
            item = Item("WiCE test", r.id, c.text, c.label, "en", gold_sets=sets, collapse_contradicted=True)
            out.append(_featurize(item, sources, indexes, search))
    return out


def faithbench_items(folder: Path, search: SearchSection) -> list[Item]:
    out = []
    for path in sorted(folder.glob("batch_*.json")):
        for s in json.loads(path.read_text(encoding="utf-8"))["samples"]:
            source, summary = s["source"], s["summary"]
            marked = [(a["summary_start"], a["summary_end"]) for a in s["annotations"] if a.get("summary_start") is not None]
            indexes = [Index(source, "source")]
            for sent in split_sentences(summary):
                bad = any(a < sent.end and sent.start < b for a, b in marked)
                label = "unsupported" if bad else "supported"
                item = Item("FaithBench", str(s["sample_id"]), sent.text, label, "en", collapse_contradicted=True)
                out.append(_featurize(item, {"source": source}, indexes, search))
    return out


# -- fitting --------------------------------------------------------------------------------------------------
def _arrays(items: list[Item]) -> dict[str, np.ndarray]:
    f = [i.features for i in items]
    return {
        "verbatim": np.array([x.verbatim for x in f]),
        "coverage": np.array([x.coverage for x in f]),
        "max_run": np.array([x.max_run for x in f]),
        "tail_run": np.array([x.tail_run for x in f]),
        "numbers_missing": np.array([x.numbers_missing > 0 for x in f]),
        "mismatches": np.array([x.mismatches > 0 for x in f]),
        "names_missing": np.array([x.names_missing > 0 for x in f]),
        "conflicts": np.array([x.conflicts > 0 for x in f]),
        "connective": np.array([bool(x.added_connectives) for x in f]),
        "gold": np.array([LABEL_INDEX[i.label] for i in items]),
        "collapse": np.array([i.collapse_contradicted for i in items]),
    }


def _predict(a: dict[str, np.ndarray], p: dict) -> np.ndarray:
    """Vectorised :func:`judge.stages.support.decide` (a test checks the two agree)."""
    S, P, U, C = (LABEL_INDEX[x] for x in ("supported", "partially_supported", "unsupported", "contradicted"))
    cov = a["coverage"]
    conditions = [
        a["conflicts"],
        a["verbatim"],
        a["mismatches"] & p["contradict_mismatch"],
        cov < p["unsupported_below"],
        a["numbers_missing"] & (cov >= p["contradict_missing_number_min_coverage"]),
        (cov >= p["supported_min_coverage"]) & (a["max_run"] <= p["supported_max_run"]) & (a["tail_run"] <= p["supported_max_tail_run"]) & ~a["numbers_missing"] & ~a["names_missing"]
        & ~(a["connective"] & p["partial_on_added_connective"]),
    ]
    pred = np.select(conditions, [C, S, C, U, C, S], default=P)
    return np.where(a["collapse"] & (pred == C), U, pred)


def _objective(gold: np.ndarray, pred: np.ndarray, metric: str) -> float:
    if metric == "accuracy":
        return float((gold == pred).mean()) if len(gold) else 0.0
    f1s = []
    for lbl in range(len(LABELS)):
        tp = int(((pred == lbl) & (gold == lbl)).sum())
        npred, ngold = int((pred == lbl).sum()), int((gold == lbl).sum())
        if npred == 0 and ngold == 0:
            continue
        f1s.append(2 * tp / (npred + ngold) if npred + ngold else 0.0)
    return float(np.mean(f1s)) if f1s else 0.0


def fit(items: list[Item], metric: str) -> RuleParams:
    """Grid search on ``items``; the best point of the neighbour-smoothed objective."""
    a = _arrays(items)
    names = list(GRID)
    shape = tuple(len(GRID[n]) for n in names)
    scores = np.zeros(shape)
    for idx in itertools.product(*(range(s) for s in shape)):
        p = {n: GRID[n][i] for n, i in zip(names, idx)}
        scores[idx] = _objective(a["gold"], _predict(a, p), metric)
    smooth = uniform_filter(scores, size=3, mode="nearest")
    best = np.unravel_index(np.argmax(smooth + 1e-9 * scores), shape)  # ties: the better raw score
    return RuleParams(**{n: GRID[n][i] for n, i in zip(names, best)})


def folds(items: list[Item], n: int, by_hash: bool) -> list[int]:
    groups = sorted({i.group for i in items})
    if by_hash:
        return [int(hashlib.sha256(i.group.encode()).hexdigest(), 16) % n for i in items]
    at = {g: k % n for k, g in enumerate(groups)}
    return [at[i.group] for i in items]


def heldout(items: list[Item], n: int, by_hash: bool, metric: str) -> tuple[list[str], list[RuleParams]]:
    """Each item's label from parameters fitted on the other folds."""
    fold_of = folds(items, n, by_hash)
    pred: list[str | None] = [None] * len(items)
    fitted = []
    for k in range(n):
        train = [i for i, f in zip(items, fold_of) if f != k]
        params = fit(train, metric)
        fitted.append(params)
        for j, (item, f) in enumerate(zip(items, fold_of)):
            if f == k:
                pred[j] = item.seen_as(decide(item.features, params)[0])
    return pred, fitted


def triage_report(items: list[Item]) -> dict:
    settled = [i for i in items if i.triage]
    right = sum(i.label == "supported" for i in settled)
    stopped = [i for i in items if i.features.verbatim and i.features.conflicts]
    return {
        "claims": len(items),
        "settled": len(settled),
        "coverage": len(settled) / len(items) if items else None,
        "precision": right / len(settled) if settled else None,
        "verbatim_sent_to_judge_for_conflicts": len(stopped),
        "of_which_gold_not_supported": sum(i.label != "supported" for i in stopped),
    }


def ceiling_report(items: list[Item], predicted: list[str]) -> dict | None:
    """The evidence ceiling of the gold-supported claims, beside the held-out rule's accuracy on them."""
    ceiling = EvidenceCeiling()
    for item, label in zip(items, predicted):
        if item.label == "supported":
            ceiling.add(item.gold_sets, item.offered, label)
    return ceiling.result()


def _fmt(x) -> str:
    return "-" if x is None else f"{x:.3f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--budget-share", type=float, default=None, help="offer candidates within this share of each record's source tokens (search.budget_share) instead of the top k")
    ap.add_argument("--write", type=Path, default=None, help=f"write the fitted values (e.g. {PARAMS_FILE.relative_to(ROOT)})")
    args = ap.parse_args(argv)
    search = SearchSection(k=args.k, budget_share=args.budget_share)
    if args.budget_share is not None and args.write:
        print("--write fits the shipped values on top-k candidates (the run default); not with --budget-share", file=sys.stderr)
        return 2
    if not (args.data / "he_qa_sample.json").exists():
        print(f"{args.data}: no he_qa_sample.json (pass --data)", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    he = hebrew_items(args.data, search)
    wice = wice_items(args.data / "external" / "wice" / "claim_test.jsonl", search)
    fb = faithbench_items(args.data / "external" / "faithbench", search)
    featurize_s = time.perf_counter() - t0

    report: dict = {"featurize_seconds": round(featurize_s, 1)}
    he_pred, he_folds = heldout(he, 4, by_hash=False, metric="macro_f1")
    wice_pred, wice_folds = heldout(wice, 2, by_hash=True, metric="accuracy")
    # the default profile (languages with no data of their own): both sets pooled, folds as above
    pooled = he + wice
    pooled_pred, _ = heldout(pooled, 4, by_hash=True, metric="macro_f1")
    rows = []
    for name, items, pred in (("hebrew answers (4 folds by record)", he, he_pred), ("WiCE test (2 folds by claim)", wice, wice_pred)):
        gold = [i.label for i in items]
        new = classification(gold, pred)
        old = classification(gold, [i.seen_as(i.old_label) for i in items])
        majority = Counter(gold).most_common(1)[0][0]
        base = classification(gold, [majority] * len(gold))
        rows.append((name, new, old, base))
        report[name] = {"heldout": new, "previous_rule": old, "majority": {"label": majority, **base}}
    pooled_gold = [i.label for i in pooled]
    report["default profile (pooled, 4 folds)"] = {"heldout": classification(pooled_gold, pooled_pred)}
    report["ceiling"] = {"hebrew answers": ceiling_report(he, he_pred), "WiCE test": ceiling_report(wice, wice_pred)}
    report["triage"] = {"hebrew answers": triage_report(he), "WiCE test": triage_report(wice), "FaithBench": triage_report(fb)}
    report["folds"] = {"he": [p.model_dump() for p in he_folds], "en": [p.model_dump() for p in wice_folds]}

    print(f"featurised {len(he)} + {len(wice)} + {len(fb)} claims in {featurize_s:.1f} s\n")
    print("| data | rule | accuracy | macro-F1 | P(supported) | P(partial) | P(unsupported) | P(contradicted) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, new, old, base in rows:
        for rule, c in (("calibrated, held out", new), ("score thresholds 0.8/0.5 (before), same checks", old), ("majority label", base)):
            pl = c["per_label"]
            print(f"| {name} | {rule} | {_fmt(c['accuracy'])} | {_fmt(c['macro_f1'])} | " + " | ".join(_fmt(pl[lbl]["precision"]) for lbl in LABELS) + " |")
    print("\n| data | claims | triage settles | coverage | precision | verbatim stopped by a conflict (gold not supported) |")
    print("|---|---|---|---|---|---|")
    for name, t in report["triage"].items():
        print(f"| {name} | {t['claims']} | {t['settled']} | {_fmt(t['coverage'])} | {_fmt(t['precision'])} | {t['verbatim_sent_to_judge_for_conflicts']} ({t['of_which_gold_not_supported']}) |")

    print("\n| data | gold-supported claims with spans | evidence ceiling (whole support offered) | deterministic judge says supported (held out) | ... when the support was offered |")
    print("|---|---|---|---|---|")
    for name, c in report["ceiling"].items():
        if c:
            print(f"| {name} | {c['claims']} | {_fmt(c['ceiling'])} | {_fmt(c['judges_accuracy'])} | {_fmt(c['judges_accuracy_when_offered'])} |")

    if args.write:
        import yaml

        profiles = {"he": fit(he, "macro_f1"), "en": fit(wice, "accuracy"), "default": fit(pooled, "macro_f1")}
        doc = {
            "profiles": {k: v.model_dump() for k, v in profiles.items()},
            "calibration": {
                "command": "python bench/calibrate_deterministic.py --write judge/data/deterministic.yaml",
                "data": {"he": "he_model_answers_sample.jsonl (117 claims)", "en": "WiCE claim_test.jsonl (358 claims)", "default": "both"},
                "k": args.k,
                "heldout": {
                    "he_macro_f1": round(report["hebrew answers (4 folds by record)"]["heldout"]["macro_f1"], 4),
                    "wice_accuracy": round(report["WiCE test (2 folds by claim)"]["heldout"]["accuracy"], 4),
                },
            },
        }
        header = "# Learned by bench/calibrate_deterministic.py (see its docstring); do not edit by hand, rerun it.\n"
        args.write.write_text(header + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
        print(f"\nwrote {args.write}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
