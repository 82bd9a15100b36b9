"""``judge validate``: re-verify every span, report the dataset card's key numbers, propose repairs."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from judge.datasets import load_checked
from judge.datasets.base import Loaded, SpanRef, iter_json_items, iter_jsonl, read_json
from judge.metrics.agreement import human_agreement
from judge.models import Answer, Record
from judge.search import Index
from judge.text import normalize, sentence_index, split_sentences

REPAIR_MIN_SCORE = 0.9


def report(loaded: Loaded) -> dict:
    """The card's key numbers, agreement, sentence-id agreement (information only) and the errors."""
    records = [r for r in loaded.items if isinstance(r, Record)]
    answers = [a for a in loaded.items if isinstance(a, Answer)] + [a for r in records for a in r.answers]
    bad_fields = {(p.record_id, (p.field or "").rsplit(".", 1)[0]) for p in loaded.problems}
    spans_verified = sum(1 for s in loaded.spans if (s.record_id, s.field) not in bad_fields)
    out = {
        "file": loaded.path,
        "format": loaded.format,
        "records": len(records) if records or not answers else len(answers),
        "claims": sum(len(r.claims) for r in records) + sum(len(a.gold_claims) for a in answers),
        "spans": len(loaded.spans),
        "spans_verified": spans_verified,
        "rating_entries": sum(len(r.human_ratings) for r in records),
        "genres": dict(sorted(Counter(r.genre for r in records if r.genre is not None).items())),
        "difficulties": {str(k): v for k, v in sorted(Counter(r.difficulty for r in records if r.difficulty is not None).items())},
    }
    agreement = human_agreement(records)
    out["perfect_agreement"] = agreement["perfect_agreement"]
    out["alpha_pooled"] = agreement["alpha_pooled"]
    out["alpha_by_dimension"] = agreement["alpha_by_dimension"]
    out["sentence_ids"] = sentence_id_agreement(records)
    if answers:
        out["answers_by_model"] = dict(sorted(Counter(a.model for a in answers).items()))
        out["gold_labels"] = dict(sorted(Counter(c.label for a in answers for c in a.gold_claims).items()))
    out["errors"] = [p.model_dump() for p in loaded.problems]
    return out


def sentence_id_agreement(records: list[Record]) -> dict:
    """How many stated ``sentence_id``s name the sentence our segmenter puts the span in."""
    stated = agree = 0
    for r in records:
        cache: dict[str, list] = {}
        for c in r.claims:
            for a in c.attribution:
                if a.sentence_id is None:
                    continue
                try:
                    text = r.source(a.doc_id).text
                except KeyError:
                    continue
                if text not in cache:
                    cache[text] = split_sentences(text)
                sentences = cache[text]
                stated += 1
                agree += sentence_index(sentences, a.start_char, a.end_char) == a.sentence_id
    return {"stated": stated, "agree": agree}


@dataclass
class Repair:
    record_id: str
    field: str
    old: tuple[int, int]
    new: tuple[int, int] | None
    method: str | None
    score: float | None
    ref: SpanRef

    def as_dict(self) -> dict:
        return {
            "record_id": self.record_id,
            "field": self.field,
            "old": list(self.old),
            "new": list(self.new) if self.new else None,
            "method": self.method,
            "score": self.score,
        }


def propose_repairs(loaded: Loaded) -> list[Repair]:
    """For each span whose excerpt does not match, the offsets where the excerpt really is (or None).

    An exact occurrence nearest the stated offset wins; else a normalised one; else the span search's
    best fuzzy alignment, if it scores at least REPAIR_MIN_SCORE.
    """
    broken = [s for s in loaded.spans if not (0 <= s.start < s.end <= len(s.source) and s.source[s.start : s.end] == s.excerpt)]
    out = []
    indexes: dict[str, Index] = {}
    for ref in broken:
        new, method, score = _locate(ref, indexes)
        out.append(Repair(ref.record_id, ref.field, (ref.start, ref.end), new, method, score, ref))
    return out


