"""WiCE claim-level entailment data (JSONL): a claim, the cited page's sentences, gold sentence sets.

The evidence sentences are joined with newlines into one source text, keeping each sentence's exact
offsets; each alternative ``supporting_sentences`` set becomes a gold attribution set (any one counts as
correct), and the 3-way label is kept (``not_supported`` becomes ``unsupported``). WiCE has no question:
the record's question is the claim itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from judge.datasets.base import Loaded, SpanRef, read_jsonl
from judge.models import Attribution, Claim, Record, Source, StrictModel
from judge.problems import Problem, problems_from_validation

FORMAT = "wice"
LABELS = {"supported": "supported", "partially_supported": "partially_supported", "not_supported": "unsupported"}


class WiceMeta(StrictModel):
    id: str
    claim_title: str | None = None
    claim_section: str | None = None
    claim_context: str | None = None


class WiceLine(StrictModel):
    label: Literal["supported", "partially_supported", "not_supported"]
    supporting_sentences: list[list[int]]
    claim: str
    evidence: list[str]
    meta: WiceMeta


def load(path: Path) -> Loaded:
    out = Loaded(path=str(path), format=FORMAT)
    rows = read_jsonl(path, out.problems)
    out.raw = [obj for _, obj in rows]
    for row_index, (lineno, obj) in enumerate(rows):
        rid = f"line {lineno}"
        if isinstance(obj, dict) and isinstance(obj.get("meta"), dict) and isinstance(obj["meta"].get("id"), str):
            rid = obj["meta"]["id"]
        try:
            line = WiceLine.model_validate(obj)
        except ValidationError as e:
            out.problems.extend(problems_from_validation(e, str(path), rid))
            continue
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
                    out.problems.append(
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
                out.spans.append(
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
        out.items.append(
            Record(
                id=rid,
                question="",
                sources=[Source(doc_id=rid, title=line.meta.claim_title, text=source)],
                claims=[claim],
                meta={"wice_label": line.label, **line.meta.model_dump(exclude={"id"}, exclude_none=True)},
            )
        )
    return out


def sniff(head: Any) -> bool:
    return isinstance(head, dict) and "claim" in head and "evidence" in head and "supporting_sentences" in head
