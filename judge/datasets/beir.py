"""BEIR-style retrieval benchmarks: queries, qrels, a chunk corpus, and the corpus fingerprint.

- queries.jsonl in the 17-field schema of the Portuguese education benchmark (``query_id``, ``texto``,
  ``regime``, ``tipo``, ...) or plain BEIR (``_id``, ``text``, anything else kept as fields);
- qrels: ``qrels/test.tsv`` with 3 columns (``query-id corpus-id score``, header optional) or the 4-column
  TREC variant (``query-id iteration corpus-id score``): the column count decides, so the constant
  iteration column is never read as a corpus id;
- corpus: JSONL (``_id`` or ``id`` or ``chunk_id``, ``title``, ``text``; ``dup_group`` optional) or parquet;
- fingerprint: sha256 of the corpus chunk ids, sorted in code-point order and joined with ``\\n``, UTF-8;
  shown as its first 16 hex digits. A manifest.json (``corpus_fingerprint`` / ``sha256_chunk_ids``) or a
  config value states the expected one; a mismatch is refused, because the gold ids would silently stop
  meaning anything, unless the caller overrides it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from judge.datasets.base import read_jsonl, read_text
from judge.models import Record, Source
from judge.problems import DatasetError, Problem

GAIA_FIELDS = (
    "query_id", "texto", "regime", "tipo", "registro", "comprimento", "clareza", "persona", "fonte_origem",
    "materia", "nivel", "chunk_fonte", "dup_group", "modo", "overlap_lexical", "gerado_por", "prompt_version",
)
STRATA = ("regime", "tipo", "registro", "fonte_origem", "modo", "persona")


@dataclass
class Query:
    query_id: str
    text: str
    fields: dict = field(default_factory=dict)


@dataclass
class Chunk:
    chunk_id: str
    title: str
    text: str
    dup_group: str | None = None


@dataclass
class Benchmark:
    path: Path
    queries: list[Query]
    qrels: dict[str, dict[str, int]]
    corpus: dict[str, Chunk] | None
    qrels_format: str  # "3-column" or "4-column TREC"
    qrels_dropped: int  # rows for queries the benchmark does not hold
    fingerprint: str | None = None
    expected_fingerprint: str | None = None


def fingerprint(chunk_ids) -> str:
    """sha256 over the chunk ids, sorted in code-point order and joined with '\\n' (UTF-8)."""
    return hashlib.sha256("\n".join(sorted(chunk_ids)).encode("utf-8")).hexdigest()


def load_queries(path: Path) -> list[Query]:
    problems: list[Problem] = []
    rows = read_jsonl(path, problems)
    queries = []
    for lineno, obj in rows:
        rid = f"line {lineno}"
        if not isinstance(obj, dict):
            problems.append(Problem(file=str(path), record_id=rid, message="a query must be a JSON object"))
            continue
        if "query_id" in obj or "texto" in obj:  # the 17-field schema
            missing = [f for f in GAIA_FIELDS if f not in obj]
            rid = str(obj.get("query_id", rid))
            for f in missing:
                problems.append(Problem(file=str(path), record_id=rid, field=f, message="missing (17-field query schema)"))
            if missing:
                continue
            queries.append(Query(str(obj["query_id"]), str(obj["texto"]), {k: v for k, v in obj.items() if k not in ("query_id", "texto")}))
        elif "_id" in obj and "text" in obj:
            queries.append(Query(str(obj["_id"]), str(obj["text"]), {k: v for k, v in obj.items() if k not in ("_id", "text")}))
        else:
            problems.append(Problem(file=str(path), record_id=rid, field="_id", message="expected _id and text (BEIR) or query_id and texto (17-field schema)"))
    if problems:
        raise DatasetError(problems)
    return queries


def load_qrels(path: Path) -> tuple[dict[str, dict[str, int]], str]:
    """qrels as {query: {corpus id: grade}}, and which layout the file had."""
    problems: list[Problem] = []
    text = read_text(path, problems)
    if text is None:
        raise DatasetError(problems)
    rows = [(n, line.split()) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if rows and not rows[0][1][-1].lstrip("-").isdigit():
        rows = rows[1:]  # a header
    widths = {len(cols) for _, cols in rows}
    if len(widths) > 1:
        raise DatasetError([Problem(file=str(path), message=f"rows have different numbers of columns ({sorted(widths)}): neither 3-column BEIR nor 4-column TREC")])
    width = widths.pop() if widths else 3
    if width not in (3, 4):
        raise DatasetError([Problem(file=str(path), message=f"{width} columns: expected 3 (query-id corpus-id score) or 4 (TREC: query-id iteration corpus-id score)")])
    qrels: dict[str, dict[str, int]] = {}
    for n, cols in rows:
        qid, doc, grade = (cols[0], cols[2], cols[3]) if width == 4 else (cols[0], cols[1], cols[2])
        try:
            qrels.setdefault(qid, {})[doc] = int(grade)
        except ValueError:
            problems.append(Problem(file=str(path), record_id=f"line {n}", field="score", message=f"not an integer grade: {grade!r}"))
    if problems:
        raise DatasetError(problems)
    return qrels, ("4-column TREC" if width == 4 else "3-column")


def load_corpus(path: Path) -> dict[str, Chunk]:
    if path.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise DatasetError([Problem(file=str(path), message="reading parquet needs pyarrow: pip install -e '.[parquet]'")]) from None

        table = pq.read_table(path).to_pylist()
        return {c.chunk_id: c for c in (_chunk(row, str(path), i) for i, row in enumerate(table)) if c}
    problems: list[Problem] = []
    chunks = {}
    for lineno, obj in read_jsonl(path, problems):
        c = _chunk(obj, str(path), lineno, problems)
        if c:
            chunks[c.chunk_id] = c
    if problems:
        raise DatasetError(problems)
    return chunks


def _chunk(obj, file: str, where, problems: list[Problem] | None = None) -> Chunk | None:
    cid = next((obj.get(k) for k in ("_id", "chunk_id", "id") if isinstance(obj, dict) and obj.get(k) is not None), None)
    if cid is None or "text" not in obj:
        p = Problem(file=file, record_id=f"line {where}", field="_id/text", message="a chunk needs an id (_id, chunk_id or id) and text")
        if problems is None:
            raise DatasetError([p])
        problems.append(p)
        return None
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return Chunk(str(cid), str(obj.get("title") or ""), str(obj["text"]), obj.get("dup_group") or meta.get("dup_group"))


def _expected_fingerprint(bench_dir: Path) -> str | None:
    manifest = bench_dir / "manifest.json"
    if not manifest.exists():
        return None
    data = json.loads(manifest.read_text(encoding="utf-8"))
    value = data.get("corpus_fingerprint", data)
    if isinstance(value, dict):
        value = value.get("sha256_chunk_ids")
    return str(value) if value else None


def load_benchmark(
    bench_dir: str | Path,
    corpus: str | Path | None = None,
    expected_fingerprint: str | None = None,
    allow_mismatch: bool = False,
    qrels: str | Path | None = None,
) -> Benchmark:
    """A benchmark folder: queries.jsonl, qrels/test.tsv (or qrels.tsv), corpus.jsonl|parquet, manifest.json."""
    bench_dir = Path(bench_dir)
    queries = load_queries(bench_dir / "queries.jsonl")
    candidates = [Path(qrels)] if qrels else [bench_dir / "qrels" / "test.tsv", bench_dir / "qrels.tsv"]
    qrels_path = next((p for p in candidates if p.exists()), None)
    if qrels_path is None:
        raise DatasetError([Problem(file=str(bench_dir), message="no qrels/test.tsv or qrels.tsv")])
    all_qrels, layout = load_qrels(qrels_path)
    known = {q.query_id for q in queries}
    dropped = sum(len(v) for k, v in all_qrels.items() if k not in known)
    qrels_kept = {k: v for k, v in all_qrels.items() if k in known}  # the benchmark's own queries only
    corpus_path = Path(corpus) if corpus else next((p for p in (bench_dir / "corpus.jsonl", bench_dir / "corpus.parquet") if p.exists()), None)
    chunks = load_corpus(corpus_path) if corpus_path else None
    bench = Benchmark(bench_dir, queries, qrels_kept, chunks, layout, dropped)
    bench.expected_fingerprint = expected_fingerprint or _expected_fingerprint(bench_dir)
    if chunks is not None:
        bench.fingerprint = fingerprint(chunks)
        expected = bench.expected_fingerprint
        if expected and not bench.fingerprint.startswith(expected.lower()) and not allow_mismatch:
            raise DatasetError([Problem(
                file=str(corpus_path),
                message=(f"corpus fingerprint {bench.fingerprint[:16]} does not match the expected {expected[:16]}: the qrels' "
                         "chunk ids belong to another revision of the corpus and would silently mean nothing. Use the corpus "
                         "revision the benchmark was built on, or override knowingly (--allow-fingerprint-mismatch)."),
            )])
    return bench


def load_run(path: str | Path) -> dict[str, dict[str, float]]:
    """A retrieval run: TREC (``qid Q0 docid rank score tag``) or JSON ({qid: {docid: score}} or {qid: [docids]})."""
    path = Path(path)
    problems: list[Problem] = []
    text = read_text(path, problems)
    if text is None:
        raise DatasetError(problems)
    stripped = text.lstrip()
    if stripped.startswith("{"):
        data = json.loads(stripped)
        run = {}
        for qid, docs in data.items():
            if isinstance(docs, list):
                run[str(qid)] = {str(d): float(len(docs) - i) for i, d in enumerate(docs)}
            else:
                run[str(qid)] = {str(d): float(s) for d, s in docs.items()}
        return run
    run: dict[str, dict[str, float]] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        cols = line.split()
        if not cols:
            continue
        if len(cols) != 6:
            problems.append(Problem(file=str(path), record_id=f"line {n}", message=f"expected 6 TREC run columns (qid Q0 docid rank score tag), got {len(cols)}"))
            continue
        try:
            run.setdefault(cols[0], {})[cols[2]] = float(cols[4])
        except ValueError:
            problems.append(Problem(file=str(path), record_id=f"line {n}", field="score", message=f"not a number: {cols[4]!r}"))
    if problems:
        raise DatasetError(problems)
    return run


def grounding_records(bench: Benchmark, run: dict[str, dict[str, float]], top_k: int = 5) -> list[Record]:
    """One record per query: its top-k retrieved chunks as sources (ids kept), qrels in meta, for judging
    answers written from retrieved chunks."""
    if bench.corpus is None:
        raise DatasetError([Problem(file=str(bench.path), message="grounding over retrieved chunks needs the corpus")])
    records = []
    for q in bench.queries:
        ranked = sorted(run.get(q.query_id, {}).items(), key=lambda kv: (-kv[1], kv[0]))[:top_k]
        sources = [Source(doc_id=d, title=bench.corpus[d].title or None, text=bench.corpus[d].text) for d, _ in ranked if d in bench.corpus]
        if not sources:
            continue
        records.append(Record(id=q.query_id, question=q.text, sources=sources, meta={**q.fields, "qrels": bench.qrels.get(q.query_id, {})}))
    return records
