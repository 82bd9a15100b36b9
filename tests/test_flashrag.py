"""FlashRAG: loading both corpus forms, every branch of the alignment rule, drops with reasons, the long-context
builder, EM/F1, and chunk- against title-level gold."""

import json
import random

import pytest

from judge.align import align, paragraph_matches, sentence_matches
from judge.datasets.flashrag import TitleIndex, load_rows, parse_chunk, strip_suffix
from judge.longcontext import build
from judge.metrics.qa import evaluate_flashrag, exact_match, gold_at_k, token_f1
from judge.problems import DatasetError
from tests.conftest import cli_inproc, shared

RIVER = ("Beta River is a long river that flows through the plains of Norland and reaches the sea near Gamma Port after "
         "passing three old mills and a stone bridge")
CHUNKS = [
    {"id": "1", "contents": '"Alpha Town"\nAlpha Town Alpha Town is a town in Norland. It was founded in 1820 by settlers from the coast. The town has a famous bridge.'},
    {"id": "2", "contents": '"Alpha Town"\nThe bridge of Alpha Town was built in 1901 and rebuilt in 1950 after a flood destroyed it. Today it carries a railway.'},
    {"id": "3", "title": "Beta River", "text": RIVER},  # the other corpus form
    {"id": "4", "contents": '"Méditerranée"\nMéditerranée is a French film directed in 1963 by Jean-Daniel Pollet about the sea.'},
    {"id": "5", "contents": '"Gamma Port"\nGamma Port is a harbour town at the mouth of the Beta River.'},
] + [{"id": str(i), "contents": f'"Filler {i}"\nFiller text number {i} about nothing in particular.'} for i in range(6, 40)]


def hotpot(row_id, facts, context):
    return {"id": row_id, "question": f"q {row_id}", "golden_answers": ["1820"],
            "metadata": {"supporting_facts": {"title": [t for t, _ in facts], "sent_id": [s for _, s in facts]},
                         "context": {"title": list(context), "sentences": list(context.values())}, "type": "bridge"}}


def musique(row_id, paragraphs):
    return {"id": row_id, "question": f"q {row_id}", "golden_answers": ["Gamma Port"],
            "metadata": {"question_decomposition": [{"id": i, "question": "?", "answer": "?", "support_paragraph": {"title": t, "paragraph_text": p, "is_supporting": True}} for i, (t, p) in enumerate(paragraphs)]}}


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in CHUNKS), encoding="utf-8")
    return path


def test_both_corpus_forms_and_the_title_index(corpus):
    assert parse_chunk(CHUNKS[0]).title == "Alpha Town" and parse_chunk(CHUNKS[2]).title == "Beta River"
    index = TitleIndex(corpus)
    assert len(index) == len(CHUNKS)
    chunks, used = index.chunks("Alpha Town")
    assert [c.id for c in chunks] == ["1", "2"] and used == "Alpha Town"
    chunks, used = index.chunks("Méditerranée (1963 film)")
    assert [c.id for c in chunks] == ["4"] and used == "Méditerranée"
    assert index.chunks("Nowhere")[1] is None
    assert strip_suffix("A (b)") == "A" and strip_suffix("A") is None
    assert index.titles()["3"] == "Beta River"


