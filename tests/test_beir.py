"""BEIR-style benchmarks: loading, qrels layouts, the corpus fingerprint, retrieval metrics, grounding over chunks."""

import json
import re
import shutil
from pathlib import Path

import pytest

from judge.datasets.beir import (
    fingerprint,
    load_benchmark,
    load_qrels,
    load_queries,
    load_run,
)
from judge.metrics.retrieval import evaluate_run, retrieval_tables
from judge.problems import DatasetError
from judge.search.bm25 import BM25
from tests.conftest import ROOT, cli_inproc, shared

GAIA = ROOT / "tests" / "fixtures" / "gaia_mini"
RUN = (
    "gaia-q-0001 Q0 wl-fotossintese-001 1 9.0 t\ngaia-q-0001 Q0 wl-fotossintese-002 2 8.0 t\n"
    "gaia-q-0002 Q0 wl-fotossintese-002 1 9.0 t\n"
    "gaia-q-0004 Q0 dp-casmurro-ed2-014 1 9.0 t\ngaia-q-0004 Q0 dp-casmurro-ed1-014 2 5.0 t\n"
    "gaia-q-0005 Q0 obmep-2018-n1-q05 1 3.0 t\ngaia-q-0007 Q0 bncc-ef-ciencias-007 1 3.0 t\n"
)


