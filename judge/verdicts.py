"""The one vocabulary of verdicts: labels, their severity, the credit and rate rules, the rule from claim
verdicts to the human 0-2 scales, and the names of the special judges and answer sources.

Every other module imports these; none writes a label list, a severity order or the 0.5 credit again.

Rates (per answer, model, genre, run): faithfulness = (supported + 0.5 x partially_supported) / judged
claims; hallucination rate = (unsupported + contradicted) / judged claims; a claim whose verdict is
``judge_error`` is counted apart and left out of both. A claim the no-model judge is ``unsure`` of (its
fitted confidence is low) and no model judge took is not verified: it counts among the judged claims with no
credit (faithfulness falls), is no hallucination, and is counted apart in every report.

The human 0-2 scales (README "Scores"): f = the faithfulness of one answer's judged claims; faithfulness =
2 when f = 1, 1 when f >= 0.5, else 0; a = the share of judged claims that are supported or partially
supported *and* cite evidence; attribution = 2 when a = 1, 1 when a >= 0.5, else 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, get_args

# -- labels ---------------------------------------------------------------------------------------------------
# The one definition: VOCABULARY below, one row per label a claim can end with, in the order of every table.
# Every list, rule and column elsewhere is derived from it (here, by the names after it); no module writes a
# label list of its own. Against gold (docs/scores.md): gold, a person and a judge's ruling use the four
# rulings (LABELS); a gold-labelled claim whose verdict is ``unsure`` or ``judge_error`` is a prediction that
# is none of them: it counts as wrong (accuracy, the gold label's recall), in a column of its own in the
# confusion matrix, and in no label's precision.
Label = Literal["supported", "partially_supported", "unsupported", "contradicted"]
VerdictLabel = Literal["supported", "partially_supported", "unsupported", "contradicted", "unsure", "judge_error"]
ControlLabel = Literal["supported", "contradicted", "unsupported"]  # what a control claim is made to be
JUDGE_ERROR = "judge_error"
SUPPORTED = "supported"
PARTIALLY_SUPPORTED = "partially_supported"
UNSUPPORTED = "unsupported"
CONTRADICTED = "contradicted"
UNSURE = "unsure"  # the no-model judge's low-confidence verdict: a model judge takes it, or it is not verified


@dataclass(frozen=True)
class LabelInfo:
    """One label of the vocabulary and every rule that reads it."""

    name: str
    letter: str  # its column in the terminal's compact counts (S/P/U/C/E/?)
    severity: int  # most severe first wins (a panel's tie, a span cited by several claims, the listings)
    credit: float | None  # faithfulness credit; None: not judged, left out of every rate (judge_error)
    ruled: bool  # one of the four a judge rules, gold carries and a person labels
    hallucinated: bool = False  # counts in the hallucination rate
    grounded: bool = False  # counts toward attribution when it cites
    optional: bool = False  # a table column only where a claim has it (tables written before it keep their columns)


VOCABULARY: tuple[LabelInfo, ...] = (
    LabelInfo(SUPPORTED, "S", 0, 1.0, ruled=True, grounded=True),
    LabelInfo(PARTIALLY_SUPPORTED, "P", 1, 0.5, ruled=True, grounded=True),
    LabelInfo(UNSUPPORTED, "U", 4, 0.0, ruled=True, hallucinated=True),
    LabelInfo(CONTRADICTED, "C", 5, 0.0, ruled=True, hallucinated=True),
    LabelInfo(JUDGE_ERROR, "E", 3, None, ruled=False),
    LabelInfo(UNSURE, "?", 2, 0.0, ruled=False, optional=True),  # unverified: judged, no credit, no hallucination
)
INFO: dict[str, LabelInfo] = {x.name: x for x in VOCABULARY}
CLAIM_LABELS: tuple[str, ...] = tuple(INFO)  # every label a claim can end with, in table order
LABELS: tuple[str, ...] = tuple(x.name for x in VOCABULARY if x.ruled)  # a judge's rulings: gold's, a person's
SEVERITY: dict[str, int] = {x.name: x.severity for x in VOCABULARY}
CREDIT: dict[str, float] = {x.name: x.credit for x in VOCABULARY if x.credit is not None}
HALLUCINATED: tuple[str, ...] = tuple(x.name for x in VOCABULARY if x.hallucinated)
GROUNDED: tuple[str, ...] = tuple(x.name for x in VOCABULARY if x.grounded)
NOT_GROUNDED: tuple[str, ...] = tuple(x.name for x in VOCABULARY if x.credit is not None and x.credit < 1)  # listed first by every report
CONTROL_LABELS: tuple[str, ...] = (SUPPORTED, CONTRADICTED, UNSUPPORTED)  # the rulings a control claim is made with, in turn
assert get_args(Label) == LABELS and set(get_args(VerdictLabel)) == set(CLAIM_LABELS) and set(get_args(ControlLabel)) == set(CONTROL_LABELS)


def shown_labels(*counts: Mapping[str, int]) -> tuple[str, ...]:
    """The label columns of a table over these counts, in table order: every label, an optional one (unsure)
    only where some count has it."""
    return tuple(x.name for x in VOCABULARY if not x.optional or any(c.get(x.name) for c in counts))


def letters(shown: Iterable[str]) -> str:
    """The compact heading of these labels' counts ("S/P/U/C/E")."""
    return "/".join(INFO[lbl].letter for lbl in shown)


