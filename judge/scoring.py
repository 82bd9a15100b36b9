"""``judge score``: a run's results against whatever gold its data carries.

- per answer: faithfulness and hallucination rate, counts by label;
- gold claim labels (answers files with ``gold_claims``; WiCE's labels): accuracy, macro-F1, confusion,
  per-label precision and recall, for the panel and for each judge; predicted claims matched to gold
  claims by answer offsets or text similarity, unmatched claims counted on both sides;
- evidence against reference spans (gold support spans, WiCE sentences, reference-claim attributions):
  character-overlap precision, recall, F1, IoU, and the sentence-level hit rate;
- the judge against human raters, where the run judged the reference answers the humans rated;
- breakdowns by genre, difficulty, model under test and judge; calls, cache hits, tokens, cost, wall time.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path

from judge.metrics.classification import classification
from judge.metrics.human import judge_vs_humans
from judge.metrics.matching import match_claims
from judge.metrics.spans import overlap, overlap_scores, sentence_hit, sum_counts
from judge.models import Answer, Record
from judge.results import AnswerResult, RecordResult
from judge.runs.inputs import answers_index, records_by_id
from judge.runs.store import RunStore
from judge.text import split_sentences
from judge.verdicts import PANEL, REFERENCE_MODEL, TRIAGE, rates, scale_scores

GoldClaim = tuple[str, str | None, list[tuple[str | None, int, int]], list[tuple[int, int]]]  # text, label, spans, answer offsets


def gold_for_answer(record: Record, answer: AnswerResult, recorded: dict[tuple[str, str, str], Answer]) -> list[GoldClaim] | None:
    """The gold claims an answer can be scored against, or None when the data has none for it."""
    found = recorded.get((record.id, answer.model, answer.answer))
    if found is not None and found.gold_claims:
        out = []
        for g in found.gold_claims:
            at = answer.answer.find(g.text)
            spans = [(s.doc_id or record.sources[0].doc_id, s.start_char, s.end_char) for s in g.support]
            out.append((g.text, g.label, spans, [(at, at + len(g.text))] if at >= 0 else []))
        return out
    gold_claims = [c for c in record.claims if c.label is not None or c.attribution]
    if gold_claims and (answer.model == REFERENCE_MODEL or any(c.text == answer.answer.strip() for c in gold_claims)):
        out = []
        for c in gold_claims:
            at = answer.answer.find(c.text)
            spans = [(a.doc_id, a.start_char, a.end_char) for a in c.attribution]
            out.append((c.text, c.label, spans, [(at, at + len(c.text))] if at >= 0 else []))
        return out
    return None


def matched_gold(record: Record | None, answer: AnswerResult, recorded: dict) -> tuple[list[tuple], int, int] | None:
    """The answer's predicted claims paired with the gold claims they match (by answer offsets, else text),
    with the counts left unmatched on each side; None when the data holds no gold for this answer."""
    gold = gold_for_answer(record, answer, recorded) if record is not None else None
    if gold is None:
        return None
    predicted = [(c.text, [(s.start_char, s.end_char) for s in c.answer_spans]) for c in answer.claims]
    pairs, unmatched_predicted, unmatched_gold = match_claims(predicted, [(g[0], g[3]) for g in gold])
    return [(answer.claims[i], gold[j]) for i, j, _ in pairs], len(unmatched_predicted), len(unmatched_gold)


def _sentence_spans(record: Record, spans: list[tuple[str | None, int, int]]) -> list[tuple[str | None, int, int]]:
    out = []
    for source in record.sources:
        sentences = split_sentences(source.text)
        for doc, start, end in spans:
            if doc not in (source.doc_id, None):
                continue
            out += [(source.doc_id, s.start, s.end) for s in sentences if s.start < end and start < s.end]
    return out


def score_results(results: Iterable[RecordResult], records: dict[str, Record], recorded: dict, judges: list[str]) -> dict:
    """One pass over the results (a generator is fine: memory does not grow with the run)."""
    per_answer = []
    count = 0
    gold_pairs: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))  # "panel" or judge -> (gold, predicted)
    unmatched = {"predicted": 0, "gold": 0, "matched": 0}
    span_rows, hits, hit_n = [], 0, 0
    by_genre, by_difficulty = defaultdict(Counter), defaultdict(Counter)
    human_items: dict[str, tuple] = {}
    chunks = dict.fromkeys(("answers", "cited", "cited_relevant", "relevant_retrieved", "relevant"), 0)
    for r in results:
        count += 1
        record = records.get(r.record_id)
        for a in r.answers:
            labels = Counter(c.label for c in a.claims)
            by_genre[r.genre or "n/a"].update(labels)
            by_difficulty[str(r.difficulty) if r.difficulty is not None else "n/a"].update(labels)
            per_answer.append({"record_id": r.record_id, "model": a.model, **rates(labels)})
            qrels = record.meta.get("qrels") if record is not None else None
            if qrels is not None:
                relevant = {cid for cid, grade in qrels.items() if grade > 0}
                retrieved = {s.doc_id for s in record.sources}
                cited = {s.doc_id for c in a.claims for s in c.evidence}
                chunks["answers"] += 1
                chunks["cited"] += len(cited)
                chunks["cited_relevant"] += len(cited & relevant)
                chunks["relevant_retrieved"] += len(relevant & retrieved)
                chunks["relevant"] += len(relevant)
            if a.model == REFERENCE_MODEL:
                human_items[r.record_id] = scale_scores([c.label for c in a.claims], [bool(c.evidence) for c in a.claims])
            matched = matched_gold(record, a, recorded)
            if matched is None:
                continue
            pairs, up, ug = matched
            unmatched["predicted"] += up
            unmatched["gold"] += ug
            unmatched["matched"] += len(pairs)
            for claim, (_, glabel, gspans, _) in pairs:
                if glabel is not None:
                    gold_pairs[PANEL][0].append(glabel)
                    gold_pairs[PANEL][1].append(claim.label)
                    for v in claim.verdicts:
                        name = TRIAGE if v.how == TRIAGE else v.judge
                        gold_pairs[name][0].append(glabel)
                        gold_pairs[name][1].append(v.label)
                if gspans:
                    cited = [(s.doc_id, s.start_char, s.end_char) for s in claim.evidence]
                    span_rows.append(overlap(cited, gspans))
                    hit_n += 1
                    hits += sentence_hit(cited, _sentence_spans(record, gspans))
    totals = sum_counts(span_rows) if span_rows else None
    return {
        "records": count,
        "per_answer": per_answer,
        "gold_labels": {name: classification(g, p) for name, (g, p) in sorted(gold_pairs.items())} if gold_pairs else None,
        "claim_matching": unmatched,
        "evidence": {**overlap_scores(totals), **totals, "claims": len(span_rows), "sentence_hit_rate": hits / hit_n if hit_n else None} if totals else None,
        "chunk_attribution": _chunk_attribution(chunks) if chunks["answers"] else None,
        "by_genre": {g: rates(c) for g, c in sorted(by_genre.items())},
        "by_difficulty": {d: rates(c) for d, c in sorted(by_difficulty.items())},
        "human_items": human_items,
    }


def _chunk_attribution(c: dict) -> dict:
    """Cited chunks against the qrels: precision over cited chunks; recall against the relevant chunks that
    were retrieved (what the answer could cite) and against all relevant chunks."""
    return {
        **c,
        "precision": c["cited_relevant"] / c["cited"] if c["cited"] else None,
        "recall_of_retrieved_relevant": c["cited_relevant"] / c["relevant_retrieved"] if c["relevant_retrieved"] else None,
        "recall_of_all_relevant": c["cited_relevant"] / c["relevant"] if c["relevant"] else None,
    }


def human_agreement_scores(human_items: dict, records: dict[str, Record]) -> dict | None:
    """The judge (through the documented rule) against the human raters, per dimension."""
    ids = [i for i in human_items if i in records and records[i].human_ratings]
    if not ids:
        return None
    annotators = list(dict.fromkeys(h.annotator_id for i in ids for h in records[i].human_ratings))
    out = {}
    for k, dim in enumerate(("faithfulness", "attribution")):
        humans = [[next((getattr(h.scores, dim) for h in records[i].human_ratings if h.annotator_id == a), None) for i in ids] for a in annotators]
        judge = [human_items[i][k] for i in ids]
        out[dim] = judge_vs_humans(judge, humans, [0, 1, 2], judge_continuous=[human_items[i][2] for i in ids])
    return out


def score_run(run_dir: Path) -> dict:
    store = RunStore.open(run_dir)
    return score_store(store, records_by_id(store.config()))


def score_store(store: RunStore, records: dict[str, Record]) -> dict:
    """The scores of an opened run, given its records (loaded once by the caller)."""
    run_dir = store.path
    config = store.config()
    results = store.iter_finished()
    recorded = answers_index(config)
    scores = score_results(results, records, recorded, config.adjudicate.judges)
    human = human_agreement_scores(scores.pop("human_items"), records)
    summary_path = run_dir / "summary.json"
    summary = json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.exists() else {}
    manifest = store.manifest()
    return {
        "run_dir": str(run_dir),
        "name": manifest.get("name"),
        "judges": config.adjudicate.judges,
        "records": scores.pop("records"),
        "overall": summary.get("overall"),
        "by_model": summary.get("by_model"),
        "by_judge": summary.get("by_judge"),
        **scores,
        "human": human if human else {"reason": "the run did not judge the reference answers that humans rated (answers: {reference: true})"},
        "usage": summary.get("usage"),
        "wall_seconds": manifest.get("wall_seconds"),
        "same_family_clashes": manifest.get("same_family_clashes", []),
    }
