"""The Judge protocol: ``await judge.judge(claims, context) -> {claim_id: JudgeVerdict}``.

A judge is anything that rules on claims given their offered candidate passages: a model (ModelJudge), the
search scores and checks (DeterministicJudge), or a user's function or an NLI model registered by name
(judge.judges.registry). The panel runs the judges of a config and combines their verdicts; the pipeline
never needs to know which kind a judge is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from judge.llm import CallRecord
from judge.models import Candidate, Source, Span
from judge.results import ClaimChecks, JudgeVerdict, OfferedCandidate

if TYPE_CHECKING:
    from judge.stages.evidence import Evidence


@dataclass
class ClaimToJudge:
    cid: str  # the id the judges see ("1", "2", ...)
    text: str
    candidates: list[OfferedCandidate]
    checks: ClaimChecks = field(default_factory=ClaimChecks)
    control: bool = False  # a control claim: never shown to a judge as such; a call is never made of controls alone
    # (question, sources, language) -> the claim's Evidence, and triage's refusal: each built once per input
    read: dict = field(default_factory=dict, repr=False, compare=False)


@dataclass
class JudgeContext:
    """What a judge may read besides the claims: the question and the record's sources. A judge that calls
    a model appends its call records to ``calls`` (the panel gives each judge its own list)."""

    question: str
    language: str
    sources: list[Source]
    calls: list[CallRecord] = field(default_factory=list)
    sample: int = 0  # > 0: a re-ask of the same claims (judge.runs.confirm), a distinct call with its own cache entry

    @cached_property
    def source_texts(self) -> tuple[str, ...]:
        return tuple(s.text for s in self.sources)

    @cached_property
    def texts(self) -> dict[str | None, str]:
        """Source text by doc_id (and by None when there is one source)."""
        out: dict[str | None, str] = {s.doc_id: s.text for s in self.sources}
        if len(self.sources) == 1:
            out[None] = self.sources[0].text
        return out


@runtime_checkable
class Judge(Protocol):
    name: str  # the name configs use; it labels the judge's verdicts

    async def judge(self, claims: list[ClaimToJudge], context: JudgeContext) -> dict[str, JudgeVerdict]: ...


def offer(candidates: list[Candidate], cid: str) -> list[OfferedCandidate]:
    """Candidates as the judges see them, with ids they cite them by ("<claim id>.<rank>")."""
    return [OfferedCandidate(**c.model_dump(), id=f"{cid}.{j}") for j, c in enumerate(candidates, start=1)]


def spans_of(candidate: Candidate) -> list[Span]:
    return [p.model_copy() for p in candidate.parts]


def evidence_of(claim: ClaimToJudge, question: str | None, sources: tuple[str, ...], language: str | None) -> Evidence:
    """The claim's Evidence read with the record's question, sources and language: built on first use and kept
    on the claim, so triage and the no-model judge read one value (never a second reading; the controls still read
    their own, on their one base span: judge.controls.make)."""
    from judge.stages.evidence import read_evidence

    key = ("evidence", question, sources, language)
    if key not in claim.read:
        claim.read[key] = read_evidence(claim.text, claim.candidates, claim.checks, question, sources, language)
    return claim.read[key]


def context_inputs(context: JudgeContext | None) -> tuple[str | None, tuple[str, ...], str | None]:
    """(question, source texts, language) of a context: the one input every reading of a claim takes."""
    if context is None:
        return None, (), None
    return context.question, context.source_texts, context.language
