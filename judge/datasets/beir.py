"""BEIR-style retrieval benchmarks: queries, qrels, a chunk corpus, and the corpus fingerprint (docs/formats.md).

A qrels file's column count decides its layout (3 columns, or 4-column TREC), so the constant iteration column
is never read as a corpus id. A duplicated chunk id is refused (the last text would silently win, and the
fingerprint would still match). A fingerprint mismatch is refused, since the gold ids would silently stop
meaning anything, unless overridden, and then every figure is marked. 17-field queries are checked against the
card's value domains: an unknown value would otherwise become a stratum of its own.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judge.boundary import BadNumber, parse_number
from judge.datasets.base import read_json, read_jsonl, read_text
from judge.models import Record, Source
from judge.problems import DatasetError, Problem, problems_from_validation

STRATA = ("regime", "tipo", "registro", "fonte_origem", "modo", "persona")
FINGERPRINT = re.compile(r"[0-9a-fA-F]{16,64}")

_Text = Annotated[str, Field(min_length=1)]


class GaiaQuery(BaseModel):
    """A query in the 17-field schema, with the value domains the benchmark's card lists."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)
    query_id: _Text
    texto: _Text
    regime: Literal["pinpoint", "classe"]
    tipo: Literal["factual", "conceitual", "procedimental", "vaga", "busca_recurso"]
    registro: Literal["formal", "coloquial", "internetes", "keywords"]
    comprimento: Literal["curto", "medio", "longo"]
    clareza: Literal["clara", "com_esforco", "vaga"]
    persona: Literal["fundamental", "medio", "professor"]
    fonte_origem: _Text
    materia: str | None  # "quando aplicável"
    nivel: str | None
    chunk_fonte: _Text
    dup_group: _Text
    modo: Literal["single", "multichunk"]
    overlap_lexical: Annotated[float, Field(ge=0, le=1, strict=True)]
    gerado_por: str
    prompt_version: str


class BeirQuery(BaseModel):
    model_config = ConfigDict(extra="allow", allow_inf_nan=False)
    id: _Text = Field(alias="_id")
    text: str


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
    fields: dict = field(default_factory=dict)  # every other field of the corpus row (metadata's flattened in)


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
    mismatch: bool = False  # scored on a corpus whose fingerprint differs from the expected one (overridden)


def fingerprint(chunk_ids) -> str:
    """sha256 over the chunk ids, sorted in code-point order and joined with '\\n' (UTF-8)."""
    return hashlib.sha256("\n".join(sorted(chunk_ids)).encode("utf-8")).hexdigest()


def load_queries(path: Path) -> list[Query]:
    """Every query, or every problem: a missing field, a value outside its domain, a duplicated id."""
    problems: list[Problem] = []
    rows = read_jsonl(path, problems)
    queries = []
    first_line: dict[str, int] = {}
    for lineno, obj in rows:
        rid = f"line {lineno}"
        if not isinstance(obj, dict):
            problems.append(Problem(file=str(path), record_id=rid, message="a query must be a JSON object"))
            continue
        gaia = "query_id" in obj or "texto" in obj
        if not gaia and not ("_id" in obj or "text" in obj):
            problems.append(Problem(file=str(path), record_id=rid, field="_id", message="expected _id and text (BEIR) or query_id and texto (17-field schema)"))
            continue
        rid = str(obj.get("query_id" if gaia else "_id", rid))
        try:
            model = (GaiaQuery if gaia else BeirQuery).model_validate(obj)
        except ValidationError as e:
            problems.extend(problems_from_validation(e, str(path), rid))
            continue
        if gaia:
            query = Query(model.query_id, model.texto, {k: v for k, v in obj.items() if k not in ("query_id", "texto")})
        else:
            query = Query(model.id, model.text, {k: v for k, v in obj.items() if k not in ("_id", "text")})
        if query.query_id in first_line:
            problems.append(Problem(file=str(path), record_id=query.query_id, field="query_id" if gaia else "_id",
                                    message=f"duplicated query id (line {lineno}; first at line {first_line[query.query_id]})"))
            continue
        first_line[query.query_id] = lineno
        queries.append(query)
    if problems:
        raise DatasetError(problems)
    return queries