def test_every_branch_of_the_rule_and_the_drops(corpus):
    index = TitleIndex(corpus)
    alpha = ["Alpha Town is a town in Norland.", "It was founded in 1820 by settlers from the coast.",
             "The bridge of Alpha Town was constructed in 1901 and rebuilt in 1950 after a flood destroyed it."]
    rows = [
        # kept: substring (chunk 1), trigram recall (chunk 2: "constructed" for "built"), suffix fallback (chunk 4)
        hotpot("h1", [("Alpha Town", 1), ("Alpha Town", 2), ("Méditerranée (1963 film)", 0)],
               {"Alpha Town": alpha, "Méditerranée (1963 film)": ["Méditerranée is a French film directed in 1963 by Jean-Daniel Pollet about the sea."]}),
        hotpot("h2", [("Zeta Mountain", 0)], {"Zeta Mountain": ["Zeta Mountain is tall."]}),  # title not in corpus
        hotpot("h3", [("Alpha Town", 0)], {"Alpha Town": ["Completely unrelated words about cooking pasta at home tonight."]}),  # no chunk
        hotpot("h4", [("Alpha Town", 7)], {"Alpha Town": alpha}),  # sentence id outside the context
        # 2Wiki layout: context as [title, [sentences]] pairs under "content"-free list form
        {"id": "w1", "question": "q", "golden_answers": ["x"], "metadata": {"supporting_facts": [["Gamma Port", 0]], "context": [["Gamma Port", ["Gamma Port is a harbour town at the mouth of the Beta River."]]]}},
        musique("m1", [("Beta River", RIVER + " It is popular with anglers."), ("Gamma Port", "Gamma Port is a harbour town at the mouth of the Beta River.")]),
        musique("m2", [("Beta River", " ".join(w if i != 14 else "touches" for i, w in enumerate(RIVER.split())))]),
        musique("m3", [("Beta River", " ".join((w if i != 12 else "hills") for i, w in enumerate(RIVER.split()[:20])) + " where farmers grow wheat and barley in summer")]),
        musique("m4", [("Beta River", RIVER), ("Gamma Port", "A poem about the moon and the stars over the quiet hills.")]),  # second hop fails
    ]
    kept, stats = align(rows, index)
    got = {r["id"]: r["metadata"]["gold_doc_ids"] for r in kept}
    assert set(got) == {"h1", "w1", "m1", "m2", "m3"}
    assert got["h1"] == ["1", "2", "4"] and got["w1"] == ["5"] and got["m1"] == ["3", "5"] and got["m2"] == got["m3"] == ["3"]
    rep = stats.as_dict()
    assert (rep["kept"], rep["total"], rep["dropped"]) == (5, 9, 4)
    assert rep["rate"] == pytest.approx(5 / 9)
    assert rep["reasons"] == {"title_not_in_corpus": 1, "no_chunk_matched": 2, "sentence_not_in_context": 1}
    assert rep["suffix_fallbacks"] == 1
    for branch in ("sentence:substring", "sentence:trigram_recall", "paragraph:substring", "paragraph:5gram_jaccard", "paragraph:3gram_recall"):
        assert rep["match_branches"].get(branch, 0) >= 1, branch
    h1 = next(r for r in kept if r["id"] == "h1")
    assert h1["metadata"]["type"] == "bridge" and h1["question"] == "q h1"  # original fields verbatim
    assert sentence_matches(alpha[2], CHUNKS[1]["contents"]) == "trigram_recall"
    assert paragraph_matches("unrelated", RIVER) is None


def test_align_cli_writes_rows_and_statistics(corpus, tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps(musique("m1", [("Beta River", RIVER)])) + "\n" + json.dumps(musique("m9", [("Nowhere", "x")])) + "\n")
    out = tmp_path / "aligned.jsonl"
    result = cli_inproc("align", str(data), str(corpus), "--out", str(out), "--json")
    assert result.returncode == 0, result.stderr
    rep = json.loads(result.stdout)
    assert (rep["kept"], rep["total"], rep["reasons"]) == (1, 2, {"title_not_in_corpus": 1})
    assert [json.loads(l)["metadata"]["gold_doc_ids"] for l in out.read_text().splitlines()] == [["3"]]
    assert cli_inproc("align", str(data), str(corpus), "--out", str(data)).returncode == 2


def test_long_context_builder_is_deterministic_per_sample(corpus, tmp_path):
    index = TitleIndex(corpus)
    row = {"id": "s1", "question": "q", "golden_answers": ["a"], "metadata": {"gold_doc_ids": ["2", "5"]}}
    a = build(row, index, num_docs=10, seed=4)
    b = build(row, index, num_docs=10, seed=4)
    assert a == b
    assert set(a) == {"id", "question", "golden_answers", "gold_doc_ids", "doc_ids", "gold_positions", "num_docs", "context"}
    assert a["num_docs"] == 10 and len(a["doc_ids"]) == 10 and len(set(a["doc_ids"])) == 10
    assert [a["doc_ids"][p - 1] for p in a["gold_positions"]] == [d for d in a["doc_ids"] if d in {"2", "5"}]
    docs = a["context"].split("\n\n")
    assert len(docs) == 10 and docs[0].startswith("Document 1:\n")
    first_gold = a["gold_positions"][0]
    chunk = index.chunks(index.titles()[a["doc_ids"][first_gold - 1]])[0]
    gold_chunk = next(c for c in chunk if c.id == a["doc_ids"][first_gold - 1])
    assert docs[first_gold - 1] == f"Document {first_gold}:\n{gold_chunk.title}\n{gold_chunk.text}"
    # the per-sample seed is f"{seed}:{sample_id}": another sample (or seed) orders differently
    other = build({**row, "id": "s2"}, index, num_docs=10, seed=4)
    assert other["doc_ids"] != a["doc_ids"]
    assert build(row, index, num_docs=10, seed=5)["doc_ids"] != a["doc_ids"]
    # the rule as the card states it, recomputed independently
    rng = random.Random("4:s1")
    assert rng.randrange(len(index)) in range(len(index))
    with pytest.raises(DatasetError, match="do not fit"):
        build(row, index, num_docs=1)


