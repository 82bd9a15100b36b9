"""``judge validate``: re-verify every span, report the dataset card's key numbers, propose repairs."""

from __future__ import annotations

import json
from array import array
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from judge.datasets import answers, iter_checked, join_records, resolve_format
from judge.datasets.base import ProblemList, SpanRef, iter_json_items, iter_jsonl, read_json, span_ok
from judge.datasets.ratings import RatingRows
from judge.metrics.agreement import agreement as rater_agreement
from judge.models import Answer, Record
from judge.search import Index
from judge.text import normalize, sentence_index, split_sentences

REPAIR_MIN_SCORE = 0.9


class Tally:
    """What the report counts, gathered one item at a time: counters, and the human ratings compactly."""

    def __init__(self) -> None:
        self.records = self.answers = self.claims = self.spans = self.spans_verified = self.rating_entries = 0
        self.genres: Counter = Counter()
        self.difficulties: Counter = Counter()
        self.models: Counter = Counter()
        self.labels: Counter = Counter()
        self.ratings = RatingRows()
        self.sentence_ids = {"stated": 0, "agree": 0}

    def add(self, item: Record | Answer) -> None:
        if isinstance(item, Answer):
            self._answer(item)
            return
        self.records += 1
        self.claims += len(item.claims)
        self.rating_entries += len(item.human_ratings)
        if item.genre is not None:
            self.genres[item.genre] += 1
        if item.difficulty is not None:
            self.difficulties[item.difficulty] += 1
        self.ratings.add(item)
        stated, agree = sentence_id_agreement(item)
        self.sentence_ids["stated"] += stated
        self.sentence_ids["agree"] += agree
        for a in item.answers:
            self._answer(a)

    def _answer(self, a: Answer) -> None:
        self.answers += 1
        self.claims += len(a.gold_claims)
        self.models[a.model] += 1
        self.labels.update(c.label for c in a.gold_claims)

    def span(self, ref: SpanRef) -> bool:
        """Count a gold span (its problem, if any, is already noted); True when it holds."""
        ok = span_ok(ref)
        self.spans += 1
        self.spans_verified += ok
        return ok


def report(path: str, format: str, tally: Tally, problems: list) -> dict:
    """The card's key numbers, agreement, sentence-id agreement (information only) and the errors."""
    agreement = rater_agreement(tally.ratings.table())
    out = {
        "file": path,
        "format": format,
        "records": tally.records if tally.records or not tally.answers else tally.answers,
        "claims": tally.claims,
        "spans": tally.spans,
        "spans_verified": tally.spans_verified,
        "rating_entries": tally.rating_entries,
        "genres": dict(sorted(tally.genres.items())),
        "difficulties": {str(k): v for k, v in sorted(tally.difficulties.items())},
        "perfect_agreement": agreement["perfect_agreement"],
        "alpha_pooled": agreement["alpha_pooled"],
        "alpha_by_dimension": agreement["alpha_by_dimension"],
        "sentence_ids": tally.sentence_ids,
    }
    if tally.answers:
        out["answers_by_model"] = dict(sorted(tally.models.items()))
        out["gold_labels"] = dict(sorted(tally.labels.items()))
    out["errors"] = [p.model_dump() for p in problems]
    return out


def sentence_id_agreement(r: Record) -> tuple[int, int]:
    """How many of a record's stated ``sentence_id``s there are, and how many name the sentence our segmenter
    puts the span in."""
    stated = agree = 0
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
            stated += 1
            agree += sentence_index(cache[text], a.start_char, a.end_char) == a.sentence_id
    return stated, agree


@dataclass
class Repair:
    """A proposed fix of one broken span, with what writing it needs (never the span's source)."""

    record_id: str
    field: str
    old: tuple[int, int]
    new: tuple[int, int] | None
    method: str | None
    score: float | None
    raw_path: tuple
    style: str
    text: str | None  # the source's text at ``new``

    def as_dict(self) -> dict:
        return {
            "record_id": self.record_id,
            "field": self.field,
            "old": list(self.old),
            "new": list(self.new) if self.new else None,
            "method": self.method,
            "score": self.score,
        }


