"""``judge agreement``: the judges of one panel run, or of several runs over the same claims (``judge
rejudge``), against each other, gold, humans and their own family (judge.metrics.judges); and the same
as the ``judge_agreement`` score section of a panel run."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pydantic import RootModel

from judge.controls.health import judge_health, observations
from judge.metrics.judges import disagreements, pairwise, per_judge, self_preference
from judge.runs.run import Run
from judge.metrics.gold import matched_gold
from judge.scoring.base import AnswerItem, Block, Section, Table
from judge.scoring.human import human_agreement_scores
from judge.verdicts import REFERENCE_MODEL, TRIAGE, scale_scores


class Collected:
    """Every judge's label per claim, answer families, gold labels, reference-answer verdicts and calls."""

    def __init__(self):
        self.labels: dict[str, dict[tuple, str]] = defaultdict(dict)
        self.rationales: dict[str, dict[tuple, str]] = defaultdict(dict)
        self.families: dict[str, str] = {}
        self.answer_family: dict[tuple, str] = {}
        self.gold: dict[tuple, str] = {}
        self.reference_claims: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))  # judge -> record -> [(label, cites)]
        self.records: dict = {}
        self.calls: dict[str, list[dict]] = defaultdict(list)
        self.runs: list[str] = []
        self.controls: dict[tuple[str, str], object] = {}  # (judge, control id) -> its verdict on that control
        self.triaged: set[tuple] = set()  # claims triage settled: no judge ruled on them, so none counts in agreement

    def add(self, item: AnswerItem, panel: list[str]) -> None:
        r, a = item.result, item.answer
        self.controls.update({(o.judge, o.control_id): o for o in observations(r)})  # once per record: keyed
        answer_key = (r.record_id, a.model, a.answer)
        self.answer_family[answer_key] = a.family
        for claim, g in item.matched.pairs if item.matched else []:
            if g.label is not None:
                self.gold[answer_key + (claim.text,)] = g.label
        for c in a.claims:
            key = answer_key + (c.text,)
            triaged = any(v.how == TRIAGE for v in c.verdicts)
            for v in c.verdicts:
                if v.how == TRIAGE:
                    continue
                self.labels[v.judge][key] = v.label
                self.rationales[v.judge][key] = v.rationale or v.error or ""
                self.families[v.judge] = v.family
            if triaged:  # settled free, before any judge: counted apart, never as the judges agreeing
                self.triaged.add(key)
            if a.model == REFERENCE_MODEL:
                for v in c.verdicts:
                    if v.how != TRIAGE:
                        self.reference_claims[v.judge][r.record_id].append((v.label, bool(v.evidence)))

    def add_run(self, run: Run, records: dict) -> None:
        self.runs.append(str(run.path))
        self.records.update(records)
        for call in run.calls:
            self.calls[call["model"]].append(call)

    def report(self, with_disagreements: bool = False) -> dict:
        """The agreement report; ``with_disagreements`` adds every claim the judges disagree on (for
        ``judge agreement``; scores.json keeps the numbers only)."""
        vs_humans = {}
        for j, ref in self.reference_claims.items():
            items = {rid: scale_scores([lbl for lbl, _ in v], [c for _, c in v]) for rid, v in ref.items()}
            vs_humans[j] = human_agreement_scores(items, self.records) if ref else None
        judges = per_judge(self.labels, self.families, self.gold, self.calls, vs_humans)
        health = {h.judge: h for h in judge_health(list(self.controls.values())).judges}
        for j, v in judges.items():  # accuracy on control claims: comparing judges needs no gold labels
            h = health.get(j)
            v["controls"] = {
                "n": h.controls, "accuracy": h.accuracy, "accuracy_ci95": h.accuracy_ci95, "verdict": h.verdict, "status": h.status,
                "by_label": {r.label: {"controls": r.controls, "correct": r.correct, "recall": r.recall} for r in h.by_label},
                "by_kind": {r.label: {"controls": r.controls, "correct": r.correct, "recall": r.recall} for r in h.by_kind},
            } if h else None
        out = {
            "runs": self.runs,
            "judges": sorted(self.labels),
            # claims triage settled as supported with no judge call: left out of every judge's numbers above
            "triaged_claims": len(self.triaged),
            "pairwise": pairwise(self.labels),
            "per_judge": judges,
            "self_preference": self_preference(self.labels, self.families, self.answer_family),
        }
        if with_disagreements:
            out["disagreements"] = disagreements(self.labels, self.rationales, self.gold)
        return out


def judge_agreement(runs: list[Run]) -> dict:
    data = Collected()
    for run in runs:
        records, recorded = run.gold_inputs
        data.add_run(run, records)
        panel = run.config.adjudicate.judges
        for r in run.results():
            for a in r.answers:
                data.add(AnswerItem(r, a, records.get(r.record_id), matched_gold(records.get(r.record_id), a, recorded)), panel)
    return data.report(with_disagreements=True)


class AgreementReport(RootModel[dict[str, Any]]):
    """Pairwise agreement, per judge (family, errors, against gold and humans, calls, cost, latency) and
    self-preference; its parts are in judge.metrics.judges."""


class JudgeAgreement(Section):
    """Only for a run with a panel of two judges or more."""

    key, title = "judge_agreement", "Agreement between judges"

    def __init__(self, panel: list[str]):
        self.data = Collected()
        self.panel = panel  # the run's judges (a claim triage settled counts for none of them)

    def add(self, item):
        self.data.add(item, self.panel)

    def result(self, context):
        run = context["run"]
        self.data.add_run(run, context["records"])
        return AgreementReport(self.data.report())

    @classmethod
    def block(cls, value, scores):
        if not value or len(value["judges"]) < 2:
            return None
        tables = [Table(["judge a", "judge b", "claims", "Cohen's kappa", "alpha (nominal)", "raw agreement"],
                        [[p["a"], p["b"], p["claims"], p["cohen_kappa"], p["alpha_nominal"], p["raw_agreement"]] for p in value["pairwise"]])]
        rows = []
        for j, v in value["per_judge"].items():
            gold = v["vs_gold"] or {}
            ctl = v.get("controls") or {}
            rows.append([j, v["family"] or "", v["claims"], v["errors"], gold.get("accuracy"), gold.get("macro_f1"), ctl.get("accuracy"), ctl.get("n", 0),
                         v["calls"], v["cost_usd"], v["mean_latency_s"]])
        tables.append(Table(["judge", "family", "claims", "errors", "accuracy vs gold", "macro-F1", "accuracy on controls", "controls", "calls", "cost $",
                             "mean latency s"], rows))
        prefs = [p for p in value["self_preference"] if p["own_family_answers"]]
        if prefs:
            tables.append(Table(["judge", "family", "own-family answers", "its faithfulness", "other families' faithfulness", "self-preference"],
                                [[p["judge"], p["family"], p["own_family_answers"], p["faithfulness_by_judge"], p["faithfulness_by_other_families"], p["self_preference"]] for p in prefs]))
        return Block(cls.title, tables)
