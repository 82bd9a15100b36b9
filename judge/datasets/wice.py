"""WiCE claim-level entailment data (JSONL): the evidence sentences joined by newlines into one source (exact
offsets kept), each ``supporting_sentences`` set a gold attribution set, the claim itself as the question.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, Literal

from pydantic import ValidationError

from judge.datasets.base import SpanRef, add_validation, iter_jsonl, usable
from judge.models import Attribution, Claim, Items, Record, Source, StrictModel
from judge.problems import Problem
from judge.verdicts import PARTIALLY_SUPPORTED, SUPPORTED, UNSUPPORTED

FORMAT = "wice"
LABELS = {"supported": SUPPORTED, "partially_supported": PARTIALLY_SUPPORTED, "not_supported": UNSUPPORTED}  # WiCE's names -> ours


class WiceMeta(StrictModel):
    id: str
    claim_title: str | None = None
    claim_section: str | None = None
    claim_context: str | None = None


class WiceLine(StrictModel):
    label: Literal[tuple(LABELS)]
    supporting_sentences: Items[Items[int]]
    claim: str
    evidence: Items[str]
    meta: WiceMeta



def iter_load(path: Path, problems: list[Problem]) -> Iterator[tuple[Record, list[SpanRef], int]]:
    """(record, its gold spans, byte offset of its line), one line at a time."""
    for row_index, (lineno, offset, obj) in enumerate(iter_jsonl(path, problems)):
        rid = f"line {lineno}"
        if isinstance(obj, dict) and isinstance(obj.get("meta"), dict) and isinstance(obj["meta"].get("id"), str):
            rid = obj["meta"]["id"]
        if not usable(obj, str(path), rid, problems):
            continue
        try:
            line = WiceLine.model_validate(obj)
        except ValidationError as e:
            add_validation(problems, e, str(path), rid)
            continue
        spans_out: list[SpanRef] = []
        offsets, pos = [], 0
        for sentence in line.evidence:
            offsets.append((pos, pos + len(sentence)))
            pos += len(sentence) + 1
        source = "\n".join(line.evidence)
        sets = []
        bad = False
        for si, gold_set in enumerate(line.supporting_sentences):
            spans = []
            for gi, sid in enumerate(gold_set):
                if not 0 <= sid < len(line.evidence) or not line.evidence[sid]:
                    problems.append(
                        Problem(
                            file=str(path),
                            record_id=rid,
                            field=f"supporting_sentences[{si}][{gi}]",
                            message=f"sentence {sid} is not a non-empty evidence sentence (there are {len(line.evidence)})",
                        )
                    )
                    bad = True
                    continue
                start, end = offsets[sid]
                spans.append(
                    Attribution(
                        sentence_id=sid,
                        source_excerpt=line.evidence[sid],
                        start_char=start,
                        end_char=end,
                        verified=True,
                        verification_method="wice",
                        doc_id=rid,
                    )
                )
                spans_out.append(
                    SpanRef(rid, f"supporting_sentences[{si}][{gi}]", (row_index,), source, start, end, line.evidence[sid])
                )
            sets.append(spans)
        if bad:
            continue
        claim = Claim(
            claim_id=0,
            text=line.claim,
            attribution=sets[0] if sets else [],
            alternative_attributions=sets[1:],
            label=LABELS[line.label],
        )
        record = Record(
            id=rid,
            question="",
            sources=[Source(doc_id=rid, title=line.meta.claim_title, text=source)],
            claims=[claim],
            meta={"wice_label": line.label, **line.meta.model_dump(exclude={"id"}, exclude_none=True)},
        )
        yield record, spans_out, offset


def sniff(head: Any) -> bool:
    return isinstance(head, dict) and "claim" in head and "evidence" in head and "supporting_sentences" in head
