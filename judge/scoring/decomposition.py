"""What decomposition did to the answers (issue 24.5): the claims it kept, those read with their question,
what it dropped and why, and the answers that fell back to sentences (judge.stages.claims is the boundary;
results.jsonl keeps every dropped claim with its reason). Needs no gold: shown for every run."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel

from judge.scoring.base import Block, Section, Table

EXAMPLES = 5  # dropped claims quoted in the reports (results.jsonl has them all)


def reason_kind(reason: str) -> str:
    """A reason without its particulars: "not in the answer or the question: 1933" -> its words before ":"."""
    return reason.split(":")[0]


class DroppedExample(BaseModel):
    record_id: str
    model: str
    text: str
    reason: str


class DecompositionScores(BaseModel):
    answers: int  # answers with text
    methods: dict[str, int]  # answers by the method that made their claims
    claims: int
    read_with_question: int
    dropped: int
    dropped_by_reason: dict[str, int]
    fallbacks: int  # answers an LLM decomposer was asked about that fell back to sentences
    fallbacks_by_reason: dict[str, int]
    examples: list[DroppedExample] = []


class Decomposition(Section):
    key, title = "decomposition", "Decomposition: claims kept, read with the question, dropped, fallbacks"

    def __init__(self):
        self.counts: Counter = Counter()
        self.methods: Counter = Counter()
        self.dropped: Counter = Counter()
        self.fallbacks: Counter = Counter()
        self.examples: list[DroppedExample] = []

    def add(self, item):
        a = item.answer
        if not a.answer.strip():
            return
        how = a.decomposition
        self.counts["answers"] += 1
        self.methods[how.method] += 1
        self.counts["claims"] += len(a.claims)
        self.counts["read_with_question"] += sum(c.reads_question for c in a.claims)
        self.dropped.update(reason_kind(d.reason) for d in how.dropped)
        if how.fallback_reason is not None:
            self.fallbacks[reason_kind(how.fallback_reason)] += 1
        for d in how.dropped[: max(0, EXAMPLES - len(self.examples))]:
            self.examples.append(DroppedExample(record_id=item.result.record_id, model=a.model, text=d.text, reason=d.reason))

    def result(self, context):
        if not self.counts["answers"]:
            return None
        return DecompositionScores(
            answers=self.counts["answers"], methods=dict(sorted(self.methods.items())), claims=self.counts["claims"],
            read_with_question=self.counts["read_with_question"], dropped=sum(self.dropped.values()),
            dropped_by_reason=dict(sorted(self.dropped.items())), fallbacks=sum(self.fallbacks.values()),
            fallbacks_by_reason=dict(sorted(self.fallbacks.items())), examples=self.examples,
        )

    @classmethod
    def block(cls, value, scores):
        if not value:
            return Block(cls.title, text="No answer with text.")
        methods = ", ".join(f"{m} {n}" for m, n in value["methods"].items())
        why = "; ".join(f"{r} {n}" for r, n in value["dropped_by_reason"].items()) or "-"
        fell = "; ".join(f"{r} {n}" for r, n in value["fallbacks_by_reason"].items()) or "-"
        tables = [Table(["answers", "claims", "read with the question", "dropped", "fallbacks to sentences"],
                        [[value["answers"], value["claims"], value["read_with_question"], value["dropped"], value["fallbacks"]]],
                        note=f"Methods: {methods}. Dropped: {why}. Fallbacks: {fell}.")]
        if value.get("examples"):
            tables.append(Table(["record", "model", "dropped claim", "why"], [[e["record_id"], e["model"], e["text"], e["reason"]] for e in value["examples"]],
                                title="What decomposition dropped (the first few; every one is in results.jsonl)"))
        return Block(cls.title, tables)