MAX_GRADE = 1_000  # relevance grades are 0-3 in practice; a grade beyond this is a typo or an attack


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
            qrels.setdefault(qid, {})[doc] = int(parse_number(grade, integer=True, minimum=-MAX_GRADE, maximum=MAX_GRADE))
        except BadNumber as e:
            problems.append(Problem(file=str(path), record_id=f"line {n}", field="score", message=f"not an integer grade: {e}"))
    if problems:
        raise DatasetError(problems)
    return qrels, ("4-column TREC" if width == 4 else "3-column")


def load_corpus(path: Path) -> dict[str, Chunk]:
    """Chunks by id; a missing id or text, or an id given twice, is a problem naming the line."""
    problems: list[Problem] = []
    if path.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise DatasetError([Problem(file=str(path), message="reading parquet needs pyarrow: pip install -e '.[parquet]'")]) from None
        try:
            rows = list(enumerate(pq.read_table(path).to_pylist(), start=1))
        except (OSError, ValueError) as e:  # missing file, not parquet (pyarrow's errors derive from these)
            raise DatasetError([Problem(file=str(path), message=f"cannot read as parquet: {e}")]) from None
        where = "row"
    else:
        rows = read_jsonl(path, problems)
        where = "line"
    chunks: dict[str, Chunk] = {}
    first: dict[str, int] = {}
    for n, obj in rows:
        c = _chunk(obj, str(path), f"{where} {n}", problems)
        if c is None:
            continue
        if c.chunk_id in first:
            problems.append(Problem(file=str(path), record_id=c.chunk_id, field="_id",
                                    message=f"duplicated chunk id ({where} {n}; first at {where} {first[c.chunk_id]}): one text per id"))
            continue
        first[c.chunk_id] = n
        chunks[c.chunk_id] = c
    if problems:
        raise DatasetError(problems[:50])
    return chunks


def _chunk(obj, file: str, where: str, problems: list[Problem]) -> Chunk | None:
    cid = next((obj.get(k) for k in ("_id", "chunk_id", "id") if isinstance(obj, dict) and obj.get(k) is not None), None)
    if cid is None or not isinstance(obj.get("text"), str):
        problems.append(Problem(file=file, record_id=where, field="_id/text", message="a chunk needs an id (_id, chunk_id or id) and a text string"))
        return None
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    fields = {**meta, **{k: v for k, v in obj.items() if k not in ("_id", "chunk_id", "id", "text", "metadata")}}
    return Chunk(str(cid), str(obj.get("title") or ""), obj["text"], fields)


def work_key(chunk: Chunk) -> str | None:
    """The work a chunk belongs to, as the card's dup_group defines it: author and title folded, a trailing
    parenthetical (an edition) dropped; not the source, so editions of one work in two sources meet."""
    title = str(chunk.fields.get("titulo") or chunk.title or "")
    author = str(chunk.fields.get("autor") or chunk.fields.get("author") or "")
    title = re.sub(r"\s*\([^()]*\)\s*$", "", title)
    if not title.strip():
        return None
    return f"{_fold(author)}|{_fold(title)}"


def _fold(text: str) -> str:
    text = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
    return " ".join(re.findall(r"\w+", text.casefold()))


def _check_fingerprint(value, where: str) -> str:
    if not isinstance(value, str) or not FINGERPRINT.fullmatch(value):
        raise DatasetError([Problem(file=where, message=(
            f"{value!r} is not a corpus fingerprint: expected 16 to 64 hex digits of the sha256 of the chunk ids "
            "(a shorter prefix would match almost any corpus)"))])
    return value.lower()


