"""The score section of the judge against human raters (through the verdict -> 0-2 rule of judge.verdicts)."""

from __future__ import annotations

from pydantic import BaseModel, RootModel

from judge.metrics.human import judge_vs_humans
from judge.models import Record
from judge.scoring.base import Block, Section, Table
from judge.verdicts import REFERENCE_MODEL, scale_scores


HUMAN_DIMENSIONS = ("faithfulness", "attribution")  # the human scales the judge's verdicts map onto


def _interval(ci: list | None) -> tuple | None:
    """A 95% interval as a table cell (reports write a pair of floats as [lo, hi])."""
    return tuple(ci) if ci else None


class JudgeVsHumans(BaseModel):
    items: int
    alpha_judge: float | None
    alpha_judge_ci95: list[float] | None = None
    alpha_human_ceiling: float | None
    alpha_human_ceiling_ci95: list[float] | None = None
    alpha_each_human: list[float | None] | None = None
    spearman_rho: float | None = None
    bootstrap: int | None = None
    seed: int | None = None
    reason: str | None = None


class HumanScores(RootModel[dict[str, JudgeVsHumans]]):
    pass


class NotComputed(BaseModel):
    reason: str


def human_agreement_scores(human_items: dict, records: dict[str, Record]) -> dict | None:
    """The judge (through the rule in judge.verdicts) against the human raters, per dimension."""
    ids = [i for i in human_items if i in records and records[i].human_ratings]
    if not ids:
        return None
    annotators = list(dict.fromkeys(h.annotator_id for i in ids for h in records[i].human_ratings))
    out = {}
    for k, dim in enumerate(HUMAN_DIMENSIONS):
        humans = [[next((getattr(h.scores, dim) for h in records[i].human_ratings if h.annotator_id == a), None) for i in ids] for a in annotators]
        judge = [human_items[i][k] for i in ids]
        out[dim] = judge_vs_humans(judge, humans, [0, 1, 2], judge_continuous=[human_items[i][2] for i in ids])
    return out


class Human(Section):
    """Where the run judged the reference answers that humans rated (``answers: {reference: true}``)."""

    key, title = "human", "The judge against human raters"
    needs = frozenset({"human_ratings"})
    reason = "the run did not judge the reference answers that humans rated (answers: {reference: true})"

    def __init__(self):
        self.items: dict[str, tuple] = {}

    def add(self, item):  # only where humans rated the record: the rest is never looked at
        if item.answer.model == REFERENCE_MODEL and item.record is not None and item.record.human_ratings:
            self.items[item.result.record_id] = scale_scores([c.label for c in item.answer.claims], [bool(c.evidence) for c in item.answer.claims])

    def result(self, context):
        human = human_agreement_scores(self.items, context["records"])
        return HumanScores.model_validate(human) if human else NotComputed(reason=self.reason)

    @classmethod
    def block(cls, value, scores):
        value = value or {}
        if "reason" in value:
            return Block(cls.title, text=f"Not computed: {value['reason']}.")
        return Block(cls.title, [Table(
            ["dimension", "items", "alpha judge", "95% CI", "alpha human ceiling", "95% CI", "Spearman rho"],
            [[d, h["items"], h["alpha_judge"], _interval(h.get("alpha_judge_ci95")), h["alpha_human_ceiling"], _interval(h.get("alpha_human_ceiling_ci95")), h.get("spearman_rho")]
             for d, h in value.items()])])