def propose_repair(ref: SpanRef, indexes: dict[str, Index]) -> Repair:
    """Where a broken span's excerpt really is (or None): the exact occurrence nearest the stated offset, else a
    normalised one, else the span search's best fuzzy alignment scoring at least REPAIR_MIN_SCORE."""
    new, method, score = _locate(ref, indexes)
    text = ref.source[new[0] : new[1]] if new else None
    return Repair(ref.record_id, ref.field, (ref.start, ref.end), new, method, score, ref.raw_path, ref.style, text)


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


def _apply(target, rep: Repair) -> None:
    for key in rep.raw_path[1:]:
        target = target[key]
    start, end = rep.new
    if rep.style == "answer_start":
        target["answer_start"] = start
        target["text"] = rep.text
    else:
        target["start_char"], target["end_char"] = start, end
        if "source_excerpt" in target:
            target["source_excerpt"] = rep.text


def write_repaired(path: str, format: str, repairs: list[Repair], out_path: Path) -> int:
    """Write a copy of the input with the proposed offsets (and excerpts, for start/end files) applied,
    streaming the input again one record at a time (a SQuAD-style file, one JSON object, is read whole)."""
    from judge.files import check_output, output

    import os

    src = Path(os.path.realpath(path))  # realpath: a link loop raises nothing here (the read has refused it already)
    if Path(os.path.realpath(out_path)) == src:
        raise ValueError(f"refusing to overwrite the input {path}; --write needs another path")
    check_output(out_path, (path,), "--write")  # never through a link, into a run, onto a disk; /dev/null as such
    todo = [r for r in repairs if r.new is not None]
    problems: list = []
    with output(out_path, follow_streams=True) as out:
        if format == "squad":
            raw = read_json(src, problems)
            for rep in todo:
                target = raw
                for key in rep.raw_path[:1]:
                    target = target[key]
                _apply(target, rep)
            out.write(json.dumps(raw, ensure_ascii=False, indent=1) + "\n")
            return len(todo)
        by_item: dict[int, list[Repair]] = {}
        for rep in todo:
            by_item.setdefault(rep.raw_path[0], []).append(rep)
        if format == "hebrew-qa":
            out.write("[")
            for i, item in iter_json_items(src, problems):
                for rep in by_item.get(i, []):
                    _apply(item, rep)
                out.write(("\n" if i == 0 else ",\n") + json.dumps(item, ensure_ascii=False, indent=1))
            out.write("\n]\n")
        else:
            for i, (_, _, obj) in enumerate(iter_jsonl(src, problems)):
                for rep in by_item.get(i, []):
                    _apply(obj, rep)
                out.write(json.dumps(obj, ensure_ascii=False) + "\n")
    return len(todo)


def validate(path: str, format: str | None = None, records_path: str | None = None, repair: bool = False) -> tuple[list, dict, list[Repair]]:
    """(problems, report, repairs when ``repair``) in one streamed pass over the file (and one over
    ``records_path``); what is kept grows only with the item count and the ratings."""
    file = Path(path)
    format, _ = resolve_format(file, format)
    problems = ProblemList(str(file))
    tally, repairs, offsets = Tally(), [], {}

    indexes: dict[str, Index] = {}  # one index (and normalisation) per source, shared by its broken spans

    def spans(refs) -> None:
        for ref in refs:
            if not tally.span(ref) and repair:
                if len(indexes) > 16:  # the recent sources only: a source's broken spans come together
                    indexes.clear()
                repairs.append(propose_repair(ref, indexes))

    for i, item, refs, pos in iter_checked(file, format, problems):
        tally.add(item)
        spans(refs)
        if format == answers.FORMAT and records_path is not None:
            offsets.setdefault(item.record_id, array("q")).extend((i, pos))
    if format == answers.FORMAT and records_path is not None:
        spans(join_records(file, offsets, Path(records_path), problems))
    return problems, report(str(file), format, tally, problems), repairs


def validate_and_repair(path: str, format: str | None, records_path: str | None, repair: bool, write: Path | None) -> tuple[list, dict]:
    """``judge validate``: (the problems, the report), with proposed repairs (``repair`` or ``write``) and,
    given ``write``, a repaired copy written there (never over the input: ValueError)."""
    problems, rep, repairs = validate(path, format, records_path, repair or write is not None)
    if repairs or repair:
        rep["repairs"] = [r.as_dict() for r in repairs]
    if write is not None:
        rep["repairs_written"] = {"path": str(write), "applied": write_repaired(path, rep["format"], repairs, write)}
    return problems, rep