def _expected_fingerprint(bench_dir: Path) -> str | None:
    manifest = bench_dir / "manifest.json"
    if not manifest.exists():
        return None
    problems: list[Problem] = []
    data = read_json(manifest, problems)
    if problems:
        raise DatasetError(problems)
    value = data.get("corpus_fingerprint") if isinstance(data, dict) else None
    if isinstance(value, dict):
        value = value.get("sha256_chunk_ids")
    if value is None:
        return None
    return _check_fingerprint(value, f"{manifest}: field corpus_fingerprint.sha256_chunk_ids")


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
    if qrels is not None:
        qrels_path = Path(qrels)
        if not qrels_path.exists():  # anything else (a folder, a pipe, a link loop) is for the reading door to name
            raise DatasetError([Problem(file=str(qrels_path), message="no such qrels file")])
    else:
        qrels_path = next((p for p in (bench_dir / "qrels" / "test.tsv", bench_dir / "qrels.tsv") if p.exists()), None)
        if qrels_path is None:
            raise DatasetError([Problem(file=str(bench_dir), message="no qrels/test.tsv or qrels.tsv (or name one with --qrels)")])
    all_qrels, layout = load_qrels(qrels_path)
    known = {q.query_id for q in queries}
    dropped = sum(len(v) for k, v in all_qrels.items() if k not in known)
    qrels_kept = {k: v for k, v in all_qrels.items() if k in known}  # the benchmark's own queries only
    if corpus is not None:
        corpus_path = Path(corpus)
        if not corpus_path.is_file():
            raise DatasetError([Problem(file=str(corpus_path), message="no such corpus file")])
    else:
        corpus_path = next((p for p in (bench_dir / "corpus.jsonl", bench_dir / "corpus.parquet") if p.exists()), None)
    chunks = load_corpus(corpus_path) if corpus_path else None
    bench = Benchmark(bench_dir, queries, qrels_kept, chunks, layout, dropped)
    if expected_fingerprint is not None:
        bench.expected_fingerprint = _check_fingerprint(expected_fingerprint, "--fingerprint")
    else:
        bench.expected_fingerprint = _expected_fingerprint(bench_dir)
    if chunks is not None:
        bench.fingerprint = fingerprint(chunks)
        expected = bench.expected_fingerprint
        bench.mismatch = bool(expected) and not bench.fingerprint.startswith(expected)
        if bench.mismatch and not allow_mismatch:
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
        return _json_run(path, stripped)
    run: dict[str, dict[str, float]] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        cols = line.split()
        if not cols:
            continue
        if len(cols) != 6:
            problems.append(Problem(file=str(path), record_id=f"line {n}", message=f"expected 6 TREC run columns (qid Q0 docid rank score tag), got {len(cols)}"))
            continue
        try:  # ranked by score, as trec_eval does; the rank is checked, not used
            parse_number(cols[3], integer=True, minimum=0)
        except BadNumber as e:
            problems.append(Problem(file=str(path), record_id=f"line {n}", field="rank", message=str(e)))
            continue
        try:
            score = float(parse_number(cols[4]))  # NaN, inf, 1e999 and 5,000 digits refused: they make the ranking meaningless
        except BadNumber as e:
            problems.append(Problem(file=str(path), record_id=f"line {n}", field="score", message=str(e)))
            continue
        docs = run.setdefault(cols[0], {})
        if cols[2] in docs:
            problems.append(Problem(file=str(path), record_id=f"line {n}", field="docid",
                                    message=f"document {cols[2]!r} is ranked twice for query {cols[0]!r}; one score per document"))
            continue
        docs[cols[2]] = score
    if problems:
        raise DatasetError(problems[:50])
    return run


def _json_run(path: Path, text: str) -> dict[str, dict[str, float]]:
    from judge.boundary import parse_json

    data = parse_json(text, str(path))  # malformed, too deep, a lone surrogate, a number out of range: one line
    if not isinstance(data, dict):
        raise DatasetError([Problem(file=str(path), message=f"expected a JSON object {{qid: {{docid: score}}}} or {{qid: [docids]}}, found {type(data).__name__}")])
    run: dict[str, dict[str, float]] = {}
    problems: list[Problem] = []
    for qid, docs in data.items():
        if isinstance(docs, list) and all(isinstance(d, (str, int)) for d in docs):
            run[str(qid)] = {str(d): float(len(docs) - i) for i, d in enumerate(docs)}
        elif isinstance(docs, dict) and all(isinstance(s, (int, float)) and not isinstance(s, bool) for s in docs.values()):
            run[str(qid)] = {str(d): float(s) for d, s in docs.items()}
        else:
            problems.append(Problem(file=str(path), record_id=str(qid), message="expected a list of doc ids or {doc id: score}"))
    if problems:
        raise DatasetError(problems[:50])
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
