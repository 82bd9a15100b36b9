"""A retrieval run against a BEIR benchmark's qrels: hit@k, recall@k, MRR@10, nDCG@10 (computed by
ir-measures over pytrec_eval; ranx was tried first, but its numba compilation costs 4-35 s per process),
overall and stratified by query fields, strict and dup_group-tolerant.

dup_group tolerance: a query's ``dup_group`` names the work its anchor chunk comes from; in the tolerant
figures, any corpus chunk whose own ``dup_group`` equals the query's also counts as relevant (grade 1), so a
hit on another edition of the same work is not punished. The strict figures use the qrels as published.
Queries without qrels are left out (and counted).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from judge.datasets.beir import STRATA, Benchmark

NO_HIT = "__no_result__"


def _measures(ks: tuple[int, ...]) -> dict:
    """Our metric names -> ir-measures measures."""
    from ir_measures import RR, R, Success, nDCG

    out = {f"hit@{k}": Success @ k for k in ks}
    out.update({f"recall@{k}": R @ k for k in ks})
    out["mrr@10"] = RR @ 10
    out["ndcg@10"] = nDCG @ 10
    return out


def _per_query(qrels: dict, run: dict, measures: dict) -> tuple[dict[str, np.ndarray], list[str]]:
    """Per-query values (queries in sorted order); a query the run lacks scores 0, it is not skipped."""
    import ir_measures

    qids = sorted(qrels)
    run_dict = {q: (run.get(q) or {NO_HIT: 0.0}) for q in qids}
    names = {str(m): name for name, m in measures.items()}
    values: dict[str, dict[str, float]] = {name: dict.fromkeys(qids, 0.0) for name in measures}
    for row in ir_measures.iter_calc(list(measures.values()), {q: qrels[q] for q in qids}, run_dict):
        values[names[str(row.measure)]][row.query_id] = float(row.value)
    return {name: np.array([v[q] for q in qids]) for name, v in values.items()}, qids


def tolerant_qrels(bench: Benchmark) -> dict[str, dict[str, int]] | None:
    if bench.corpus is None or not any(c.dup_group for c in bench.corpus.values()):
        return None
    by_group = defaultdict(list)
    for c in bench.corpus.values():
        if c.dup_group:
            by_group[c.dup_group].append(c.chunk_id)
    out = {}
    for q in bench.queries:
        if q.query_id not in bench.qrels:
            continue
        rel = dict(bench.qrels[q.query_id])
        for cid in by_group.get(q.fields.get("dup_group"), []):
            rel.setdefault(cid, 1)
        out[q.query_id] = rel
    return out


def evaluate_run(bench: Benchmark, run: dict[str, dict[str, float]], ks: tuple[int, ...] = (1, 5, 10), strata: tuple[str, ...] = STRATA) -> dict:
    metrics = _measures(ks)
    qrels = {q: r for q, r in bench.qrels.items() if any(g > 0 for g in r.values())}
    per_query, qids = _per_query(qrels, run, metrics)
    fields = {q.query_id: q.fields for q in bench.queries}
    overall = {m: float(v.mean()) for m, v in per_query.items()}
    by = {}
    for name in strata:
        groups = defaultdict(list)
        for i, q in enumerate(qids):
            value = fields.get(q, {}).get(name)
            if value is not None:
                groups[str(value)].append(i)
        if groups:
            by[name] = {g: {"queries": len(idx), **{m: float(per_query[m][idx].mean()) for m in metrics}} for g, idx in sorted(groups.items())}
    tolerant = tolerant_qrels(bench)
    tolerant_overall = None
    if tolerant is not None:
        tq, _ = _per_query({q: r for q, r in tolerant.items() if q in qrels}, run, metrics)
        tolerant_overall = {m: float(v.mean()) for m, v in tq.items()}
    return {
        "queries_scored": len(qids),
        "queries_without_qrels": len([q for q in bench.queries if q.query_id not in qrels]),
        "queries_missing_from_run": len([q for q in qids if not run.get(q)]),
        "metrics": overall,
        "dup_group_tolerant": tolerant_overall,
        "by": by,
        "qrels_format": bench.qrels_format,
        "qrels_rows_for_other_queries_dropped": bench.qrels_dropped,
        "qrels_chunks_missing_from_corpus": (
            sum(1 for r in bench.qrels.values() for c in r if c not in bench.corpus) if bench.corpus is not None else None
        ),
        "corpus_fingerprint": bench.fingerprint[:16] if bench.fingerprint else None,
    }