def test_squad_exact_match_and_f1_by_hand():
    assert exact_match("The Eiffel Tower!", ["eiffel tower"]) == 1.0
    assert exact_match("Eiffel", ["eiffel tower"]) == 0.0
    # prediction "the big red barn" -> [big, red, barn]; gold "a red barn" -> [red, barn]: P 2/3, R 1, F1 0.8
    assert token_f1("the big red barn", ["a red barn", "nothing"]) == pytest.approx(0.8)
    assert token_f1("", [""]) == 1.0


def test_chunk_level_gold_against_title_level():
    titles = {"1": "Alpha Town", "2": "Alpha Town", "3": "Beta River", "9": "Other"}
    r = gold_at_k(["1", "9", "3"], gold_ids=["2", "3"], titles=titles, supporting_titles={"Alpha Town", "Beta River"}, k=3)
    assert r["recall_chunk"] == 0.5  # chunk 2 missed, chunk 3 found
    assert r["recall_title"] == 1.0  # both titles "found": chunk 1 passes for Alpha Town by title alone
    assert r["precision_chunk"] == pytest.approx(1 / 3) and r["precision_title"] == pytest.approx(2 / 3)
    rows = [{"id": "q1", "question": "?", "golden_answers": ["Gamma Port"], "metadata": {"gold_doc_ids": ["2", "3"], "supporting_facts": [["Alpha Town", 0], ["Beta River", 0]]}}]
    out = evaluate_flashrag(rows, {"q1": "gamma port"}, {"q1": {"1": 3.0, "9": 2.0, "3": 1.0}}, titles, k=3)
    assert out["answers"]["exact_match"] == 1.0
    assert out["retrieval"]["title_inflation_precision"] == pytest.approx(1 / 3)


def test_on_real_wiki18_chunks_from_the_toy_sample(tmp_path):
    sample = shared("external/flashrag_toy/sample_data.jsonl")
    nq = load_rows(shared("external/flashrag_toy/nq_test.jsonl"))
    lines = [l for l in shared("external/flashrag_toy/nq_test.jsonl").read_text().splitlines() if l.strip()]
    assert len(nq) == len(lines) and all(r["golden_answers"] for r in nq)
    index = TitleIndex(sample)
    assert len(index) == 1000
    chunks = [parse_chunk(json.loads(line)) for line in sample.read_text().splitlines()]
    c = next(x for x in chunks if x.title == "Evan Morris")
    sentence = "He began his career in Washington as an intern in the Clinton White House at age 18."
    assert sentence in c.text
    disamb = next(x for x in chunks if x.title.endswith("(film)"))
    base_title = disamb.title.rsplit(" (", 1)[0]
    paragraph = " ".join(disamb.text.split()[:60])  # a MuSiQue-style paragraph: part of the real chunk
    rows = [
        hotpot("real-1", [("Evan Morris", 0)], {"Evan Morris": [sentence]}),
        musique("real-2", [(disamb.title, paragraph)]),
        hotpot("real-3", [(base_title + " (2099 film)", 0)], {base_title + " (2099 film)": ["Nothing like it at all here."]}),
    ]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "aligned.jsonl"
    rep = json.loads(cli_inproc("align", str(data), str(sample), "--out", str(out), "--json").stdout)
    assert rep["kept"] == 2 and rep["total"] == 3
    kept = {json.loads(l)["id"]: json.loads(l)["metadata"]["gold_doc_ids"] for l in out.read_text().splitlines()}
    assert c.id in kept["real-1"] and disamb.id in kept["real-2"]
    lc = tmp_path / "lc.jsonl"
    assert cli_inproc("longcontext", str(out), str(sample), "--num-docs", "50", "--seed", "4", "--out", str(lc)).returncode == 0
    built = [json.loads(l) for l in lc.read_text().splitlines()]
    assert all(b["num_docs"] == 50 and len(b["doc_ids"]) == 50 and b["gold_positions"] for b in built)


