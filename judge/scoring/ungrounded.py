"""The claims that are not grounded, most severe first: what the terminal summary, report.md and the top of
report.html show before any number. One list, built here and drawn by every renderer; each entry carries its
best passage, an agreeing judge's rationale, the checks' flags and its answer with the claim marked (so a
"claim" that restates the question or is a garbled fragment shows as such).
"""

from __future__ import annotations

import hashlib
import heapq
from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel

from judge.results import AnswerResult, ClaimChecks, ClaimResult, RecordResult
from judge.scoring.base import AnswerItem, Block, Section, Table
from judge.text.control import defuse
from judge.verdicts import NOT_GROUNDED, SEVERITY, is_judged

CAP = 50  # entries kept in scores.json, report.md and the top of report.html (the rest are counted)
TERMINAL_CAP = 10  # entries the terminal summary prints
ANSWER_CONTEXT = 300  # characters of the answer kept either side of the claim's spans (the rest is cut, marked …)


class Passage(BaseModel):
    """The best passage for a claim: cited by the panel, or the nearest candidate the search found."""

    doc_id: str | None
    text: str
    score: float | None  # the search's score of the candidate (None for a cited span no candidate covers)
    cited: bool


class Piece(BaseModel):
    """A run of the answer's text; ``claim``: the run is where the claim comes from (the renderers mark it)."""

    text: str
    claim: bool = False


class NotGroundedClaim(BaseModel):
    record_id: str
    model: str
    answer_index: int
    claim_id: int
    anchor: str  # the claim's id in report.html
    text: str
    label: str
    passage: Passage | None  # None: no passage found
    rationale: str
    flags: list[str] = []
    judges_disagree: bool = False
    rulings: list[str] = []  # each judge's own label ("local-qwen-1.5b contradicted"), where more than one judged
    answer: list[Piece] = []  # the answer it comes from, the claim's spans marked (see in_answer)
    located: bool = True  # False: the claim's spans were not found in the answer (the answer is shown unmarked)


class NotGrounded(BaseModel):
    total: int  # every claim not grounded, shown or not
    labels: dict[str, int]  # how many of each label, most severe first
    claims: list[NotGroundedClaim]  # most severe first (then in run order), at most CAP

    @property
    def more(self) -> int:
        return self.total - len(self.claims)


def claim_anchor(record_id: str, answer_index: int, claim_id: int) -> str:
    """The id of a claim in report.html (data-independent characters only)."""
    return "c" + hashlib.sha1(f"{record_id}\0{answer_index}\0{claim_id}".encode("utf-8", "surrogatepass")).hexdigest()[:12]


def check_flags(checks: ClaimChecks) -> list[str]:
    """The deterministic checks' findings as short lines (numbers, names, conflicting sentences)."""
    flags = []
    if checks.numbers_missing:
        flags.append("numbers not in the evidence: " + ", ".join(checks.numbers_missing))
    for m in checks.numbers_mismatched:
        flags.append(f"{m.claim} where the evidence says {m.candidate}")
    if checks.names_missing:
        flags.append("names not in the evidence: " + ", ".join(checks.names_missing))
    for c in checks.conflicts:
        flags.append(f"the source has a {c.kind.replace('_', ' ')}: {c.excerpt}")
    return flags


def best_passage(claim: ClaimResult) -> Passage | None:
    """The evidence the panel cited (with its candidate's score), else the nearest candidate, else None."""
    if claim.evidence:
        span = claim.evidence[0]
        score = next((c.score for c in claim.candidates if any(
            (p.doc_id, p.start_char, p.end_char) == (span.doc_id, span.start_char, span.end_char) for p in c.parts)), None)
        return Passage(doc_id=span.doc_id, text=span.excerpt, score=score, cited=True)
    best = nearest_candidate(claim)
    if best is not None:
        return Passage(doc_id=best.doc_id, text=best.text, score=best.score, cited=False)
    return None


def nearest_candidate(claim: ClaimResult):
    """The candidate the search scored highest for the claim (None: the search found nothing)."""
    return max(claim.candidates, key=lambda c: c.score) if claim.candidates else None


