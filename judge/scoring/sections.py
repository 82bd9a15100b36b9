"""Score sections: each one declares the gold it needs, takes the run's answers one at a time, and returns a
typed result (pydantic). scores.json, the terminal, report.md, report.html and compare all iterate over
SECTIONS, so a new metric is one new class in this list (README "How to extend").

A section also says how it is drawn (``tables``: titles, headers, rows; every report renders those) and,
when it has a rate that can be compared run to run, how one record counts toward it (``paired`` and
``count``, used by compare's paired bootstrap and its gates).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel, RootModel

from judge.jsonstream import DiskList
from judge.metrics.classification import classification_counts
from judge.metrics.free import EvidenceCeiling, FreeVerdicts
from judge.metrics.human import judge_vs_humans
from judge.metrics.spans import overlap, overlap_scores, sentence_hit
from judge.models import Record
from judge.results import AnswerResult, RecordResult
from judge.scoring.gold import Matched, sentence_spans
from judge.verdicts import CREDIT, HALLUCINATED, PANEL, REFERENCE_MODEL, TRIAGE, VERDICT_LABELS, is_judged, rates, scale_scores

HUMAN_DIMENSIONS = ("faithfulness", "attribution")  # the human scales the judge's verdicts map onto


# -- what a section sees and what it draws ------------------------------------------------------------------
@dataclass
class AnswerItem:
    """One answer of one finished record, with its record (None if the dataset lacks it) and matched gold."""

    result: RecordResult
    answer: AnswerResult
    record: Record | None
    matched: Matched | None


@dataclass
class Table:
    headers: list[str]
    rows: list[list]
    title: str | None = None  # a caption above the table
    note: str | None = None  # a line below it


@dataclass
class Block:
    """What a section shows: its heading, its tables, or a line saying why there is nothing."""

    title: str
    tables: list[Table] = field(default_factory=list)
    text: str | None = None


class Section:
    key: ClassVar[str]  # its key in scores.json
    title: ClassVar[str]
    needs: ClassVar[frozenset[str]] = frozenset()  # the gold it needs: gold_labels, gold_spans, human_ratings, qrels
    paired: ClassVar[dict[str, tuple[str, str, bool]]] = {}  # metric -> (numerator, denominator, higher is better)

    def add(self, item: AnswerItem) -> None:
        """Take one answer (sections that read the run's summary or the whole run take none)."""

    def result(self, context: dict) -> BaseModel | None:
        """The section's value; ``context`` holds the run's summary, manifest and records."""
        raise NotImplementedError

    @classmethod
    def block(cls, value: Any, scores: dict) -> Block | None:
        """How reports show the section's value (from scores.json, so a stored score can be re-rendered)."""
        return None

    @staticmethod
    def count(item: AnswerItem, counts: Counter) -> None:
        """Add one answer's numerators and denominators of ``paired`` to ``counts``."""


def _interval(ci: list | None) -> tuple | None:
    """A 95% interval as a table cell (reports write a pair of floats as [lo, hi])."""
    return tuple(ci) if ci else None


def _labels_table(first: str, rows: dict, with_rates: bool = True) -> Table:
    headers = [first, "claims", *VERDICT_LABELS] + (["faithfulness", "hallucination rate"] if with_rates else [])
    return Table(headers, [[k, r["claims"], *(r["labels"][lbl] for lbl in VERDICT_LABELS)]
                           + ([r["faithfulness"], r["hallucination_rate"]] if with_rates else []) for k, r in rows.items()])


# -- verdict rates --------------------------------------------------------------------------------------------
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
        value = context["summary"].get(self.key)
        return Rates.model_validate(value) if value is not None else None

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
        value = context["summary"].get(self.key)
        return RatesBy.model_validate(value) if value is not None else None

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


class PerAnswerRates(RootModel[list[AnswerRates]]):
    pass


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


# -- against gold claim labels ----------------------------------------------------------------------------------
class LabelScores(BaseModel):
    precision: float | None
    recall: float | None
    f1: float | None
    support: int


class Classification(BaseModel):
    n: int
    accuracy: float | None
    macro_f1: float | None
    per_label: dict[str, LabelScores]
    confusion: dict[str, dict[str, int]]


class GoldLabelScores(RootModel[dict[str, Classification]]):
    """The panel's verdicts and each judge's (and triage's) against gold claim labels."""


class GoldLabels(Section):
    key, title = "gold_labels", "Against gold claim labels"
    needs = frozenset({"gold_labels"})
    paired = {"accuracy": ("gold_correct", "gold_n", True)}

    def __init__(self):
        self.pairs: dict[str, Counter] = defaultdict(Counter)  # panel or judge -> (gold, predicted) -> count

    def add(self, item):
        for claim, gold in item.matched.pairs if item.matched else []:
            if gold.label is None:
                continue
            self.pairs[PANEL][gold.label, claim.label] += 1
            for v in claim.verdicts:
                self.pairs[TRIAGE if v.how == TRIAGE else v.judge][gold.label, v.label] += 1

    def result(self, context):
        if not self.pairs:
            return None
        return GoldLabelScores.model_validate({name: classification_counts(c) for name, c in sorted(self.pairs.items())})

    @staticmethod
    def count(item, counts):
        for claim, gold in item.matched.pairs if item.matched else []:
            if gold.label is not None:
                counts["gold_n"] += 1
                counts["gold_correct"] += claim.label == gold.label

    @classmethod
    def block(cls, value, scores):
        if not value:
            return None
        tables = [Table(["judge", "claims", "accuracy", "macro-F1"], [[j, g["n"], g["accuracy"], g["macro_f1"]] for j, g in value.items()])]
        panel = value.get(PANEL)
        if panel:
            cols = list(next(iter(panel["confusion"].values())).keys())
            tables.append(Table(["gold \\ predicted", *cols], [[g, *(row[c] for c in cols)] for g, row in panel["confusion"].items()],
                                title="Confusion matrix of the panel (rows: gold, columns: predicted):"))
            tables.append(Table(["label", "precision", "recall", "F1", "support"],
                                [[lbl, v["precision"], v["recall"], v["f1"], v["support"]] for lbl, v in panel["per_label"].items()], title="Per label:"))
        m = scores.get("claim_matching")
        if m:
            tables[-1].note = f"Claims matched to gold: {m['matched']}; unmatched predicted: {m['predicted']}; unmatched gold: {m['gold']}."
        return Block(cls.title, tables)


class ClaimMatchingCounts(BaseModel):
    predicted: int
    gold: int
    matched: int


class ClaimMatching(Section):
    """How many predicted and gold claims found a partner (shown with the gold labels)."""

    key, title = "claim_matching", "Claims matched to gold"
    needs = frozenset({"gold_labels", "gold_spans"})

    def __init__(self):
        self.counts = Counter()

    def add(self, item):
        if item.matched:
            self.counts["predicted"] += item.matched.unmatched_predicted
            self.counts["gold"] += item.matched.unmatched_gold
            self.counts["matched"] += len(item.matched.pairs)

    def result(self, context):
        return ClaimMatchingCounts(predicted=self.counts["predicted"], gold=self.counts["gold"], matched=self.counts["matched"])


# -- cited evidence against reference spans ---------------------------------------------------------------------
class EvidenceScores(BaseModel):
    precision: float | None
    recall: float | None
    f1: float | None
    iou: float | None
    cited: int
    gold: int
    shared: int
    union: int
    claims: int
    sentence_hit_rate: float | None


class Evidence(Section):
    key, title = "evidence", "Cited evidence against reference spans"
    needs = frozenset({"gold_spans"})

    def __init__(self):
        self.totals = dict.fromkeys(("cited", "gold", "shared", "union"), 0)  # summed claim by claim
        self.claims = self.hits = 0

    def add(self, item):
        for claim, gold in item.matched.pairs if item.matched else []:
            if gold.spans:
                cited = [(s.doc_id, s.start_char, s.end_char) for s in claim.evidence]
                counts = overlap(cited, gold.spans)
                for k in self.totals:
                    self.totals[k] += counts[k]
                self.claims += 1
                self.hits += sentence_hit(cited, sentence_spans(item.record, gold.spans))

    def result(self, context):
        if not self.claims:
            return None
        totals = dict(self.totals)
        return EvidenceScores(**overlap_scores(totals), **totals, claims=self.claims, sentence_hit_rate=self.hits / self.claims)

    @classmethod
    def block(cls, value, scores):
        if not value:
            return None
        e = value
        return Block(cls.title, [Table(["claims", "precision", "recall", "F1", "IoU", "sentence hit rate"],
                                        [[e["claims"], e["precision"], e["recall"], e["f1"], e["iou"], e["sentence_hit_rate"]]])])


class ChunkScores(BaseModel):
    answers: int
    cited: int
    cited_relevant: int
    relevant_retrieved: int
    relevant: int
    precision: float | None
    recall_of_retrieved_relevant: float | None
    recall_of_all_relevant: float | None


class ChunkAttribution(Section):
    """Cited chunks against the qrels: precision over cited chunks; recall against the relevant chunks that
    were retrieved (what the answer could cite) and against all relevant chunks."""

    key, title = "chunk_attribution", "Cited chunks against the qrels"
    needs = frozenset({"qrels"})

    def __init__(self):
        self.c = dict.fromkeys(("answers", "cited", "cited_relevant", "relevant_retrieved", "relevant"), 0)

    def add(self, item):
        qrels = item.record.meta.get("qrels") if item.record is not None else None
        if qrels is None:
            return
        relevant = {cid for cid, grade in qrels.items() if grade > 0}
        retrieved = {s.doc_id for s in item.record.sources}
        cited = {s.doc_id for c in item.answer.claims for s in c.evidence}
        c = self.c
        c["answers"] += 1
        c["cited"] += len(cited)
        c["cited_relevant"] += len(cited & relevant)
        c["relevant_retrieved"] += len(relevant & retrieved)
        c["relevant"] += len(relevant)

    def result(self, context):
        c = self.c
        if not c["answers"]:
            return None
        return ChunkScores(
            **c,
            precision=c["cited_relevant"] / c["cited"] if c["cited"] else None,
            recall_of_retrieved_relevant=c["cited_relevant"] / c["relevant_retrieved"] if c["relevant_retrieved"] else None,
            recall_of_all_relevant=c["cited_relevant"] / c["relevant"] if c["relevant"] else None,
        )

    @classmethod
    def block(cls, value, scores):
        if not value:
            return None
        c = value
        return Block(cls.title, [Table(["answers", "cited chunks", "precision", "recall (relevant retrieved)", "recall (all relevant)"],
                                        [[c["answers"], c["cited"], c["precision"], c["recall_of_retrieved_relevant"], c["recall_of_all_relevant"]]])])


# -- the judge against human raters -----------------------------------------------------------------------------------
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


class JudgeHealth(Section):
    """Each judge on its control claims (judge.controls.health, from the run's summary): recall per label with
    exact intervals, the gate's status and the cost of the controls. Reports lead with it whenever the judges
    are not verified."""

    key, title = "judge_health", "Judge health on control claims"

    def result(self, context):
        from judge.controls.health import HealthReport

        value = context["summary"].get(self.key)
        return HealthReport.model_validate(value) if value else None

    @classmethod
    def block(cls, value, scores):
        from judge.controls.health import HealthReport

        if not value or not value.get("judges"):
            return None
        report = HealthReport.model_validate(value)
        headers, rows = report.table()
        cost = [line for line in report.lines() if line.startswith("controls")]
        return Block(cls.title, [Table(headers, rows)], text="\n".join([report.headline(), *cost]))

    @staticmethod
    def headline(value) -> str | None:
        """The line every report opens with: whether the judges were verified on their controls."""
        from judge.controls.health import HealthReport

        return HealthReport.model_validate(value).headline() if value else None

    @staticmethod
    def failing(value) -> bool:
        """The judges are not verified: a gated judge failed or lacked evidence, or the gate or controls are off."""
        from judge.controls.health import HealthReport

        if not value:
            return False
        report = HealthReport.model_validate(value)
        return bool(report.failed) or not report.enabled or not report.gate


# -- free verdicts and the evidence ceiling ------------------------------------------------------------------------
class FreeLabel(BaseModel):
    given: int
    precision: float


class FreeSource(BaseModel):
    settled: int
    coverage: float | None  # share of the gold-labelled claims it settled
    precision: float | None
    per_label: dict[str, FreeLabel]


class FreeVerdictScores(BaseModel):
    claims: int  # claims with a gold label
    triage: FreeSource
    deterministic: FreeSource  # the deterministic judge's own labels (where it sat in the panel)
    no_model_call: FreeSource  # claims no model was asked about: the panel's label


class FreeVerdictsSection(Section):
    """Verdicts that cost no model call, against gold labels: they are only worth having where their
    precision is about 1 (DESIGN: free verdicts must be right)."""

    key, title = "free_verdicts", "Free verdicts (no model call) against gold labels"
    needs = frozenset({"gold_labels"})

    def __init__(self):
        self.acc = FreeVerdicts()

    def add(self, item):
        for claim, gold in item.matched.pairs if item.matched else []:
            if gold.label is not None:
                self.acc.add(gold.label, claim.label, claim.verdicts)

    def result(self, context):
        value = self.acc.result()
        return FreeVerdictScores.model_validate(value) if value else None

    @classmethod
    def block(cls, value, scores):
        if not value:
            return None
        rows = []
        for name in ("triage", "deterministic", "no_model_call"):
            v = value[name]
            per = ", ".join(f"{lbl} {p['precision']:.3f} ({p['given']})" for lbl, p in v["per_label"].items()) or "-"
            rows.append([name.replace("_", " "), v["settled"], v["coverage"], v["precision"], per])
        return Block(cls.title, [Table(["verdicts", "settled", "coverage", "precision", "precision per label (given)"], rows,
                                       note=f"Over {value['claims']} claims with a gold label.")])


class CeilingScores(BaseModel):
    claims: int  # gold-supported claims with gold support spans
    ceiling: float  # share whose whole gold support was offered to the judges
    judges_accuracy: float  # share the panel called supported
    judges_accuracy_when_offered: float | None


class EvidenceCeilingSection(Section):
    """What a perfect judge could reach in candidate mode: a supported claim whose support was not offered
    cannot be judged right. Shown beside the panel's accuracy on the same claims."""

    key, title = "evidence_ceiling", "Evidence ceiling: was the gold support offered to the judges?"
    needs = frozenset({"gold_spans"})

    def __init__(self):
        self.acc = EvidenceCeiling()

    def add(self, item):
        for claim, gold in item.matched.pairs if item.matched else []:
            if gold.label in (None, "supported") and gold.spans:
                offered = [(p.doc_id, p.start_char, p.end_char) for c in claim.candidates for p in c.parts]
                self.acc.add(gold.gold_sets(), offered, claim.label)

    def result(self, context):
        value = self.acc.result()
        return CeilingScores.model_validate(value) if value else None

    @classmethod
    def block(cls, value, scores):
        if not value:
            return None
        return Block(cls.title, [Table(["gold-supported claims", "ceiling (support offered)", "panel says supported", "... when offered"],
                                       [[value["claims"], value["ceiling"], value["judges_accuracy"], value["judges_accuracy_when_offered"]]])])



SECTIONS: tuple[type[Section], ...] = (
    Overall, JudgeHealth, ByModel, ByJudge, PerAnswer, GoldLabels, FreeVerdictsSection, ClaimMatching, Evidence, EvidenceCeilingSection,
    ChunkAttribution, ByGenre, ByDifficulty, Human,
)