def _locate(ref: SpanRef, indexes: dict[str, Index]) -> tuple[tuple[int, int] | None, str | None, float | None]:
    if not ref.excerpt:
        return None, None, None
    hits = []
    at = ref.source.find(ref.excerpt)
    while at >= 0:
        hits.append(at)
        at = ref.source.find(ref.excerpt, at + 1)
    if hits:
        best = min(hits, key=lambda h: abs(h - ref.start))
        return (best, best + len(ref.excerpt)), "exact", 1.0
    if ref.source not in indexes:  # one index (and normalisation) per source, shared by its broken spans
        indexes[ref.source] = Index(ref.source)
    index = indexes[ref.source]
    needle = normalize(ref.excerpt).text
    at = index.norm.text.find(needle) if needle.strip() else -1
    if at >= 0:
        return index.norm.to_original(at, at + len(needle)), "normalized", 0.99
    fuzzy = [c for c in index.search(ref.excerpt, k=5) if c.method in ("fuzzy", "exact", "normalized", "folded")]
    if fuzzy and fuzzy[0].score >= REPAIR_MIN_SCORE:
        return (fuzzy[0].start_char, fuzzy[0].end_char), fuzzy[0].method, fuzzy[0].score
    return None, None, None


def _apply(target, ref: SpanRef, new: tuple[int, int]) -> None:
    for key in ref.raw_path[1:]:
        target = target[key]
    start, end = new
    if ref.style == "answer_start":
        target["answer_start"] = start
        target["text"] = ref.source[start:end]
    else:
        target["start_char"], target["end_char"] = start, end
        if "source_excerpt" in target:
            target["source_excerpt"] = ref.source[start:end]


def write_repaired(loaded: Loaded, repairs: list[Repair], out_path: Path) -> int:
    """Write a copy of the input with the proposed offsets (and excerpts, for start/end files) applied,
    streaming the input again one record at a time (a SQuAD-style file, one JSON object, is read whole)."""
    src = Path(loaded.path).resolve()
    if out_path.resolve() == src:
        raise ValueError(f"refusing to overwrite the input {loaded.path}; --write needs another path")
    todo = [r for r in repairs if r.new is not None]
    problems: list = []
    with open(out_path, "w", encoding="utf-8") as out:
        if loaded.format == "squad":
            raw = read_json(src, problems)
            for rep in todo:
                target = raw
                for key in rep.ref.raw_path[:1]:
                    target = target[key]
                _apply(target, rep.ref, rep.new)
            out.write(json.dumps(raw, ensure_ascii=False, indent=1) + "\n")
            return len(todo)
        by_item: dict[int, list[Repair]] = {}
        for rep in todo:
            by_item.setdefault(rep.ref.raw_path[0], []).append(rep)
        if loaded.format == "hebrew-qa":
            out.write("[")
            for i, item in iter_json_items(src, problems):
                for rep in by_item.get(i, []):
                    _apply(item, rep.ref, rep.new)
                out.write(("\n" if i == 0 else ",\n") + json.dumps(item, ensure_ascii=False, indent=1))
            out.write("\n]\n")
        else:
            for i, (_, _, obj) in enumerate(iter_jsonl(src, problems)):
                for rep in by_item.get(i, []):
                    _apply(obj, rep.ref, rep.new)
                out.write(json.dumps(obj, ensure_ascii=False) + "\n")
    return len(todo)


def validate(path: str, format: str | None = None, records_path: str | None = None) -> tuple[Loaded, dict]:
    loaded = load_checked(path, format, records_path)
    return loaded, report(loaded)


def validate_and_repair(path: str, format: str | None, records_path: str | None, repair: bool, write: Path | None) -> tuple[Loaded, dict]:
    """``judge validate``: the report, with proposed repairs (``repair`` or ``write``) and, given ``write``,
    a repaired copy written there (never over the input: ValueError)."""
    loaded, rep = validate(path, format, records_path)
    repairs = propose_repairs(loaded) if (repair or write) else []
    if repairs or repair:
        rep["repairs"] = [r.as_dict() for r in repairs]
    if write is not None:
        rep["repairs_written"] = {"path": str(write), "applied": write_repaired(loaded, repairs, write)}
    return loaded, rep