@pytest.fixture
def run_file(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text(RUN)
    return path


def test_the_17_field_queries_and_both_qrels_layouts():
    queries = load_queries(GAIA / "queries.jsonl")
    assert len(queries) == 6 and queries[0].fields["regime"] == "pinpoint" and len(queries[0].fields) == 15
    three, layout3 = load_qrels(GAIA / "qrels" / "test.tsv")
    four, layout4 = load_qrels(GAIA / "qrels.trec.tsv")
    assert (layout3, layout4) == ("3-column", "4-column TREC")
    assert three == four  # the constant iteration column is never read as a corpus id
    assert "0" not in {d for docs in four.values() for d in docs}
    assert three["gaia-q-0002"] == {"wl-fotossintese-002": 2, "wl-fotossintese-001": 2}


def test_a_query_missing_a_field_names_it(tmp_path):
    bad = tmp_path / "queries.jsonl"
    rows = [json.loads(line) for line in (GAIA / "queries.jsonl").read_text().splitlines()]
    del rows[1]["dup_group"]
    bad.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    with pytest.raises(DatasetError) as info:
        load_queries(bad)
    assert [(p.record_id, p.field) for p in info.value.problems] == [("gaia-q-0002", "dup_group")]


def test_fingerprint_rule_and_mismatch_refused(tmp_path):
    ids = [json.loads(line)["_id"] for line in (GAIA / "corpus.jsonl").read_text().splitlines()]
    manifest = json.loads((GAIA / "manifest.json").read_text())
    assert fingerprint(ids)[:16] == manifest["corpus_fingerprint"]["sha256_chunk_ids"]
    assert fingerprint(reversed(ids)) == fingerprint(ids)  # order of the file does not matter
    bench = load_benchmark(GAIA)
    assert bench.fingerprint.startswith(manifest["corpus_fingerprint"]["sha256_chunk_ids"])
    other = tmp_path / "bench"
    shutil.copytree(GAIA, other)
    lines = (other / "corpus.jsonl").read_text().splitlines()
    (other / "corpus.jsonl").write_text("\n".join(lines[:-1]) + "\n")  # a different corpus revision
    result = cli_inproc("retrieval", str(other), str(GAIA / "qrels" / "test.tsv"))
    assert result.returncode == 2 and "fingerprint" in result.stderr and "silently" in result.stderr
    assert load_benchmark(other, allow_mismatch=True).fingerprint != bench.fingerprint


def test_retrieval_metrics_by_hand_stratified_and_dup_group_tolerant(run_file):
    result = cli_inproc("retrieval", str(GAIA), str(run_file), "--json")
    assert result.returncode == 0, result.stderr
    rep = json.loads(result.stdout)
    m = rep["metrics"]
    # per query hit@1: q1 1, q2 1, q4 0 (another edition first), q5 0, q7 1, q8 0 (absent from the run)
    assert m["hit@1"] == pytest.approx(3 / 6)
    assert m["hit@5"] == pytest.approx(4 / 6)
    assert m["recall@5"] == pytest.approx((1 + 0.5 + 1 + 0 + 1 + 0) / 6)
    assert m["mrr@10"] == pytest.approx((1 + 1 + 0.5 + 0 + 1 + 0) / 6)
    assert rep["queries_missing_from_run"] == 1
    assert rep["dup_group_tolerant"]["metrics"]["hit@1"] == pytest.approx(4 / 6)  # the other edition of Dom Casmurro counts
    assert rep["by"]["modo"]["multichunk"]["queries"] == 1 and rep["by"]["modo"]["single"]["queries"] == 5
    assert rep["by"]["regime"]["classe"]["hit@1"] == 1.0
    assert rep["corpus_fingerprint"] == json.loads((GAIA / "manifest.json").read_text())["corpus_fingerprint"]["sha256_chunk_ids"]


def test_run_files_trec_and_json(tmp_path, run_file):
    trec = load_run(run_file)
    as_json = tmp_path / "run.json"
    as_json.write_text(json.dumps({"gaia-q-0004": ["dp-casmurro-ed2-014", "dp-casmurro-ed1-014"]}))
    ranked = load_run(as_json)["gaia-q-0004"]
    assert max(ranked, key=ranked.get) == "dp-casmurro-ed2-014" == max(trec["gaia-q-0004"], key=trec["gaia-q-0004"].get)
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 d1 1\n")
    with pytest.raises(DatasetError, match="6 TREC run columns"):
        load_run(bad)


def test_arabic_beir_sample_with_qrels_filtered_to_its_queries(tmp_path):
    bench_dir = shared("external/beir_arcd_sample")
    bench = load_benchmark(bench_dir)
    assert len(bench.queries) == 50 and len(bench.corpus) == 255
    assert sum(len(v) for v in bench.qrels.values()) == 50 and bench.qrels_dropped == 652
    assert re.search(r"[\u0600-\u06ff]", bench.queries[0].text)  # right-to-left text, loaded as is
    ids = list(bench.corpus)
    bm25 = BM25([re.findall(r"\w+", bench.corpus[i].text) for i in ids])
    lines = []
    for q in bench.queries:
        scores = bm25.scores(re.findall(r"\w+", q.text))
        for rank, (i, s) in enumerate(sorted(scores.items(), key=lambda kv: -kv[1])[:10], start=1):
            lines.append(f"{q.query_id} Q0 {ids[i]} {rank} {s:.4f} bm25")
    run_path = tmp_path / "bm25.trec"
    run_path.write_text("\n".join(lines) + "\n")
    rep = json.loads(cli_inproc("retrieval", str(bench_dir), str(run_path), "--json").stdout)
    assert rep["queries_scored"] == 50 and rep["qrels_rows_for_other_queries_dropped"] == 652
    assert rep["qrels_chunks_missing_from_corpus"] == 1  # 49 of the 50 relevant docs are in the sample
    assert 0.5 < rep["metrics"]["hit@10"] <= 1.0 and rep["metrics"]["hit@1"] <= rep["metrics"]["hit@10"]
    assert rep["metrics"]["hit@10"] <= 49 / 50  # one relevant doc is absent from the corpus


def test_grounding_over_retrieved_chunks_scores_cited_chunks_against_the_qrels(tmp_path, run_file):
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        json.dumps({"record_id": "gaia-q-0001", "model": "m", "answer": "As plantas convertem luz solar, água e gás carbônico em glicose e oxigênio."}, ensure_ascii=False) + "\n"
        + json.dumps({"record_id": "gaia-q-0004", "model": "m", "answer": "Capitu tinha olhos de cigana oblíqua e dissimulada, como dizia José Dias."}, ensure_ascii=False) + "\n"
    )
    config = tmp_path / "c.yaml"
    config.write_text(
        f"name: chunks\ndataset: {{path: {GAIA}, format: beir, retrieval_run: {run_file}, top_k: 2}}\nanswers: {{path: {answers}}}\n"
        f"decompose: {{method: sentences}}\nadjudicate: {{judges: [deterministic]}}\ncache_dir: {tmp_path / 'cache'}\n"
    )
    result = cli_inproc("run", str(config), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    results = [json.loads(line) for line in Path(summary["run_dir"], "results.jsonl").read_text().splitlines()]
    by_id = {r["record_id"]: r for r in results}
    cited = {rid: {s["doc_id"] for a in r["answers"] for c in a["claims"] for s in c["evidence"]} for rid, r in by_id.items() if r["answers"]}
    relevant = {"gaia-q-0001": {"wl-fotossintese-001"}, "gaia-q-0004": {"dp-casmurro-ed1-014"}}
    hits = sum(len(cited[q] & relevant[q]) for q in cited)
    c = summary["scores"]["chunk_attribution"]
    assert c["answers"] == 2 and c["cited"] == sum(len(v) for v in cited.values()) and c["cited_relevant"] == hits
    assert c["precision"] == pytest.approx(hits / c["cited"])
    for r in results:  # sources are the retrieved chunks, ids kept
        for a in r["answers"]:
            for cl in a["claims"]:
                assert all(cand["doc_id"].startswith(("wl-", "dp-", "enem-", "bncc-", "obmep-")) for cand in cl["candidates"])


def test_a_parquet_corpus_reads_like_the_jsonl_one(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow is not installed (pip install -e '.[parquet]')")
    import pyarrow as pa

    from judge.datasets.beir import load_corpus

    rows = [json.loads(line) for line in (GAIA / "corpus.jsonl").read_text().splitlines()]
    table = pa.Table.from_pylist([{"chunk_id": r["_id"], "title": r["title"], "text": r["text"], "fonte": r["fonte"], "autor": r.get("autor")} for r in rows])
    pq.write_table(table, tmp_path / "corpus.parquet")
    from_parquet = load_corpus(tmp_path / "corpus.parquet")
    from_jsonl = load_corpus(GAIA / "corpus.jsonl")
    assert from_parquet.keys() == from_jsonl.keys()
    for cid, c in from_jsonl.items():
        p = from_parquet[cid]
        assert (p.title, p.text, p.fields["fonte"], p.fields.get("autor")) == (c.title, c.text, c.fields["fonte"], c.fields.get("autor"))
    assert fingerprint(from_parquet) == fingerprint(from_jsonl)


def _copy(tmp_path, name="bench") -> Path:
    other = tmp_path / name
    shutil.copytree(GAIA, other)
    return other


def _rewrite(path: Path, edit) -> None:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in edit(rows)), encoding="utf-8")


