"""A retrieval run against a BEIR benchmark's qrels: hit@k, recall@k, MRR@10, nDCG@10 (ir-measures over
pytrec_eval; ranx's numba compilation costs 4-35 s per process), overall and by query fields, strict and
dup_group-tolerant (docs/formats.md): tolerant hit@k counts a hit on any chunk of the query's work, so another
edition of the same work is not punished; only hit@k, since with every chunk of a work relevant recall and
nDCG would measure the work's length. Queries without qrels are left out (and counted).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from judge.datasets.beir import STRATA, Benchmark, work_key
from judge.problems import DatasetError, Problem

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


@dataclass
class Tolerance:
    qrels: dict[str, dict[str, int]]  # strict qrels plus every chunk of the query's work (grade 1)
    basis: str  # where each chunk's work was read from
    queries_without_work: list[str]  # queries whose dup_group no corpus chunk could be tied to (scored strict)


def dup_group_tolerance(bench: Benchmark, work_field: str | None = None) -> tuple[Tolerance | None, str | None]:
    """(tolerance, None), or (None, why it cannot be computed). A named field no chunk has is an input error."""
    if bench.corpus is None:
        return None, "no corpus loaded: the work each chunk belongs to is unknown"
    groups = {q.query_id: q.fields.get("dup_group") for q in bench.queries if q.fields.get("dup_group")}
    if not groups:
        return None, "the queries have no dup_group field"
    chunks = bench.corpus.values()
    if work_field:
        work = {c.chunk_id: str(c.fields[work_field]) for c in chunks if c.fields.get(work_field) not in (None, "")}
        if not work:
            raise DatasetError([Problem(file=str(bench.path), field=work_field,
                                        message=f"no corpus chunk has the field {work_field!r} named by --work-field")])
        basis = f"corpus field {work_field}"
    elif any(c.fields.get("dup_group") for c in chunks):
        work = {c.chunk_id: str(c.fields["dup_group"]) for c in chunks if c.fields.get("dup_group")}
        basis = "corpus field dup_group"
    else:
        work = {c.chunk_id: k for c in chunks if (k := work_key(c))}
        if not work:
            return None, "the corpus chunks have no title or author to tell their work by (name the field with --work-field)"
        basis = "author+title of each chunk, tied to the queries' dup_group by their anchor and qrels chunks"
    works_of: dict[str, set[str]] = defaultdict(set)  # dup_group -> works
    values = set(work.values())
    for q in bench.queries:
        g = groups.get(q.query_id)
        if g is None:
            continue
        anchors = [q.fields.get("chunk_fonte"), *bench.qrels.get(q.query_id, {})]
        works_of[g].update(work[c] for c in anchors if c in work)
        if g in values:
            works_of[g].add(g)
    chunks_of: dict[str, list[str]] = defaultdict(list)
    for cid, w in work.items():
        chunks_of[w].append(cid)
    out, orphans = {}, []
    for qid, rel in bench.qrels.items():
        rel = dict(rel)
        works = works_of.get(groups.get(qid), set())
        if not works:
            orphans.append(qid)
        for w in works:
            for cid in chunks_of[w]:
                rel.setdefault(cid, 1)
        out[qid] = rel
    return Tolerance(out, basis, sorted(orphans)), None


def _stratified(per_query: dict[str, np.ndarray], qids: list[str], fields: dict, strata: tuple[str, ...]) -> dict:
    by = {}
    for name in strata:
        groups = defaultdict(list)
        for i, q in enumerate(qids):
            value = fields.get(q, {}).get(name)
            if value is not None:
                groups[str(value)].append(i)
        if groups:
            by[name] = {g: {"queries": len(idx), **{m: float(v[idx].mean()) for m, v in per_query.items()}} for g, idx in sorted(groups.items())}
    return by


def evaluate_run(
    bench: Benchmark,
    run: dict[str, dict[str, float]],
    ks: tuple[int, ...] = (1, 5, 10),
    strata: tuple[str, ...] | None = None,
    work_field: str | None = None,
) -> dict:
    """Strict figures overall and per stratum, tolerant hit@k, and what drifted. ``strata`` None: the default
    fields, those the queries lack skipped; named ones must be held by some query (else an input error)."""
    fields = {q.query_id: q.fields for q in bench.queries}
    if strata:
        unknown = [s for s in strata if not any(s in f for f in fields.values())]
        if unknown:
            held = sorted({k for f in fields.values() for k in f})
            raise DatasetError([Problem(file=str(bench.path / "queries.jsonl"), field=s,
                                        message=f"no query has this field to stratify by (--by); the queries hold: {', '.join(held)}")
                                for s in unknown])
    strata = strata or STRATA
    metrics = _measures(ks)
    qrels = {q: r for q, r in bench.qrels.items() if any(g > 0 for g in r.values())}
    per_query, qids = _per_query(qrels, run, metrics)
    overall = {m: float(v.mean()) for m, v in per_query.items()}
    tolerance, why_not = dup_group_tolerance(bench, work_field)
    tolerant = None
    if tolerance is not None:
        hits = {f"hit@{k}": metrics[f"hit@{k}"] for k in ks}
        tq, tqids = _per_query({q: r for q, r in tolerance.qrels.items() if q in qrels}, run, hits)
        tolerant = {
            "basis": tolerance.basis,
            "metrics": {m: float(v.mean()) for m, v in tq.items()},
            "by": _stratified(tq, tqids, fields, strata),
            "queries_without_work": tolerance.queries_without_work,
        }
    missing = sorted({c for r in bench.qrels.values() for c in r if c not in bench.corpus}) if bench.corpus is not None else None
    return {
        "queries_scored": len(qids),
        "queries_without_qrels": len([q for q in bench.queries if q.query_id not in qrels]),
        "queries_missing_from_run": len([q for q in qids if not run.get(q)]),
        "metrics": overall,
        "by": _stratified(per_query, qids, fields, strata),
        "dup_group_tolerant": tolerant,
        "dup_group_tolerance_unavailable": why_not,
        "qrels_format": bench.qrels_format,
        "qrels_rows_for_other_queries_dropped": bench.qrels_dropped,
        "qrels_chunks_missing_from_corpus": len(missing) if missing is not None else None,
        "qrels_chunk_ids_missing_from_corpus": missing,
        "corpus_fingerprint": bench.fingerprint[:16] if bench.fingerprint else None,
        "expected_corpus_fingerprint": bench.expected_fingerprint[:16] if bench.expected_fingerprint else None,
        "corpus_mismatch": bench.mismatch,
    }


def _f(x) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def retrieval_tables(rep: dict, name: str) -> list:
    """The report as rich tables that fit an 80-column terminal: hit@k (strict, and tolerant where known),
    then recall/MRR/nDCG; the stratum column wraps, numbers never do. Then plain notes of what drifted."""
    from rich import box
    from rich.table import Table

    hits = [m for m in rep["metrics"] if m.startswith("hit@")]
    rest = [m for m in rep["metrics"] if not m.startswith("hit@")]
    tol = rep["dup_group_tolerant"]
    mark = "MISMATCHED CORPUS: " if rep["corpus_mismatch"] else ""
    strata = [("all", rep["queries_scored"], rep["metrics"], (tol or {}).get("metrics"))]
    for field, groups in rep["by"].items():
        strata.append((f"{field}:", None, None, None))  # a heading row; its values follow, indented
        for value, row in groups.items():
            strata.append((f"  {value}", row["queries"], row, ((tol or {}).get("by", {}).get(field) or {}).get(value)))

    def table(title: str, cols: list[tuple[str, str, bool]]) -> Table:
        t = Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 1), title_justify="left")
        t.add_column("stratum", overflow="fold", ratio=1)
        t.add_column("n", justify="right", no_wrap=True)
        for header, _, _ in cols:
            t.add_column(header, justify="right", no_wrap=True)
        for label, n, strict, tolerant in strata:
            if n is None:
                t.add_row(label, *[""] * (len(cols) + 1))
                continue
            t.add_row(label, str(n), *(_f((tolerant if is_tol else strict).get(m)) if (tolerant if is_tol else strict) else "n/a"
                                         for _, m, is_tol in cols))
        return t

    hit_cols = [(m, m, False) for m in hits] + ([(m.replace("hit", "tol"), m, True) for m in hits] if tol else [])
    first = table(f"{mark}{name}: hit@k" + (", tol@k = dup_group-tolerant hit@k" if tol else ""), hit_cols)
    second = table(f"{mark}{name}: recall (R@k), MRR, nDCG", [(m.replace("recall", "R"), m, False) for m in rest])
    return [first, second]


def retrieval_notes(rep: dict) -> list[str]:
    """What the tables cannot show: the corpus drift, ids missing, tolerance and its basis, left-out rows."""
    notes = [f"{rep['queries_scored']} queries scored; qrels {rep['qrels_format']}; corpus fingerprint {rep['corpus_fingerprint'] or 'n/a (no corpus loaded)'}"]
    if rep["corpus_mismatch"]:
        notes.append(f"computed on a MISMATCHED corpus: fingerprint {rep['corpus_fingerprint']}, expected {rep['expected_corpus_fingerprint']}")
    missing = rep["qrels_chunk_ids_missing_from_corpus"]
    if missing:
        shown = ", ".join(missing[:10]) + (f", ... ({len(missing) - 10} more; --json lists all)" if len(missing) > 10 else "")
        notes.append(f"{len(missing)} relevant chunk id(s) of the qrels are not in the corpus: {shown}")
    tol = rep["dup_group_tolerant"]
    if tol:
        notes.append(f"dup_group-tolerant hit@k: a chunk of the query's work counts; work read from: {tol['basis']}")
        if tol["queries_without_work"]:
            notes.append(f"{len(tol['queries_without_work'])} queries' dup_group matched no corpus chunk (scored strict): {', '.join(tol['queries_without_work'][:10])}")
    else:
        notes.append(f"dup_group tolerance not computed: {rep['dup_group_tolerance_unavailable']}")
    if rep["qrels_rows_for_other_queries_dropped"]:
        notes.append(f"{rep['qrels_rows_for_other_queries_dropped']} qrels rows for queries not in queries.jsonl were left out")
    if rep["queries_missing_from_run"]:
        notes.append(f"{rep['queries_missing_from_run']} queries are missing from the run (scored 0)")
    return notes
