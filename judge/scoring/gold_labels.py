"""Score sections against gold claim labels: the panel and each judge (and triage), claims matched to gold
ones, and the verdicts that cost no model call."""

from __future__ import annotations

from collections import Counter, defaultdict

from pydantic import BaseModel, RootModel

from judge.metrics.classification import classification_counts
from judge.metrics.free import FreeVerdicts
from judge.scoring.base import Block, Section, Table
from judge.verdicts import PANEL, TRIAGE


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


class FreeLabel(BaseModel):
    given: int
    precision: float


class FreeSource(BaseModel):
    settled: int
    coverage: float | None  # share of the gold-labelled claims it settled
    precision: float | None
    per_label: dict[str, FreeLabel]


class FreeShareScores(BaseModel):
    claims: int  # every claim of the run
    triage: int
    triage_share: float | None
    no_model_call: int  # settled by triage or a panel of the deterministic judge alone
    no_model_call_share: float | None


class FreeVerdictScores(BaseModel):
    run: FreeShareScores | None = None  # over all the run's claims, gold or not
    claims: int = 0  # claims with a gold label
    triage: FreeSource | None = None
    deterministic: FreeSource | None = None  # the deterministic judge's own labels (where it sat in the panel)
    no_model_call: FreeSource | None = None  # claims no model was asked about: the panel's label


class FreeVerdictsSection(Section):
    """Verdicts that cost no model call: their share of the run's claims, and, against gold labels, their
    precision; they are only worth having where it is about 1 (DESIGN: free verdicts must be right)."""

    key, title = "free_verdicts", "Free verdicts (no model call): share of the claims, precision against gold labels"
    needs = frozenset({"gold_labels"})  # for the precision; the share is reported on any run

    def __init__(self):
        self.acc = FreeVerdicts()

    def add(self, item):
        for claim in item.answer.claims:
            self.acc.add_claim(claim.verdicts)
        for claim, gold in item.matched.pairs if item.matched else []:
            if gold.label is not None:
                self.acc.add(gold.label, claim.label, claim.verdicts)

    def result(self, context):
        value = self.acc.result()
        return FreeVerdictScores.model_validate(value) if value else None

    @classmethod
    def block(cls, value, scores):
        run = (value or {}).get("run")
        if not run:
            return Block(cls.title, text="No claims.")
        from judge.judges.deterministic import load_weights  # what the free verdicts were measured to be, held out

        share = Table(["claims", "triage", "share", "no model call", "share"],
                      [[run["claims"], run["triage"], run["triage_share"], run["no_model_call"], run["no_model_call_share"]]],
                      title="Share of the run's claims settled with no model call", note=load_weights().free_note())
        if not value.get("triage"):
            return Block(cls.title, [share], text="No gold claim labels in this data: the precision of the free verdicts is not measured.")
        rows = []
        for name in ("triage", "deterministic", "no_model_call"):
            v = value[name]
            per = ", ".join(f"{lbl} {p['precision']:.3f} ({p['given']})" for lbl, p in v["per_label"].items()) or "-"
            rows.append([name.replace("_", " "), v["settled"], v["coverage"], v["precision"], per])
        return Block(cls.title, [share, Table(["verdicts", "settled", "coverage", "precision", "precision per label (given)"], rows,
                                              title="Against gold labels", note=f"Over {value['claims']} claims with a gold label.")])
