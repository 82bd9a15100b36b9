"""``judge label``: which claims (or answers) of a run a person labels (docs/labels.md). Strata: model under
test and verdict; each stratum in a seeded random order, its seats fixed (one each, largest first, then D'Hondt),
so a larger sample always contains a smaller one: ``--more`` adds items and relabels nothing, and each stratum
stays a simple random sample with inclusion probability n_h / N_h.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterator

from judge.labels.sheet import ANSWER, CLAIM, CONTEXT_CHARS, FORMAT, Passage, Sheet, SheetRow, item_id
from judge.models import Record
from judge.results import AnswerResult, ClaimResult, RecordResult
from judge.runs.merge import identity
from judge.runs.run import Run
from judge.verdicts import answer_label, is_judged

PASSAGES_PER_CLAIM = 3
PASSAGES_PER_ANSWER = 8


class SampleError(ValueError):
    """A sheet that cannot be drawn or extended (one line saying why)."""


def units(run: Run, level: str) -> Iterator[tuple[str, str, RecordResult, int, AnswerResult, ClaimResult | None]]:
    """(item id, stratum, record, answer number, answer, claim or None) of every item the level samples from."""
    for r in run.results():
        for i, a in enumerate(r.answers):
            if level == ANSWER:
                stratum = answer_label(c.label for c in a.claims)
                if stratum is not None:
                    yield item_id(r.record_id, i), stratum, r, i, a, None
                continue
            for c in a.claims:
                if is_judged(c.label):
                    yield item_id(r.record_id, i, c.claim_id), c.label, r, i, a, c


DESIGNS = ("model+verdict", "verdict")  # the draw's strata: by model under test and verdict (issue 47 item 2); by verdict alone (sheets before it)


def cell_key(model: str, verdict: str) -> str:
    """The stratum of an item in the model-and-verdict design (what the draw's seeded order is keyed by)."""
    return f"{model}\x1f{verdict}"


def strata_of(run: Run, level: str, design: str = DESIGNS[0]) -> dict[str, list[str]]:
    """The run's items of a level by stratum, in the given design: the population a sheet is drawn from."""
    strata: dict[str, list[str]] = defaultdict(list)
    for item, stratum, _, _, a, _ in units(run, level):
        strata[cell_key(a.model, stratum) if design == DESIGNS[0] else stratum].append(item)
    return strata


def design_of(run: Run, level: str, items: set[str], seed: int) -> tuple[str, dict[str, float]] | None:
    """The design whose seeded draw of len(items) items is exactly ``items`` (with every item's inclusion
    probability), None when no design draws them: the sheet was edited, or the run changed."""
    for design in DESIGNS:
        chosen = draw(strata_of(run, level, design), len(items), seed, level)
        if set(chosen) == items:
            return design, chosen
    return None


def check_draw(sheet, run: Run) -> list:
    """One problem unless a sheet's lines are the run's own seeded draw (issue 50 item 3); the strata and
    probabilities its lines state are never used (the estimate takes them from the run)."""
    from judge.problems import Problem

    out = []
    for level in sorted({r.level for _, r in sheet.rows}):
        rows = [(k, r) for k, r in sheet.rows if r.level == level]
        seed = rows[0][1].seed
        odd = next(((k, r) for k, r in rows if r.seed != seed), None)
        if odd is not None:
            out.append(Problem(file=sheet.path, record_id=f"line {odd[0]}", field="seed",
                               message=f"seed {odd[1].seed}, where line {rows[0][0]} has {seed}: a sheet is one seeded draw (judge label)"))
            continue
        if design_of(run, level, {r.item for _, r in rows}, seed) is None:
            out.append(Problem(file=sheet.path, field="item", message=f"its {len(rows)} {level} lines are not the seeded draw (seed {seed}) of "
                                                                      f"{run.path}: lines added or removed by hand, or the run changed; label the "
                                                                      "sheet judge label wrote (judge label --more adds items)"))
    return out


def seats(sizes: dict[str, int]) -> Iterator[str]:
    """The strata in the order they get their labels: one each (largest first), then D'Hondt by size. A
    sample of n takes the first n seats, so a larger sample holds every smaller one."""
    strata = sorted((s for s, n in sizes.items() if n > 0), key=lambda s: (-sizes[s], s))
    given = dict.fromkeys(strata, 0)
    for s in strata:
        given[s] = 1
        yield s
    while True:
        open_ = [s for s in strata if given[s] < sizes[s]]
        if not open_:
            return
        best = max(open_, key=lambda s: (sizes[s] / (given[s] + 1), -strata.index(s)))
        given[best] += 1
        yield best


def allocation(sizes: dict[str, int], n: int) -> dict[str, int]:
    """How many items of each stratum a sample of ``n`` takes (all of them, when n is the population)."""
    out = dict.fromkeys(sizes, 0)
    for k, s in enumerate(seats(sizes)):
        if k >= n:
            break
        out[s] += 1
    return out


def _order(ids: list[str], seed: int, level: str, stratum: str) -> list[str]:
    ids = sorted(ids)
    random.Random(f"{seed}:{level}:{stratum}").shuffle(ids)
    return ids


def draw(strata: dict[str, list[str]], n: int, seed: int, level: str) -> dict[str, float]:
    """The items of a sample of ``n`` with their inclusion probabilities."""
    sizes = {s: len(ids) for s, ids in strata.items()}
    chosen = {}
    for s, k in allocation(sizes, n).items():
        for item in _order(strata[s], seed, level, s)[:k]:
            chosen[item] = k / sizes[s]
    return chosen


def _passages(record: Record | None, spans) -> list[Passage]:
    out, seen = [], set()
    texts = {s.doc_id: s.text for s in record.sources} if record is not None else {}
    for sp in spans:
        key = (sp.doc_id, sp.start_char, sp.end_char)
        if key in seen:
            continue
        seen.add(key)
        text = texts.get(sp.doc_id) if sp.doc_id in texts else (next(iter(texts.values())) if len(texts) == 1 else None)
        ok = text is not None and text[sp.start_char:sp.end_char] == sp.excerpt
        out.append(Passage(doc_id=sp.doc_id, start_char=sp.start_char, end_char=sp.end_char, excerpt=sp.excerpt,
                           before=text[max(0, sp.start_char - CONTEXT_CHARS):sp.start_char] if ok else "",
                           after=text[sp.end_char:sp.end_char + CONTEXT_CHARS] if ok else ""))
    return out


def _claim_spans(c: ClaimResult, k: int):
    return [*c.evidence, *(p for cand in c.candidates[:k] for p in cand.parts)]


def row_of(run_id: str, level: str, seed: int, item: str, stratum: str, p: float, r: RecordResult, i: int, a: AnswerResult,
           c: ClaimResult | None, record: Record | None, label: str = "") -> SheetRow:
    if c is not None:
        spans = _claim_spans(c, PASSAGES_PER_CLAIM)
        at = c.answer_spans[0] if c.answer_spans else None
        located = [at.start_char, at.end_char] if at is not None and a.answer[at.start_char:at.end_char] == at.excerpt else None
        passages = _passages(record, spans)
    else:
        located = None
        passages = _passages(record, [s for x in a.claims for s in _claim_spans(x, 1)])[:PASSAGES_PER_ANSWER]
    return SheetRow(sheet=FORMAT, run_id=run_id, level=level, item=item, record_id=r.record_id, model=a.model, answer_index=i,
                    claim_id=c.claim_id if c is not None else None, language=r.language, question=r.question, answer=a.answer,
                    claim=c.text if c is not None else None, claim_in_answer=located, passages=passages, stratum=stratum,
                    inclusion_probability=round(p, 12), seed=seed, label=label)


def gold_label(run: Run, r: RecordResult, a: AnswerResult, c: ClaimResult | None) -> str:
    """The dataset's gold label of a claim (matched as the gold-label scores match it), or of an answer (from
    all its gold claims); empty when the data has none for it."""
    from judge.metrics.gold import gold_for_answer, matched_gold

    records, recorded = run.gold_inputs
    record = records.get(r.record_id)
    if record is None:
        return ""
    if c is not None:
        matched = matched_gold(record, a, recorded)
        return next((g.label or "" for x, g in (matched.pairs if matched else []) if x.claim_id == c.claim_id), "")
    gold = gold_for_answer(record, a, recorded) or []
    if not gold or any(g.label is None for g in gold):
        return ""
    return answer_label(g.label for g in gold) or ""


def make_sheet(run: Run, level: str, n: int, seed: int = 0, from_gold: bool = False, existing: Sheet | None = None) -> list[SheetRow]:
    """The sheet's rows: a new sample of ``n`` items, or ``existing`` extended by ``n`` more (its lines, labels
    and notes kept; every inclusion probability updated to the larger sample's)."""
    run_id = identity(run.store)
    strata = strata_of(run, level)
    if not strata:
        raise SampleError(f"{run.path} has no {'judged claim' if level == CLAIM else 'answer with a judged claim'} to label")
    old = [row for _, row in existing.rows] if existing is not None else []
    if old:
        if {r.level for r in old} != {level} or {r.run_id for r in old} != {run_id}:
            raise SampleError(f"{existing.path}: not a {level} sheet of {run.path} (run {run_id}); --more extends the run's own sheet")
        seed = old[0].seed
        found = design_of(run, level, {r.item for r in old}, seed)
        if found is None:
            raise SampleError(f"{existing.path}: its items are not the seeded draw of {run.path} (edited by hand, or the run changed); "
                              "--more can only extend a sheet judge label wrote")
        strata = strata_of(run, level, found[0])  # a sheet drawn by verdict alone is extended the same way
    total = len(old) + n
    chosen = draw(strata, total, seed, level)
    records = run.records
    new_rows, order, had = {}, random.Random(f"{seed}:{level}:order:{len(old)}"), {o.item for o in old}
    for item, stratum, r, i, a, c in units(run, level):
        if item in chosen and item not in had:
            label = gold_label(run, r, a, c) if from_gold else ""
            new_rows[item] = row_of(run_id, level, seed, item, stratum, chosen[item], r, i, a, c, records.get(r.record_id), label)
    fresh = sorted(new_rows.values(), key=lambda x: x.item)
    order.shuffle(fresh)  # a person labels in a random order, never stratum by stratum
    kept = [o.model_copy(update={"inclusion_probability": round(chosen[o.item], 12)}) for o in old]
    return kept + fresh