def test_dup_group_tolerance_reads_the_queries_dup_group_as_the_card_defines_it(tmp_path, run_file):
    # the card puts dup_group in queries.jsonl ("autor+título normalizados"); the corpus chunks carry no such
    # field here: each chunk's work comes from its author and title, tied to the query by its anchor chunk
    assert all("dup_group" not in json.loads(line) for line in (GAIA / "corpus.jsonl").read_text().splitlines())
    rep = json.loads(cli_inproc("retrieval", str(GAIA), str(run_file), "--json").stdout)
    tol = rep["dup_group_tolerant"]
    assert rep["dup_group_tolerance_unavailable"] is None and "author+title" in tol["basis"]
    # q4 retrieved the school edition first: strict miss, tolerant hit; nothing else changes
    assert tol["metrics"]["hit@1"] == pytest.approx(4 / 6) and rep["metrics"]["hit@1"] == pytest.approx(3 / 6)
    assert rep["by"]["registro"]["internetes"]["hit@1"] == 0.0 and tol["by"]["registro"]["internetes"]["hit@1"] == 1.0
    assert tol["by"]["registro"]["keywords"]["hit@10"] == 0.0  # q5's hit is another work (OBMEP), still a miss
    assert tol["queries_without_work"] == [] and set(tol["metrics"]) == {"hit@1", "hit@5", "hit@10"}

    # a corpus field the user names
    named = _copy(tmp_path, "named")
    _rewrite(named / "corpus.jsonl", lambda rows: [{**r, "obra": r["_id"].rsplit("-", 1)[0].replace("-ed1", "").replace("-ed2", "")} for r in rows])
    (named / "manifest.json").unlink()
    rep = json.loads(cli_inproc("retrieval", str(named), str(run_file), "--json", "--work-field", "obra").stdout)
    assert rep["dup_group_tolerant"]["basis"] == "corpus field obra" and rep["dup_group_tolerant"]["metrics"]["hit@1"] == pytest.approx(4 / 6)
    bad = cli_inproc("retrieval", str(named), str(run_file), "--work-field", "editora")
    assert bad.returncode == 2 and "editora" in bad.stderr and "Traceback" not in bad.stderr

    # said, not silent, when it cannot be computed
    bare = _copy(tmp_path, "bare")
    (bare / "corpus.jsonl").unlink()
    rep = json.loads(cli_inproc("retrieval", str(bare), str(run_file), "--json").stdout)
    assert rep["dup_group_tolerant"] is None and "no corpus" in rep["dup_group_tolerance_unavailable"]
    text = cli_inproc("retrieval", str(bare), str(run_file)).stdout
    assert "dup_group tolerance not computed: no corpus loaded" in " ".join(text.split())


def test_arabic_sample_says_why_no_dup_group_tolerance(tmp_path):
    bench = load_benchmark(shared("external/beir_arcd_sample"))
    rep = evaluate_run(bench, {})
    assert rep["dup_group_tolerant"] is None and "no dup_group" in rep["dup_group_tolerance_unavailable"]


