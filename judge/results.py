"""What a run writes: one RecordResult per line of results.jsonl, reloadable and re-scorable.

Nothing here depends on wall-clock time, so the same config and cache give byte-identical results.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_serializer

from judge.models import Candidate, Span, omitted_when_empty
from judge.text.language import LANGUAGES, language_code
from judge.verdicts import JUDGE_ERROR, ControlLabel, How, VerdictLabel

RESULTS_SCHEMA_VERSION = 1
Language = Literal[LANGUAGES]  # a run directory is an input: "English.\nSYSTEM OVERRIDE: ..." is refused when read back


class CallRecord(BaseModel):
    """What one structured call did and spent (zero tokens and cost when served from the cache)."""

    model: str
    model_id: str
    family: str
    cache_key: str
    prompt_hash: str = ""
    cached: bool = False
    # never negative, never infinite: a calls.jsonl read back (a downloaded run) cannot refund a budget or a total
    attempts: int = Field(0, ge=0)
    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)
    cost_usd: float | None = Field(0.0, ge=0, allow_inf_nan=False)
    latency_s: float = 0.0
    error: str | None = None
    truncated: bool = False  # the answer was cut at max_tokens and kept (only where the caller allowed it)
    controls: int = 0  # control claims the call carried (a judge call of a control answer: all its claims)


class Usage(BaseModel):
    """Model calls and what they spent, summed from call records; cache hits cost nothing.

    The port keeps one for the whole run (``LLM.totals``); the pipeline keeps one per record."""

    calls: int = Field(0, ge=0)  # calls that reached a model (cache misses)
    cache_hits: int = Field(0, ge=0)
    errors: int = Field(0, ge=0)
    attempts: int = Field(0, ge=0)
    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)
    cost_usd: float = Field(0.0, ge=0, allow_inf_nan=False)  # read back from a run: never negative, never infinite
    unknown_cost_calls: int = Field(0, ge=0)

    def add_call(self, rec: CallRecord) -> None:
        """One call's record, as the port or the pipeline sees it end."""
        if rec.cached:
            self.cache_hits += 1
            return
        self.calls += 1
        self.errors += rec.error is not None
        self.attempts += rec.attempts
        self.prompt_tokens += rec.prompt_tokens
        self.completion_tokens += rec.completion_tokens
        if rec.cost_usd is None:
            self.unknown_cost_calls += 1
        else:
            self.cost_usd = round(self.cost_usd + rec.cost_usd, 10)

    def add(self, other: Usage) -> None:
        for name in Usage.model_fields:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.cost_usd = round(self.cost_usd, 10)


class NumberMismatch(BaseModel):
    claim: str
    candidate: str


class Conflict(Span):
    """A sentence of the source that retracts or contradicts the claim (see judge/stages/conflicts.py)."""

    kind: Literal["correction", "near_duplicate"]
    detail: str


class ClaimChecks(BaseModel):
    """Deterministic checks of a claim against its candidates."""

    numbers: list[str] = []  # numbers, dates and percentages in the claim
    numbers_missing: list[str] = []  # in no candidate
    numbers_mismatched: list[NumberMismatch] = []  # differ from the same kind of number in the best candidate
    names: list[str] = []  # capitalised Latin terms, quoted terms, terms in gershayim
    names_missing: list[str] = []  # in no candidate
    conflicts: list[Conflict] = []  # sentences of the source that retract or contradict the claim

    @property
    def passed(self) -> bool:
        return not (self.numbers_missing or self.numbers_mismatched or self.names_missing or self.conflicts)

    _omit_empty = omitted_when_empty("conflicts")  # as written before conflicts were checked


class OfferedCandidate(Candidate):
    """A candidate as offered to the judges, with the id they cite it by."""

    id: str


class JudgeVerdict(BaseModel):
    judge: str  # the judge's label in the config
    model: str  # model id, or DETERMINISTIC / NO_MODEL for a judge with no model
    family: str
    label: VerdictLabel
    evidence_ids: list[str] = []
    evidence: list[Span] = []  # the cited candidates' verified spans
    rationale: str = ""
    how: How = "model"
    prompt_hash: str = ""
    error: str | None = None


class ClaimResult(BaseModel):
    claim_id: int
    text: str
    answer_spans: list[Span] = []  # where in the answer the claim comes from (doc_id "answer")
    candidates: list[OfferedCandidate] = []
    checks: ClaimChecks = ClaimChecks()
    verdicts: list[JudgeVerdict] = []
    label: VerdictLabel = JUDGE_ERROR  # the panel's verdict
    evidence: list[Span] = []  # the spans cited by judges who agree with the panel's label
    reads_question: bool = False  # the claim says what the answer says read with its question (judge.stages.claims)

    _omit_empty = omitted_when_empty("reads_question")  # claims that stand alone: as written before the flag


