"""A stored claim asked again: the one re-ask path. ``judge rejudge`` (judge.pipeline.rejudge_record: a panel of
other judges) and the re-asks that confirm a changed verdict (judge.scoring.confirm: the run's own judges, sample
by sample) both go through :func:`ask_stored`, which builds each ClaimToJudge from the stored claim (its stored
candidates offered again under the id the original call showed them by, its stored checks) and asks.

A run directory is an input: a stored passage is shown to a judge only where it is the text of its record's
source at its offsets (:func:`misplaced`, the rule judge.runs.rejudge.check_read_back applies to a whole record
before a rejudge starts); a claim with one that is not is refused (:class:`ForgedPassage`, exit 2), never asked."""

from __future__ import annotations

from judge.errors import InputError
from judge.judges.base import ClaimToJudge, Judge, JudgeContext, offer
from judge.judges.panel import Panel
from judge.models import Candidate, Record
from judge.results import CallRecord, ClaimResult, JudgeVerdict


class ForgedPassage(InputError):
    """A stored passage that is not the text of its record's source at its offsets (an edited run directory)."""


def source_texts(record: Record) -> dict[str | None, str]:
    """The record's source texts by doc id (and by None where it has one source: a span that names none)."""
    texts: dict[str | None, str] = {s.doc_id: s.text for s in record.sources}
    if len(record.sources) == 1:
        texts[None] = record.sources[0].text
    return texts


def misplaced(span, text: str | None) -> bool:
    """Whether a stored span is not ``text[start:end]`` (no such text, offsets outside it, another excerpt)."""
    return text is None or not 0 <= span.start_char <= span.end_char <= len(text) or text[span.start_char : span.end_char] != span.excerpt


def passage_problem(record_id: str, claim: ClaimResult, record: Record) -> str | None:
    """Why a stored claim's passages cannot be shown to a judge (a candidate part that is not the text of its
    record's source at its offsets), else None."""
    texts = source_texts(record)
    for k, c in enumerate(claim.candidates):
        for j, part in enumerate(c.parts):
            if misplaced(part, texts.get(part.doc_id, texts.get(None))):
                return (f"record {record_id!r}: claim {claim.text[:60]!r}: field candidates[{k}].parts[{j}]: the stored excerpt is not the "
                        f"text at [{part.start_char}, {part.end_char}) of its source (the run directory was edited): not re-asked")
    return None


def claim_problem(record_id: str, claim: ClaimResult, answer: str | None, question: str | None) -> str | None:
    """Why a stored claim is not its answer's, else None: an answer span that is not the text of its answer at its
    offsets (judge.runs.rejudge.check_read_back's rule), or a text that says what neither its answer nor its
    question says (the claims' admission rule, judge.stages.claims.trace: a number missing, or more content words
    than it tolerates). A claim edited in a run directory after its answer was judged is never re-asked."""
    from judge.stages.claims import _terms, tolerated, trace

    for k, span in enumerate(claim.answer_spans):
        if misplaced(span, answer):
            return (f"record {record_id!r}: claim {claim.text[:60]!r}: field answer_spans[{k}]: the stored excerpt is not the text at "
                    f"[{span.start_char}, {span.end_char}) of its answer (the run directory was edited): not re-asked")
    missing, _ = trace(claim.text, answer or "", question or "")
    if missing and not tolerated(missing, len(_terms(claim.text))):
        return (f"record {record_id!r}: claim {claim.text[:60]!r}: field text: says what neither its answer nor its question says "
                f"({', '.join(missing[:5])}; the run directory was edited): not re-asked")
    return None


def stored_claim(cid: str, claim: ClaimResult) -> ClaimToJudge:
    """The stored claim as a judge is shown it: its candidates offered under ``cid`` (the ids "<cid>.<rank>"
    the original call cited them by), its stored checks."""
    return ClaimToJudge(cid, claim.text, offer([Candidate(**c.model_dump(exclude={"id"})) for c in claim.candidates], cid), claim.checks)


async def ask_stored(asker: Panel | Judge, record_id: str, record: Record, language: str, claims: list[ClaimResult],
                     sample: int = 0) -> tuple[dict[str, list[JudgeVerdict]], list[CallRecord]]:
    """The verdicts of ``asker`` (a panel: triage, then its judges; or one judge) on stored claims of one answer,
    shown as "1", "2", ... in their order, and the call records. ``sample`` > 0: a re-ask of the same claims, a
    distinct call with its own cache entry. ForgedPassage (before any call) where a stored passage does not slice
    its source."""
    for claim in claims:
        if (problem := passage_problem(record_id, claim, record)) is not None:
            raise ForgedPassage(problem)
    shown = [stored_claim(str(n + 1), c) for n, c in enumerate(claims)]
    context = JudgeContext(record.question, language, record.sources, sample=sample)
    if isinstance(asker, Panel):
        verdicts = await asker.verdicts(shown, context)
    else:
        verdicts = {cid: [v] for cid, v in (await asker.judge(shown, context)).items()}
    return verdicts, context.calls