@pytest.mark.parametrize("case", ["dup_chunk", "dup_query", "by", "fingerprint", "regime", "overlap", "qrels", "corpus", "run_json", "manifest"])
def test_bad_input_is_one_clear_line_never_a_traceback_or_silence(tmp_path, run_file, case):
    bench = _copy(tmp_path)
    extra: list[str] = []
    if case == "dup_chunk":  # the last text would win and the fingerprint (of distinct ids) would still match
        _rewrite(bench / "corpus.jsonl", lambda rows: rows + [{**rows[0], "text": "outro texto"}])
        expect = ["wl-fotossintese-001", "duplicated chunk id", "line 9", "line 1"]
    elif case == "dup_query":
        _rewrite(bench / "queries.jsonl", lambda rows: rows + [rows[2]])
        expect = ["gaia-q-0004", "duplicated query id", "query_id"]
    elif case == "by":
        extra = ["--by", "regime", "--by", "foo"]
        expect = ["field foo", "--by"]
    elif case == "fingerprint":
        extra = ["--fingerprint", "8"]
        expect = ["--fingerprint", "'8'", "16 to 64 hex digits"]
    elif case == "regime":
        _rewrite(bench / "queries.jsonl", lambda rows: [{**r, "regime": "xyz"} if r["query_id"] == "gaia-q-0005" else r for r in rows])
        expect = ["gaia-q-0005", "field regime", "pinpoint", "classe"]
    elif case == "overlap":
        _rewrite(bench / "queries.jsonl", lambda rows: [{**r, "overlap_lexical": "abc"} if r["query_id"] == "gaia-q-0001" else r for r in rows])
        expect = ["gaia-q-0001", "field overlap_lexical", "number"]
    elif case == "qrels":
        extra = ["--qrels", str(tmp_path / "missing.tsv")]
        expect = [str(tmp_path / "missing.tsv")]
    elif case == "corpus":
        extra = ["--corpus", str(tmp_path / "nowhere.parquet")]
        expect = [str(tmp_path / "nowhere.parquet")]
    elif case == "run_json":
        run_file = tmp_path / "run.json"
        run_file.write_text('{"gaia-q-0001": [')
        expect = [str(run_file), "malformed JSON"]
    else:
        (bench / "manifest.json").write_text('{"corpus_fingerprint": ')
        expect = ["manifest.json", "malformed JSON"]
    result = cli_inproc("retrieval", str(bench), str(run_file), *extra)
    assert result.returncode == 2, result.stdout
    assert "Traceback" not in result.stderr and result.stdout == ""
    for e in expect:
        assert e in result.stderr, (e, result.stderr)


def test_a_mismatched_corpus_names_what_drifted(tmp_path, run_file):
    bench = _copy(tmp_path)
    _rewrite(bench / "corpus.jsonl", lambda rows: [r for r in rows if r["_id"] != "wl-revolucao-003"])
    expected = json.loads((GAIA / "manifest.json").read_text())["corpus_fingerprint"]["sha256_chunk_ids"]
    rep = json.loads(cli_inproc("retrieval", str(bench), str(run_file), "--allow-fingerprint-mismatch", "--json").stdout)
    actual = fingerprint(json.loads(line)["_id"] for line in (bench / "corpus.jsonl").read_text().splitlines())[:16]
    assert rep["corpus_mismatch"] is True
    assert (rep["expected_corpus_fingerprint"], rep["corpus_fingerprint"]) == (expected, actual) and expected != actual
    assert rep["qrels_chunk_ids_missing_from_corpus"] == ["wl-revolucao-003"]
    text = cli_inproc("retrieval", str(bench), str(run_file), "--allow-fingerprint-mismatch").stdout
    flat = " ".join(text.split())
    assert text.count("MISMATCHED CORPUS") == 2  # both tables are marked
    assert f"fingerprint {actual}, expected {expected}" in flat and "wl-revolucao-003" in flat
    same = json.loads(cli_inproc("retrieval", str(GAIA), str(run_file), "--json").stdout)
    assert same["corpus_mismatch"] is False and same["qrels_chunk_ids_missing_from_corpus"] == []


def test_retrieval_tables_fit_80_columns_without_cutting_numbers(run_file):
    from io import StringIO

    from rich.console import Console

    rep = evaluate_run(load_benchmark(GAIA), load_run(run_file), strata=("fonte_origem", "regime", "tipo", "registro", "modo", "persona", "clareza", "chunk_fonte"))
    out = StringIO()
    console = Console(file=out, width=80, highlight=False)
    for t in retrieval_tables(rep, str(GAIA)):
        console.print(t)
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text
    lines = text.splitlines()
    row = next(line for line in lines if line.split()[:1] == ["all"] and "0.500" in line)  # the hit@k table
    assert row.split()[1:] == ["6", "0.500", "0.667", "0.667", "0.667", "0.667", "0.667"]  # strict, then tolerant
    assert any(line.split()[:1] == ["bncc-ef-ciencias-007"] for line in lines)  # a stratum value, whole
    cli = cli_inproc("retrieval", str(GAIA), str(run_file), "--by", "chunk_fonte", "--by", "regime")  # not a tty: 80 columns
    assert cli.returncode == 0 and "…" not in cli.stdout and max(len(line) for line in cli.stdout.splitlines()) <= 80