SALT = [
    {"id": "50", "contents": '"The Salt Road"\nThe Salt Road is a 1963 film directed by Anna Verde about salt traders crossing the desert with camels.'},
    {"id": "51", "contents": '"The Salt Road"\nThe film was shot in Morocco over six weeks and premiered at a small festival in Venice that autumn.'},
    {"id": "52", "contents": '"The Salt Road"\nCritics praised the photography but found the second half slow and the ending abrupt.'},
]


@pytest.fixture
def salt_corpus(tmp_path):
    path = tmp_path / "salt.jsonl"
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in CHUNKS + SALT), encoding="utf-8")
    return path


def _write(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_title_level_gold_uses_the_alignment_title_lookup(salt_corpus, tmp_path):
    # the supporting title has a suffix the corpus lacks: the alignment falls back to "The Salt Road", and so
    # must the title-level gold, or title precision/recall drop below chunk level
    row = hotpot("s1", [("The Salt Road (1963 film)", 0)], {"The Salt Road (1963 film)": ["The Salt Road is a 1963 film directed by Anna Verde about salt traders crossing the desert with camels."]})
    data = _write(tmp_path / "rows.jsonl", [row])
    aligned = tmp_path / "aligned.jsonl"
    assert cli_inproc("align", str(data), str(salt_corpus), "--out", str(aligned)).returncode == 0
    assert json.loads(aligned.read_text())["metadata"]["gold_doc_ids"] == ["50"]
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"s1": ["51", "50", "7", "8"]}))  # another chunk of the article first, then the gold one
    result = cli_inproc("flashrag-eval", str(aligned), "--corpus", str(salt_corpus), "--retrieval", str(run), "--k", "4", "--json")
    assert result.returncode == 0, result.stderr
    r = json.loads(result.stdout)["retrieval"]
    assert (r["recall_chunk"], r["recall_title"]) == (1.0, 1.0)
    assert r["precision_chunk"] == pytest.approx(1 / 4) and r["precision_title"] == pytest.approx(2 / 4)
    assert r["title_inflation_precision"] == pytest.approx(1 / 4)  # 51 passes by title alone; never negative


def test_empty_supporting_text_is_a_drop_not_title_only_labelling(corpus, tmp_path):
    index = TitleIndex(corpus)
    rows = [
        musique("m-empty", [("Beta River", "")]),
        musique("m-blank", [("Gamma Port", "Gamma Port is a harbour town at the mouth of the Beta River."), ("Alpha Town", "  \n ")]),
        hotpot("h-empty", [("Alpha Town", 0)], {"Alpha Town": ["  "]}),
        hotpot("h-punct", [("Alpha Town", 0)], {"Alpha Town": ["..."]}),  # nothing left once normalised
        musique("m-ok", [("Beta River", RIVER)]),
    ]
    kept, stats = align(rows, index)
    assert [r["id"] for r in kept] == ["m-ok"]
    assert stats.as_dict()["reasons"] == {"empty_supporting_text": 4}
    assert [(d["id"], d["hop"], d["title"]) for d in stats.dropped] == [
        ("m-empty", 0, "Beta River"), ("m-blank", 1, "Alpha Town"), ("h-empty", 0, "Alpha Town"), ("h-punct", 0, "Alpha Town")]
    # the rule itself never matches an empty text (the empty string is a substring of anything)
    assert paragraph_matches("", RIVER) is None and paragraph_matches("   ", RIVER) is None and sentence_matches("", RIVER) is None