# -- human labels (judge label; judge.labels) ----------------------------------------------------------------
GROUNDED_ANSWER = "grounded"  # an answer-level label: every claim of the answer is supported
NOT_GROUNDED_ANSWER = "not_grounded"
ANSWER_LABELS: tuple[str, ...] = (GROUNDED_ANSWER, NOT_GROUNDED_ANSWER)
SKIP = "skip"  # a person looked at the item and gave no label (left out, counted)


def answer_label(claim_labels: Iterable[str]) -> str | None:
    """The answer-level label of an answer's claim labels: grounded when every judged claim is supported
    (partially supported is not grounded), None when no claim was judged."""
    judged = [lbl for lbl in claim_labels if is_judged(lbl)]
    if not judged:
        return None
    return GROUNDED_ANSWER if all(lbl == SUPPORTED for lbl in judged) else NOT_GROUNDED_ANSWER


def is_judged(label: str) -> bool:
    """A claim counted in the rates (a judge_error claim counts in neither; an unsure one, unverified, does)."""
    return label in CREDIT


def is_ruled(label: str) -> bool:
    """A verdict that says one of the four labels (what a panel's majority counts)."""
    return label in LABELS


def rates(labels: Counter) -> dict:
    """Claims, counts by label, faithfulness and hallucination rate of a Counter of verdict labels
    (``unsure`` appears among the labels only where there is one: tables written before it keep their columns)."""
    judged = sum(n for lbl, n in labels.items() if is_judged(lbl))
    credit = sum(c * labels[lbl] for lbl, c in CREDIT.items())
    return {
        "claims": sum(labels.values()),
        "labels": {lbl: labels.get(lbl, 0) for lbl in shown_labels(labels)},
        "faithfulness": round(credit / judged, 6) if judged else None,
        "hallucination_rate": round(sum(labels[lbl] for lbl in HALLUCINATED) / judged, 6) if judged else None,
    }


# -- the human 0-2 scales ----------------------------------------------------------------------------------
def to_scale(share: float) -> int:
    return 2 if share >= 1.0 else 1 if share >= 0.5 else 0


def scale_scores(labels: Iterable[str], cites: Iterable[bool]) -> tuple[int | None, int | None, float | None]:
    """(faithfulness 0-2, attribution 0-2, f) for one answer's claim labels and whether each cites evidence."""
    judged = [(lbl, c) for lbl, c in zip(labels, cites) if is_judged(lbl)]
    if not judged:
        return None, None, None
    f = sum(CREDIT[lbl] for lbl, _ in judged) / len(judged)
    a = sum(1 for lbl, c in judged if lbl in GROUNDED and c) / len(judged)
    return to_scale(f), to_scale(a), f


# -- special names --------------------------------------------------------------------------------------------
DETERMINISTIC = "deterministic"  # the judge with no model: its name, model and family
TRIAGE = "triage"  # the pre-judge that settles verbatim claims; its verdicts are not any judge's
NO_MODEL = "none"  # model and family of a triage verdict
REFERENCE_MODEL = "reference"  # the records' own reference answers, judged as if a model wrote them
REFERENCE_FAMILY = "human"
PANEL = "panel"  # the panel's verdict, beside each judge's, in the gold-label scores
NON_MODEL_FAMILIES: tuple[str, ...] = (DETERMINISTIC, NO_MODEL)  # families of judges that are no model
How = Literal["model", "triage", "deterministic", "error"]  # how a verdict was reached


def unsure_line(labels: dict) -> str | None:
    """The report's line on unsure claims (None when there are none): how many, and how they counted."""
    n = labels.get(UNSURE, 0)
    if not n:
        return None
    return (f"unsure: {n} claim{'s' if n != 1 else ''} the no-model judge could not decide with confidence and no model judge "
            "took; counted as not verified (no credit in faithfulness, not a hallucination)")