def in_answer(answer: str, spans: list[tuple[int, int]], context: int = ANSWER_CONTEXT) -> list[Piece]:
    """The answer as pieces with the claim's spans marked, cut to ``context`` characters around them (… where
    cut); control characters shown as U+FFFD. Without spans, the answer's first ``2 * context`` characters."""
    spans = sorted((max(0, a), min(len(answer), b)) for a, b in spans if 0 <= a < b <= len(answer))
    merged: list[list[int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    lo = max(0, merged[0][0] - context) if merged else 0
    hi = min(len(answer), merged[-1][1] + context) if merged else min(len(answer), 2 * context)
    pieces: list[Piece] = []
    at = lo
    for a, b in merged:
        if a > at:
            pieces.append(Piece(text=answer[at:a]))
        pieces.append(Piece(text=answer[a:b], claim=True))
        at = b
    if hi > at:
        pieces.append(Piece(text=answer[at:hi]))
    if lo > 0:
        pieces.insert(0, Piece(text="…"))
    if hi < len(answer):
        pieces.append(Piece(text="…"))
    return [Piece(text=defuse(p.text), claim=p.claim) for p in pieces if p.text]


def rationale(claim: ClaimResult) -> str:
    """Why: the rationale of the first judge that agrees with the panel (else of any judge, else its error)."""
    agreeing = [v for v in claim.verdicts if v.label == claim.label] + list(claim.verdicts)
    return next((v.rationale or v.error or "" for v in agreeing if v.rationale or v.error), "")


def rulings(claim: ClaimResult) -> list[str]:
    """Each judge's own label on the claim, where a panel judged it: the panel decides, but a model judge's own
    ruling (one left out of the panel's verdicts too) is what a reader checks the judges by."""
    if len(claim.verdicts) < 2:
        return []
    return [f"{v.judge} {v.label.replace('_', ' ')}" for v in claim.verdicts]


def judges_disagree(claim: ClaimResult) -> bool:
    """Two judges gave the claim different labels (judge errors aside)."""
    return len({v.label for v in claim.verdicts if is_judged(v.label)}) > 1


class Collector:
    """Keeps the CAP most severe not-grounded claims seen (earliest first among equals) and counts them all;
    memory stays bounded by CAP however long the run."""

    def __init__(self, cap: int = CAP):
        self.cap, self.seq, self.heap, self.counts = cap, 0, [], Counter()

    def add(self, result: RecordResult, answer_index: int, answer: AnswerResult) -> None:
        for c in answer.claims:
            if c.label not in NOT_GROUNDED:
                continue
            self.counts[c.label] += 1
            self.seq += 1
            key = (SEVERITY[c.label], -self.seq)
            if len(self.heap) < self.cap:
                heapq.heappush(self.heap, (key, self._entry(result, answer_index, answer, c)))
            elif key > self.heap[0][0]:
                heapq.heapreplace(self.heap, (key, self._entry(result, answer_index, answer, c)))

    @staticmethod
    def _entry(result: RecordResult, i: int, answer: AnswerResult, c: ClaimResult) -> NotGroundedClaim:
        spans = [(s.start_char, s.end_char) for s in c.answer_spans if s.start_char < s.end_char <= len(answer.answer)]
        return NotGroundedClaim(
            record_id=result.record_id, model=answer.model, answer_index=i, claim_id=c.claim_id,
            anchor=claim_anchor(result.record_id, i, c.claim_id), text=c.text, label=c.label,
            passage=best_passage(c), rationale=rationale(c), flags=check_flags(c.checks), judges_disagree=judges_disagree(c),
            rulings=rulings(c),
            answer=in_answer(answer.answer, spans), located=bool(spans),
        )

    def result(self) -> NotGrounded:
        ordered = [entry for _, entry in sorted(self.heap, key=lambda kv: kv[0], reverse=True)]
        labels = {lbl: self.counts[lbl] for lbl in sorted(NOT_GROUNDED, key=SEVERITY.get, reverse=True)}
        return NotGrounded(total=sum(self.counts.values()), labels=labels, claims=ordered)


def not_grounded(results: Iterable[RecordResult], cap: int = CAP) -> NotGrounded:
    """The not-grounded claims of a run's results, most severe first, capped at ``cap`` with the total."""
    collector = Collector(cap)
    for r in results:
        for i, a in enumerate(r.answers):
            collector.add(r, i, a)
    return collector.result()


def summary_line(ng: NotGrounded) -> str:
    """"N claims not grounded (C contradicted, ...)" or that there are none."""
    if not ng.total:
        return "No claim is unsupported, contradicted or partially supported."
    counts = ", ".join(f"{n} {lbl.replace('_', ' ')}" for lbl, n in ng.labels.items() if n)
    return f"{ng.total} claim{'s' if ng.total != 1 else ''} not grounded ({counts}), most severe first"


def passage_text(p: Passage | None) -> str:
    """The passage as one line: where it is, its score, and whether the panel cited it."""
    if p is None:
        return "none found"
    score = f", score {p.score:.2f}" if p.score is not None else ""
    return f"{'cited' if p.cited else 'nearest candidate'} ({p.doc_id or 'source'}{score}): {p.text}"


def more_line(ng: NotGrounded, where: str) -> str | None:
    """The pointer to the full list, when the list is capped."""
    return f"{ng.more} more not shown: {where}" if ng.more > 0 else None


class NotGroundedSection(Section):
    """scores.json's ``not_grounded``: the list every report shows first."""

    key, title = "not_grounded", "Not grounded"

    def __init__(self):
        self.collector = Collector()

    def add(self, item: AnswerItem) -> None:
        index = next(i for i, a in enumerate(item.result.answers) if a is item.answer)
        self.collector.add(item.result, index, item.answer)

    def result(self, context):
        return self.collector.result()

    @classmethod
    def block(cls, value, scores):
        if value is None:
            return None
        ng = NotGrounded.model_validate(value)
        rows = [[c.label, c.record_id, c.model, c.text, passage_text(c.passage), c.rationale, "; ".join(c.flags) or "-",
                 "; ".join(c.rulings) or "-"] for c in ng.claims]
        more = more_line(ng, "every claim is in the Records section of report.html and in results.jsonl")
        tables = [Table(["label", "record", "model", "claim", "best passage", "rationale", "checks", "judges"], rows, note=more)] if rows else []
        return Block(cls.title, tables, text=summary_line(ng))
