"""Judges against gold claim labels as a user choosing a judge needs it: per judge the not-grounded recall (what
a grounding check is for), the precision of its flags, recall per label, accuracy, macro-F1 and kappa, each with
a 95% interval; every pair by McNemar's exact test. Accuracy alone can tie a judge that flags every not-grounded
claim with one that flags half of them; these figures do not."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

from pydantic import BaseModel

from judge.metrics.intervals import exact_interval

from judge.metrics.agreement import cohen_kappa_counts
from judge.metrics.classification import classification_counts
from judge.metrics.paired import counts_ci, mcnemar
from judge.scoring.base import Block, Section, Table
from judge.verdicts import LABELS, NOT_GROUNDED, PANEL, TRIAGE, is_judged


class Share(BaseModel):
    k: int
    n: int
    value: float | None
    ci95: list[float] | None


def share(k: int, n: int) -> Share:
    return Share(k=k, n=n, value=k / n if n else None, ci95=list(exact_interval(k, n)) if n else None)


class JudgeVsGold(BaseModel):
    judge: str
    claims: int
    not_grounded_recall: Share  # gold not grounded, flagged not grounded by the judge
    flag_precision: Share  # flagged not grounded by the judge, not grounded in gold
    accuracy: Share
    macro_f1: float | None
    macro_f1_ci95: list[float] | None
    kappa: float | None
    kappa_ci95: list[float] | None
    recall_by_label: dict[str, Share]


class JudgePairVsGold(BaseModel):
    a: str
    b: str
    claims: int
    only_a_right: int  # grounded or not, as the gold says
    only_b_right: int
    p_value: float  # McNemar's exact test
    better: str | None  # the judge that is right more often, where p < 0.05


class JudgesVsGoldScores(BaseModel):
    judges: list[JudgeVsGold]
    pairs: list[JudgePairVsGold]


def _flag(label: str) -> bool:
    return label in NOT_GROUNDED


def vs_gold(name: str, pairs: list[tuple[str, str]]) -> JudgeVsGold:
    """One judge's (gold, predicted) pairs."""
    ng = [p for g, p in pairs if _flag(g)]
    flagged = [g for g, p in pairs if _flag(p)]

    cells = Counter(pairs)

    def macro(c):
        return classification_counts(c)["macro_f1"]

    return JudgeVsGold(
        judge=name, claims=len(pairs), not_grounded_recall=share(sum(map(_flag, ng)), len(ng)), flag_precision=share(sum(map(_flag, flagged)), len(flagged)),
        accuracy=share(sum(g == p for g, p in pairs), len(pairs)), macro_f1=macro(cells) if pairs else None, macro_f1_ci95=counts_ci(cells, macro),
        kappa=cohen_kappa_counts(cells), kappa_ci95=counts_ci(cells, cohen_kappa_counts),
        recall_by_label={lbl: share(sum(p == lbl for g, p in pairs if g == lbl), sum(g == lbl for g, _ in pairs)) for lbl in LABELS if any(g == lbl for g, _ in pairs)})


def pair_vs_gold(a: str, b: str, rows: list[tuple[str, dict[str, str]]]) -> JudgePairVsGold:
    both = [(g, v[a], v[b]) for g, v in rows if a in v and b in v and is_judged(v[a]) and is_judged(v[b])]
    only_a = sum(1 for g, x, y in both if _flag(x) == _flag(g) and _flag(y) != _flag(g))
    only_b = sum(1 for g, x, y in both if _flag(y) == _flag(g) and _flag(x) != _flag(g))
    p = mcnemar(only_a, only_b)
    better = (a if only_a > only_b else b) if p < 0.05 else None
    return JudgePairVsGold(a=a, b=b, claims=len(both), only_a_right=only_a, only_b_right=only_b, p_value=round(p, 6), better=better)


class JudgesVsGold(Section):
    key, title = "judges_vs_gold", "Judges against gold claim labels, with intervals"
    needs = frozenset({"gold_labels"})

    def __init__(self):
        self.rows: list[tuple[str, dict[str, str]]] = []  # (gold label, {judge or panel: label}) per gold-labelled claim

    def add(self, item):
        for claim, gold in item.matched.pairs if item.matched else []:
            if gold.label is None:
                continue
            labels = {PANEL: claim.label}
            for v in claim.verdicts:
                labels[TRIAGE if v.how == TRIAGE else v.judge] = v.label
            self.rows.append((gold.label, labels))

    def result(self, context):
        if not self.rows:
            return None
        names = list(dict.fromkeys(n for _, v in self.rows for n in v))
        judges = [vs_gold(n, [(g, v[n]) for g, v in self.rows if n in v]) for n in names]
        models = [n for n in names if n not in (PANEL, TRIAGE)]
        return JudgesVsGoldScores(judges=judges, pairs=[pair_vs_gold(a, b, self.rows) for a, b in combinations(models, 2)])

    @classmethod
    def block(cls, value, scores):
        if not value:
            return None

        def cell(s):
            return "-" if not s or s["value"] is None else f"{s['value']:.3f} [{s['ci95'][0]:.2f}, {s['ci95'][1]:.2f}] ({s['k']}/{s['n']})"

        def est(v, ci):
            return "-" if v is None else f"{v:.3f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")

        rows = [[j["judge"], j["claims"], cell(j["not_grounded_recall"]), cell(j["flag_precision"]), cell(j["accuracy"]),
                 est(j["macro_f1"], j["macro_f1_ci95"]), est(j["kappa"], j["kappa_ci95"])] for j in value["judges"]]
        tables = [Table(["judge", "claims", "not-grounded recall [95% CI]", "flag precision [95% CI]", "accuracy [95% CI]", "macro-F1 [95% CI]",
                         "kappa with gold [95% CI]"], rows,
                        note="Not-grounded recall: the share of gold not-grounded claims the judge flags; flag precision: the share of its flags "
                             "that gold calls not grounded (exact intervals); macro-F1 and kappa: bootstrap over claims.")]
        labels = list(dict.fromkeys(lbl for j in value["judges"] for lbl in j["recall_by_label"]))
        tables.append(Table(["judge", *(f"{lbl} recall" for lbl in labels)], [[j["judge"], *(cell(j["recall_by_label"].get(lbl)) for lbl in labels)]
                                                                             for j in value["judges"]], title="Recall per gold label:"))
        if value["pairs"]:
            tables.append(Table(["A vs B", "claims", "only A right", "only B right", "McNemar p", "better"],
                                [[f"{p['a']} vs {p['b']}", p["claims"], p["only_a_right"], p["only_b_right"], p["p_value"], p["better"] or "cannot tell"]
                                 for p in value["pairs"]], title="Judges compared on the same claims (grounded or not, against gold):"))
        return Block(cls.title, tables)
