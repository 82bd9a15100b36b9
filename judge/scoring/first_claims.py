"""The first answers of a run with their claims and labels, so that a reader sees what was judged, not only
numbers: one list, built here one answer at a time (the first CAP claims kept, the rest counted) and drawn by
every renderer.
"""

from __future__ import annotations

from pydantic import BaseModel

from judge.scoring.base import AnswerItem, Section
from judge.scoring.ungrounded import CAP, claim_anchor


class ListedClaim(BaseModel):
    claim_id: int
    anchor: str  # the claim's id in report.html
    text: str
    label: str


class ListedAnswer(BaseModel):
    record_id: str
    model: str
    answer_index: int
    claims: list[ListedClaim]  # in the answer's order; fewer than ``total`` when the list's cap cut it
    total: int  # the answer's claims
    error: str | None = None  # why it has no claims: the model under test failed to answer
    dropped: int = 0  # claims decomposition dropped (a question, a fragment...)

    def count_line(self) -> str:
        """"3 claims", or "2 of 5 claims shown" where the list's cap cut the answer."""
        return f"{self.total} claim{'s' if self.total != 1 else ''}" if len(self.claims) == self.total else f"{len(self.claims)} of {self.total} claims shown"

    def no_claims_line(self) -> str:
        """Why an answer has no claim: the model under test failed, or decomposition dropped them all."""
        why = f": the model under test failed ({self.error})" if self.error else (f" ({self.dropped} dropped by decomposition)" if self.dropped else "")
        return "no claims" + why


class FirstClaims(BaseModel):
    answers: list[ListedAnswer]  # the first answers of the run, in run order, with at most CAP claims in all
    claims: int  # every claim of the run
    answer_count: int  # every answer of the run

    @property
    def listed(self) -> int:
        return sum(len(a.claims) for a in self.answers)

    def lead_line(self) -> str:
        """What the list holds: every claim, or the first N of them."""
        which = f"All {self.claims} claims" if self.listed == self.claims else f"The first {self.listed} of {self.claims} claims"
        return f"{which}, answer by answer, each with the label the judges gave it."

    def more_line(self, where: str) -> str | None:
        """"... and N more claims (of M more answers): where", when the list is cut."""
        claims, answers = self.claims - self.listed, self.answer_count - len(self.answers)
        if claims <= 0 and answers <= 0:
            return None
        of = f" (of {answers} more answer{'s' if answers != 1 else ''})" if answers > 0 else ""
        return f"... and {claims} more claim{'s' if claims != 1 else ''}{of}: {where}"


class FirstClaimsSection(Section):
    """scores.json's ``first_claims``: the first answers with their claims and labels."""

    key, title = "first_claims", "Answers and their claims"

    def __init__(self, cap: int = CAP):
        self.cap, self.answers, self.claims, self.answer_count, self.listed = cap, [], 0, 0, 0

    def add(self, item: AnswerItem) -> None:
        a, r = item.answer, item.result
        self.claims += len(a.claims)
        self.answer_count += 1
        room = self.cap - self.listed
        if room <= 0 or len(self.answers) >= self.cap:  # full: past here an answer is only counted
            return
        index = next(i for i, x in enumerate(r.answers) if x is a)
        self.listed += min(room, len(a.claims))
        self.answers.append(ListedAnswer(
            record_id=r.record_id, model=a.model, answer_index=index, total=len(a.claims), error=a.generation_error,
            dropped=len(a.decomposition.dropped),
            claims=[ListedClaim(claim_id=c.claim_id, anchor=claim_anchor(r.record_id, index, c.claim_id), text=c.text, label=c.label)
                    for c in a.claims[:room]]))

    def result(self, context):
        return FirstClaims(answers=self.answers, claims=self.claims, answer_count=self.answer_count)
