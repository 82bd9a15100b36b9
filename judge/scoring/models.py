"""Models under test compared on the same records: "which model is better, and can we tell?" Per model its rates
with bootstrap intervals over records; per pair the paired difference, records each is better on and the sign
test; a ranking by faithfulness that says where it cannot tell models apart (:func:`pair_verdict`).
"""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations
from pathlib import Path

from pydantic import BaseModel

from judge.metrics.paired import mean_ci, ratio_ci, sign_test_two_sided
from judge.scoring.base import Block, Section, Table
from judge.verdicts import CREDIT, HALLUCINATED, is_judged

ALPHA = 0.05
METRICS = {"faithfulness": True, "hallucination_rate": False}  # metric -> higher is better


def counts(claims) -> tuple[float, int, int]:
    """(credit, judged, hallucinated) of one answer's claims."""
    judged = [c.label for c in claims if is_judged(c.label)]
    return float(sum(CREDIT[lbl] for lbl in judged)), len(judged), sum(lbl in HALLUCINATED for lbl in judged)


def rate_of(row: tuple[float, int, int], metric: str) -> float:
    return (row[0] if metric == "faithfulness" else row[2]) / row[1]


class ModelRates(BaseModel):
    model: str
    records: int
    claims: int
    faithfulness: float | None
    faithfulness_ci95: list[float] | None
    hallucination_rate: float | None
    hallucination_rate_ci95: list[float] | None


class PairMetric(BaseModel):
    a: float
    b: float
    delta: float  # mean over the shared records of rate B - rate A
    ci95: list[float] | None
    a_better: int
    b_better: int
    same: int
    p_value: float  # two-sided exact sign test
    verdict: str  # "A better", "B better", "tied", or "unclear" (the sign test and the interval disagree): pair_verdict


class Pair(BaseModel):
    a: str
    b: str
    records: int
    metrics: dict[str, PairMetric]


class Ranked(BaseModel):
    rank: int
    model: str
    faithfulness: float | None
    tied_with: list[str]


class ModelComparisonScores(BaseModel):
    models: list[ModelRates]
    pairs: list[Pair]
    ranking: list[Ranked]


def model_rates(model: str, rows: dict[str, tuple[float, int, int]]) -> ModelRates:
    judged = [r for r in rows.values() if r[1]]
    n = sum(r[1] for r in judged)
    den = [r[1] for r in judged]
    return ModelRates(
        model=model, records=len(rows), claims=n,
        faithfulness=sum(r[0] for r in judged) / n if n else None, faithfulness_ci95=ratio_ci([r[0] for r in judged], den),
        hallucination_rate=sum(r[2] for r in judged) / n if n else None, hallucination_rate_ci95=ratio_ci([r[2] for r in judged], den))


def pair_verdict(p: float, ci: list[float] | None, a_better: int, b_better: int, higher: bool = True) -> str:
    """"A better" or "B better" when the sign test (p < 0.05) and the paired interval (excluding 0) both tell
    them apart on the same side; "tied" when neither does; "unclear" when they disagree (never "tied" beside an
    interval without 0). ``ci``: of B - A; ``higher``: a higher rate is better."""
    holds_zero = ci is None or ci[0] <= 0 <= ci[1]
    sign_tells = p < ALPHA and a_better != b_better
    if holds_zero and not sign_tells:
        return "tied"
    side = "B better" if b_better > a_better else "A better"
    if not holds_zero and sign_tells and ((ci[0] > 0) == higher) == (side == "B better"):
        return side
    return "unclear"


def pair(name_a: str, a: dict[str, tuple], name_b: str, b: dict[str, tuple]) -> Pair:
    """Two models on the records both have a judged claim on: paired per record."""
    shared = [rid for rid in a if rid in b and a[rid][1] and b[rid][1]]
    out = {}
    for metric, higher in METRICS.items():
        ra, rb = [rate_of(a[r], metric) for r in shared], [rate_of(b[r], metric) for r in shared]
        diffs = [y - x for x, y in zip(ra, rb)]
        b_better = sum(1 for d in diffs if (d > 0) == higher and d != 0)
        a_better = sum(1 for d in diffs if (d < 0) == higher and d != 0)
        p = sign_test_two_sided(a_better, b_better)
        ci = mean_ci(diffs)
        verdict = pair_verdict(p, ci, a_better, b_better, higher)
        out[metric] = PairMetric(a=sum(ra) / len(ra) if ra else 0.0, b=sum(rb) / len(rb) if rb else 0.0, delta=sum(diffs) / len(diffs) if diffs else 0.0,
                                 ci95=ci, a_better=a_better, b_better=b_better, same=len(diffs) - a_better - b_better, p_value=round(p, 6), verdict=verdict)
    return Pair(a=name_a, b=name_b, records=len(shared), metrics=out)


def ranking(models: list[ModelRates], pairs: list[Pair]) -> list[Ranked]:
    """By faithfulness, best first; a model shares the rank of the one above it when their pair is tied."""
    order = sorted(models, key=lambda m: -(m.faithfulness if m.faithfulness is not None else -1))
    tied = defaultdict(set)
    for p in pairs:
        if p.metrics["faithfulness"].verdict in ("tied", "unclear"):  # not told apart: they share a rank
            tied[p.a].add(p.b)
            tied[p.b].add(p.a)
    out, rank = [], 0
    for i, m in enumerate(order):
        if i == 0 or order[i - 1].model not in tied[m.model]:
            rank = i + 1
        out.append(Ranked(rank=rank, model=m.model, faithfulness=m.faithfulness, tied_with=sorted(tied[m.model])))
    return out