def test_align_report_lists_every_drop_and_counts_branches_over_kept_rows(corpus, tmp_path):
    rows = [
        musique("m-ok", [("Beta River", RIVER)]),
        # the first hop matches (substring), the second fails: the row is dropped and its match is not counted
        musique("m-half", [("Beta River", RIVER), ("Gamma Port", "A poem about the moon and the stars over the quiet hills.")]),
        hotpot("h-fallback-dropped", [("Méditerranée (1963 film)", 0), ("Nowhere", 0)],
               {"Méditerranée (1963 film)": ["Méditerranée is a French film directed in 1963 by Jean-Daniel Pollet about the sea."], "Nowhere": ["x y z"]}),
    ]
    data = _write(tmp_path / "rows.jsonl", rows)
    out, report = tmp_path / "aligned.jsonl", tmp_path / "report.json"
    result = cli_inproc("align", str(data), str(corpus), "--out", str(out), "--report", str(report), "--json")
    assert result.returncode == 0, result.stderr
    rep = json.loads(result.stdout)
    assert rep["match_branches"] == {"paragraph:substring": 1} and rep["suffix_fallbacks"] == 0
    written = json.loads(report.read_text())
    assert written["dropped_rows"] == [
        {"id": "m-half", "reason": "no_chunk_matched", "hop": 1, "title": "Gamma Port"},
        {"id": "h-fallback-dropped", "reason": "title_not_in_corpus", "hop": 1, "title": "Nowhere"},
    ]
    assert written["kept"] == 1 and written["reasons"] == {"no_chunk_matched": 1, "title_not_in_corpus": 1}


def _no_traceback(result, *expect):
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    for e in expect:
        assert e in result.stderr, (e, result.stderr)


def test_flashrag_commands_refuse_bad_input_with_one_clear_line(corpus, tmp_path):
    rows = _write(tmp_path / "rows.jsonl", [musique("m1", [("Beta River", RIVER)])])
    missing = str(tmp_path / "no-corpus.jsonl")
    out = tmp_path / "out.jsonl"
    _no_traceback(cli_inproc("align", str(rows), missing, "--out", str(out)), missing, "cannot read")
    _no_traceback(cli_inproc("longcontext", str(rows), missing, "--out", str(out)), missing)
    _no_traceback(cli_inproc("flashrag-eval", str(rows), "--corpus", missing), missing)
    assert not out.exists()
    # a corpus id given twice
    dup = _write(tmp_path / "dup.jsonl", CHUNKS + [{"id": "3", "title": "Beta River", "text": "another text"}])
    _no_traceback(cli_inproc("align", str(rows), str(dup), "--out", str(out)), "record 3", "duplicated chunk id", f"lines 3, {len(CHUNKS) + 1}")
    # a row id given twice, a row missing its answers
    _write(rows, [musique("m1", [("Beta River", RIVER)]), musique("m1", [("Beta River", RIVER)]), {"id": "x", "question": "q"}])
    _no_traceback(cli_inproc("align", str(rows), str(corpus), "--out", str(out)), "record m1", "duplicated row id", "record x", "golden_answers")
    # predictions and retrieval run that do not parse
    _write(rows, [{"id": "a1", "question": "q", "golden_answers": ["x"], "metadata": {"gold_doc_ids": ["3"]}}])
    preds = tmp_path / "preds.jsonl"
    preds.write_text('{"id": "a1"}\n')
    _no_traceback(cli_inproc("flashrag-eval", str(rows), "--corpus", str(corpus), "--predictions", str(preds)), str(preds), "answer")
    _no_traceback(cli_inproc("flashrag-eval", str(rows), "--corpus", str(corpus), "--retrieval", str(tmp_path / "none.trec")), "none.trec")


def test_longcontext_writes_all_rows_or_none(corpus, tmp_path):
    rows = _write(tmp_path / "rows.jsonl", [
        {"id": "ok", "question": "q", "golden_answers": ["a"], "metadata": {"gold_doc_ids": ["1"]}},
        {"id": "big", "question": "q", "golden_answers": ["a"], "metadata": {"gold_doc_ids": ["1", "2", "3"]}},
    ])
    out = tmp_path / "lc.jsonl"
    _no_traceback(cli_inproc("longcontext", str(rows), str(corpus), "--num-docs", "2", "--out", str(out)),
                  "record big", "metadata.gold_doc_ids", "3 gold chunks do not fit in 2")
    assert not out.exists() and not list(tmp_path.glob(".lc.jsonl.*"))  # nothing half written, no temp file left
    out.write_text("an earlier output\n")
    cli_inproc("longcontext", str(rows), str(corpus), "--num-docs", "2", "--out", str(out))
    assert out.read_text() == "an earlier output\n"
    assert cli_inproc("longcontext", str(rows), str(corpus), "--num-docs", "3", "--out", str(out)).returncode == 0
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["ok", "big"]
