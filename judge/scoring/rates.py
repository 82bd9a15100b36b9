"""Score sections of verdict rates: all claims, by model, by judge, per answer, by genre and by difficulty."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import ClassVar

from pydantic import BaseModel, RootModel

from judge.jsonstream import DiskList
from judge.scoring.base import AnswerItem, Block, Section, Table
from judge.verdicts import CREDIT, HALLUCINATED, is_judged, rates, shown_labels


def _labels_table(first: str, rows: dict, with_rates: bool = True) -> Table:
    shown = shown_labels(*(r["labels"] for r in rows.values()))
    headers = [first, "claims", *shown] + (["faithfulness", "hallucination rate"] if with_rates else [])
    return Table(headers, [[k, r["claims"], *(r["labels"].get(lbl, 0) for lbl in shown)]
                           + ([r["faithfulness"], r["hallucination_rate"]] if with_rates else []) for k, r in rows.items()])


class Rates(BaseModel):
    claims: int
    labels: dict[str, int]
    faithfulness: float | None
    hallucination_rate: float | None


class RatesBy(RootModel[dict[str, Rates]]):
    pass


class Overall(Section):
    """All claims of the run (from its summary); its rates are the ones compare and the gates watch."""

    key, title = "overall", "All claims"
    paired = {
        "faithfulness": ("credit", "judged", True),
        "hallucination_rate": ("hallucinated", "judged", False),
        "judge_error_rate": ("errors", "claims", False),
    }

    def result(self, context):
        return context["run"].summary_part(self.key, Rates)

    @staticmethod
    def count(item, counts):
        for claim in item.answer.claims:
            counts["claims"] += 1
            if not is_judged(claim.label):
                counts["errors"] += 1
                continue
            counts["judged"] += 1
            counts["credit"] += CREDIT[claim.label]
            counts["hallucinated"] += claim.label in HALLUCINATED


class _FromSummary(Section):
    first: ClassVar[str]
    with_rates: ClassVar[bool] = True

    def result(self, context):
        return context["run"].summary_part(self.key, RatesBy)

    @classmethod
    def block(cls, value, scores):
        return Block(cls.title, [_labels_table(cls.first, value, cls.with_rates)]) if value else None


class ByModel(_FromSummary):
    key, title, first = "by_model", "Verdicts by model under test", "model"


class ByJudge(_FromSummary):
    """Each judge's own verdicts (triage's are no judge's)."""

    key, title, first, with_rates = "by_judge", "Verdicts by judge", "judge", False


class AnswerRates(BaseModel):
    record_id: str
    model: str
    claims: int
    labels: dict[str, int]
    faithfulness: float | None
    hallucination_rate: float | None


class PerAnswerRows:
    """The rows of ``per_answer``, one per answer of the run, held on disk (judge.jsonstream.DiskList): what
    scores.json writes row by row. ``model_dump()`` gives the list itself (iterable, read back from disk)."""

    def __init__(self, rows: DiskList):
        self.rows = rows

    def model_dump(self, **_) -> DiskList:
        return self.rows


class PerAnswer(Section):
    """One row per answer: the one section whose size is the run's, so its rows go to disk as they come."""

    key, title = "per_answer", "Per answer"

    def __init__(self):
        self.rows = DiskList()

    def add(self, item):
        row = {"record_id": item.result.record_id, "model": item.answer.model, **rates(Counter(c.label for c in item.answer.claims))}
        self.rows.append(AnswerRates.model_validate(row).model_dump(exclude_unset=True))

    def result(self, context):
        return PerAnswerRows(self.rows)


class _RatesByField(Section):
    first: ClassVar[str]

    def __init__(self):
        self.counts: dict[str, Counter] = defaultdict(Counter)

    def group(self, item: AnswerItem) -> str:
        raise NotImplementedError

    def add(self, item):
        self.counts[self.group(item)].update(Counter(c.label for c in item.answer.claims))

    def result(self, context):
        return RatesBy.model_validate({g: rates(c) for g, c in sorted(self.counts.items())})

    @classmethod
    def block(cls, value, scores):
        if not value:
            return None
        if set(value) == {"n/a"}:  # nothing to compare: said in one line
            return Block(cls.title, text=f"No record of this data has a {cls.first}.")
        return Block(cls.title, [Table([cls.first, "claims", "faithfulness", "hallucination rate"],
                                        [[k, r["claims"], r["faithfulness"], r["hallucination_rate"]] for k, r in value.items()])])


class ByGenre(_RatesByField):
    key, title, first = "by_genre", "Faithfulness by genre", "genre"

    def group(self, item):
        return item.result.genre or "n/a"


class ByDifficulty(_RatesByField):
    key, title, first = "by_difficulty", "Faithfulness by difficulty", "difficulty"

    def group(self, item):
        return str(item.result.difficulty) if item.result.difficulty is not None else "n/a"