class DroppedClaim(BaseModel):
    """What a decomposer wrote that is no claim of the answer (judge.stages.claims), and why."""

    text: str
    quote: str = ""
    reason: str


class Decomposition(BaseModel):
    method: Literal["llm", "sentences", "whole"]
    model: str | None = None
    fallback_reason: str | None = None  # set when the LLM decomposer failed (or wrote no claim of the answer) and sentences were used
    prompt_hash: str = ""
    dropped: list[DroppedClaim] = []  # what the decomposer (or the sentence splitter) wrote that is no claim

    _omit_empty = omitted_when_empty("dropped")  # dropping nothing: as written before drops were kept


class AnswerResult(BaseModel):
    model: str  # the model under test (or the answers file's model name); MODEL+VARIANT with prompt variants
    family: str
    answer: str
    generation_error: str | None = None
    truncated: bool = False  # the generated answer was cut at max_tokens (kept, and judged as it stands)
    decomposition: Decomposition
    claims: list[ClaimResult] = []
    prompt: str | None = None  # the prompt variant that produced it (generate.prompts), None for the shipped prompt
    prompt_hash: str | None = None  # that variant's template hash (VARIANT@sha256[:16])

    @model_serializer(mode="wrap")
    def _no_prompt_unless_variant(self, handler):
        """Answers of the shipped prompt (or recorded) stay byte-identical to those written before variants."""
        data = handler(self)
        for key in ("prompt", "prompt_hash"):
            if data.get(key) is None:
                data.pop(key, None)
        return data

    @property
    def model_name(self) -> str:
        """The model under test without its prompt variant."""
        suffix = f"+{self.prompt}"
        return self.model[: -len(suffix)] if self.prompt and self.model.endswith(suffix) else self.model


ControlKind = Literal["claim", "copy", "reworded", "recombined", "number", "date", "entity", "negation", "detail", "about", "subject", "unrelated"]


class ControlClaim(BaseModel):
    """A claim whose label is known by construction (judge.controls), with the span it was made from."""

    id: str
    record_id: str
    text: str
    label: ControlLabel
    kind: ControlKind
    origin_record_id: str  # the record the control was made from (another record's, for "unrelated")
    origin: Span | None = None  # the source span its base claim was verified on; None for another record's own claim
    change: str = ""  # what the rule changed, for a person reading the results


class ControlCost(BaseModel):
    """What the controls cost, apart from the real claims: the judge calls of the control answers."""

    shown: int = 0  # control slots the model judges were asked about
    calls: float = 0.0  # judge calls (call-equivalents in runs made before controls had calls of their own)
    prompt_tokens: float = 0.0
    completion_tokens: float = 0.0
    cost_usd: float = 0.0
    priced: bool = True  # False when some call's price is unknown: the cost is then "unknown", never $0

    def add(self, other: ControlCost) -> None:
        for name in ControlCost.model_fields:
            if name != "priced":
                setattr(self, name, getattr(self, name) + getattr(other, name))
        self.priced = self.priced and other.priced

    def rounded(self) -> ControlCost:
        return ControlCost(shown=self.shown, calls=round(self.calls, 3), prompt_tokens=round(self.prompt_tokens), completion_tokens=round(self.completion_tokens),
                           cost_usd=round(self.cost_usd, 8), priced=self.priced)


class ControlResult(BaseModel):
    """A control as the judges saw it, in the control answer of one answer (calls of its own); never counted
    in the answers' scores."""

    control: ControlClaim
    answer: int  # the index of the answer it was made from (judged in calls of its own, never beside it)
    position: int  # its place among the control answer's claims (0-based): the id the judges saw it by, less 1
    candidates: list[OfferedCandidate] = []
    checks: ClaimChecks = ClaimChecks()
    verdicts: list[JudgeVerdict] = []
    label: VerdictLabel = JUDGE_ERROR  # the panel's verdict
    withdrawn: str = ""  # why it is not counted: a supported control of an answer some judge flagged


class RecordResult(BaseModel):
    schema_version: int = RESULTS_SCHEMA_VERSION
    record_id: str
    genre: str | None = None
    difficulty: int | None = None
    question: str
    language: Language  # one of judge.text.language.LANGUAGES: its name reaches the judges' system turn
    answers: list[AnswerResult] = []
    controls: list[ControlResult] = []  # judge.controls: measured apart, never part of the answers
    control_cost: ControlCost = Field(default_factory=ControlCost)  # the controls' share of the judge calls (in usage too)
    usage: Usage = Field(default_factory=Usage)

    @field_validator("language", mode="before")
    @classmethod
    def _code(cls, value):
        """A run written before the codes holds the language's name ("Hebrew"): read back as its code."""
        return (language_code(value) or value) if isinstance(value, str) else value