def comparison(rows: dict[str, dict[str, tuple]]) -> ModelComparisonScores:
    models = [model_rates(m, r) for m, r in rows.items()]
    pairs = [pair(x, rows[x], y, rows[y]) for x, y in combinations(rows, 2)]
    return ModelComparisonScores(models=models, pairs=pairs, ranking=ranking(models, pairs))


class ModelComparison(Section):
    key, title = "model_comparison", "Models under test compared on the same records"

    def __init__(self):
        self.rows: dict[str, dict[str, tuple]] = defaultdict(dict)

    def add(self, item):
        c, j, h = counts(item.answer.claims)
        old = self.rows[item.answer.model].get(item.result.record_id, (0.0, 0, 0))
        self.rows[item.answer.model][item.result.record_id] = (old[0] + c, old[1] + j, old[2] + h)

    def result(self, context):
        return comparison(dict(self.rows)) if len(self.rows) > 1 else None

    @classmethod
    def block(cls, value, scores):
        if not value:
            return None
        ranks = {r["model"]: r for r in value["ranking"]}
        rows = [[ranks[m["model"]]["rank"], m["model"], m["records"], m["claims"], _with_ci(m["faithfulness"], m["faithfulness_ci95"]),
                 _with_ci(m["hallucination_rate"], m["hallucination_rate_ci95"]), ", ".join(ranks[m["model"]]["tied_with"]) or "-"]
                for m in sorted(value["models"], key=lambda m: ranks[m["model"]]["rank"])]
        tables = [Table(["rank", "model", "records", "claims", "faithfulness [95% CI]", "hallucination rate [95% CI]", "not told apart from"], rows,
                        note="95% intervals: bootstrap over records (seeded). Tied: neither the paired sign test (p < 0.05) nor the paired interval "
                             "(excluding 0) tells them apart; unclear: one does, the other does not. Either way they share a rank.")]
        tables.append(Table(["A vs B", "records", "faithfulness B - A [95% CI]", "A/B better, same", "sign test p", "verdict",
                             "hallucination rate B - A [95% CI]", "verdict"], [pair_row(p) for p in value["pairs"]], title="Every pair, on the records both answered:"))
        return Block(cls.title, tables)


def _with_ci(v, ci) -> str:
    return "-" if v is None else f"{v:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def pair_row(p: dict) -> list:
    f, h = p["metrics"]["faithfulness"], p["metrics"]["hallucination_rate"]

    def delta(m):
        return f"{m['delta']:+.3f}" + (f" [{m['ci95'][0]:+.3f}, {m['ci95'][1]:+.3f}]" if m["ci95"] else "")

    return [f"{p['a']} vs {p['b']}", p["records"], delta(f), f"{f['a_better']}/{f['b_better']}, {f['same']}", f["p_value"], f["verdict"], delta(h), h["verdict"]]


def compare_models(run_a: Path | str, run_b: Path | str, model_a: str, model_b: str) -> dict:
    """Model ``model_a`` of run A against ``model_b`` of run B (the same run twice for two models of one run),
    paired on the records both answered: each one's rates with intervals, and the paired difference."""
    from judge.runs.run import Run
    from judge.runs.store import RunDirError

    sides = []
    for run_dir, model, which in ((run_a, model_a, "A"), (run_b, model_b, "B")):
        run = Run.open(run_dir)
        rows, known = {}, set()
        for r in run.results():
            for a in r.answers:
                known.add(a.model)
                if model in (a.model, a.model_name):
                    c, j, h = counts(a.claims)
                    old = rows.get(r.record_id, (0.0, 0, 0))
                    rows[r.record_id] = (old[0] + c, old[1] + j, old[2] + h)
        labels = {x for x in known if model in (x, x.split("+")[0])}
        if not rows:
            raise RunDirError(f"run {which} ({run.path}) has no answer of model {model!r} (its models under test: {', '.join(sorted(known)) or 'none'})")
        if len(labels) > 1:
            raise RunDirError(f"run {which} has answers of {model!r} under several prompt variants ({', '.join(sorted(labels))}): name one")
        sides.append((f"{model} ({which})" if model_a == model_b else model, rows, str(run.path)))
    (na, ra, pa), (nb, rb, pb) = sides
    p = pair(na, ra, nb, rb)
    if not p.records:
        raise RunDirError("the two models share no record with a judged claim: compare models over the same data")
    return {"run_a": pa, "run_b": pb, "model_a": na, "model_b": nb, "models": [model_rates(na, ra).model_dump(), model_rates(nb, rb).model_dump()],
            "pair": p.model_dump()}


def as_comparison(result: dict) -> dict:
    """:func:`compare_models`' result as the section's value (two models, their pair, their ranking)."""
    models = [ModelRates.model_validate(m) for m in result["models"]]
    p = Pair.model_validate(result["pair"])
    return ModelComparisonScores(models=models, pairs=[p], ranking=ranking(models, [p])).model_dump()
