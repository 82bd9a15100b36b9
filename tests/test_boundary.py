"""Issue 28.1: every input crosses one boundary (judge/boundary.py). Each class of hostile input is tried
through every entry point that reads it, not one instance through one command: YAML (run configs, models
files, a run's config.yaml, through run, families, doctor, ping and score), JSON outside the dataset adapters
(corpus chunks, retrieval runs, predictions, ratings, FlashRAG rows), command-line numbers and paths, the
numeric environment, and mappings and records given to the Python API. Whatever the input, the CLI ends
with exit 2 and one line naming the file (and record and field), and Python raises the project's own
error type, judge.InputError. Property tests (hypothesis) drive the YAML and JSON readers with generated
hostile values."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import judge
from judge.boundary import MAX_DEPTH, parse_json, parse_yaml, value_problem
from judge.cli import app
from judge.errors import InputError
from judge.testing.rss import cli_with_peak_rss
from tests.conftest import BUNDLED_SAMPLE, ROOT

ANSWERS = ROOT / "judge" / "data" / "he_sample_answers.jsonl"
SETTINGS = dict(deadline=None, derandomize=True, max_examples=60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

_LOL = '"lol"'
BOMB = "".join(
    f"{chr(97 + i)}: &{chr(97 + i)} [{','.join([('*' + chr(96 + i)) if i else _LOL] * 9)}]\n" for i in range(9)
)  # 9 levels of 9 aliases: 387 million strings once expanded, in about 390 bytes


def cli(*args, env: dict | None = None):
    return CliRunner().invoke(app, [str(a) for a in args], env=env)


def one_line(result, *expect: str) -> str:
    """Exit 2 through the boundary, one line, naming what it should; no exception escaped."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    out = result.output.strip()
    assert "\n" not in out and "Traceback" not in out, out
    for e in expect:
        assert e in out, (e, out)
    return out


# -- YAML: every entry point, every hostile shape ---------------------------------------------------------

HOSTILE_YAML = {
    "500 deep": ("x: " + "[" * 500 + "]" * 500 + "\n", "nested deeper than 64 levels"),
    "500 deep block": ("x:\n" + "".join("  " * i + "- \n" for i in range(1, 500)), "nested deeper than 64 levels"),
    "alias bomb": (BOMB, "alias"),
    "recursive alias": ("x: &a [*a]\n", "recursive alias"),
    "too many aliases": ("a: &a 1\nb: [" + ", ".join(["*a"] * 300) + "]\n", "aliases"),
    "huge number": ("x: 99999999999999999999\n", "over the limit"),
    "infinity": ("x: .inf\n", "finite number"),
    "lone surrogate value": ('x: "a\\ud800"\n', "lone surrogate"),
    "lone surrogate key": ('"m\\udfff": 1\n', "lone surrogate"),
    "a key that is a list": ("? [1, 2]\n: x\n", "not valid YAML"),
    "not YAML": ("a: [\n", "not valid YAML at line 2"),
    "too large": ("x: '" + "a" * 4_000_100 + "'\n", "over 4 MB"),
}


def _run_config(tmp_path: Path, extra: str = "", models_file: Path | None = None) -> Path:
    path = tmp_path / "run.yaml"
    text = (f"dataset: {{path: {BUNDLED_SAMPLE}}}\nanswers: {{path: {ANSWERS}}}\nadjudicate: {{judges: [deterministic]}}\n"
            f"cache_dir: {tmp_path / 'cache'}\n")
    if models_file is not None:
        text += f"models_file: {models_file}\n"
    path.write_text(text + extra, encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", sorted(HOSTILE_YAML))
def test_hostile_yaml_is_one_line_through_every_yaml_entry(tmp_path, kind):
    text, expect = HOSTILE_YAML[kind]
    hostile = tmp_path / "hostile.yaml"
    hostile.write_text(text, encoding="utf-8")
    runs = tmp_path / "runs"
    started = time.perf_counter()
    one_line(cli("run", hostile, "--runs-dir", runs, "--no-progress"), str(hostile), expect)  # a run config
    config = _run_config(tmp_path, models_file=hostile)  # a models file named by a run config
    one_line(cli("run", config, "--runs-dir", runs, "--no-progress"), str(hostile), expect)
    for args in (("families", "--config", hostile), ("doctor", "--models", hostile), ("ping", hostile, "m")):
        one_line(cli(*args), str(hostile), expect)
    assert not runs.exists()  # refused before anything was written
    assert time.perf_counter() - started < 30


@pytest.mark.parametrize("kind", ["500 deep", "alias bomb", "lone surrogate key", "huge number"])
def test_a_run_directory_whose_config_yaml_is_hostile_is_refused(tmp_path, kind):
    runs = tmp_path / "runs"
    assert cli("run", _run_config(tmp_path), "--limit", "1", "--runs-dir", runs, "--no-progress").exit_code in (0, 3)
    (run_dir,) = runs.iterdir()
    (run_dir / "config.yaml").write_text(HOSTILE_YAML[kind][0], encoding="utf-8")
    one_line(cli("score", run_dir), "config.yaml", HOSTILE_YAML[kind][1])


def test_the_alias_bomb_is_refused_within_a_small_memory_bound(tmp_path):
    """390 bytes that expand to 387 million strings: before, 2.5-3.1 GB of memory before an error (or none)."""
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(BOMB)
    assert len(BOMB.encode()) < 400
    result, peak = cli_with_peak_rss("doctor", "--models", str(bomb), cwd=ROOT, timeout=120)
    assert result.returncode == 2 and "alias" in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert peak is None or peak < 300e6, peak


yaml_leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8),
    st.sampled_from(["\ud800", "a\udfffb", "\x1b[2J", "\u202e", "[/x]"]),
)
yaml_values = st.recursive(yaml_leaves, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)


def _yaml_dump(value) -> str:
    import yaml

    return yaml.safe_dump(value, allow_unicode=False)  # \u escapes: lone surrogates survive into the file


@settings(**SETTINGS)
@given(value=yaml_values, depth=st.integers(0, 120))
def test_property_any_yaml_value_is_data_or_one_line(tmp_path_factory, value, depth):
    """Generated YAML (huge and infinite numbers, surrogates, escape sequences, nesting up to 120 deep) as a
    models file, through the CLI: exit 0 or 2, never a traceback, one line when refused; and the loader
    itself returns only values the boundary accepts."""
    for _ in range(depth):
        value = [value]
    text = "models: " + _yaml_dump({"m": value})
    path = tmp_path_factory.mktemp("y") / "models.yaml"
    path.write_text(text, encoding="utf-8")
    result = cli("families", "--config", path)
    assert result.exit_code in (0, 2), (result.exit_code, result.output, result.exception)
    assert isinstance(result.exception, (SystemExit, type(None))), repr(result.exception)
    if result.exit_code == 2:
        assert len(result.output.strip().splitlines()) >= 1 and "Traceback" not in result.output
    try:
        loaded = parse_yaml(text, "models.yaml")
    except Exception as e:  # noqa: BLE001 - only the YAML library's own errors and the limits may come out
        import yaml

        from judge.boundary import YAMLLimit

        assert isinstance(e, (yaml.YAMLError, YAMLLimit)), repr(e)
    else:
        if value_problem(loaded) is None:
            json.dumps(loaded, allow_nan=False)  # what passes the boundary can be written as JSON


# -- numbers and flags -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name,value,expect", [
    ("JUDGE_MAX_RECORD_MB", "1e15", "at most 100,000 megabytes"),
    ("JUDGE_MAX_RECORD_MB", "1e400", "a positive number of megabytes"),
    ("JUDGE_MAX_PROBLEMS", "9" * 5000, "at most 1,000,000"),
    ("JUDGE_LOCAL_CONTEXT", "99999999999999999999", "at most 1,048,576"),
])
def test_environment_numbers_are_bounded(name, value, expect):
    for args in (("validate", BUNDLED_SAMPLE), ("families",)):
        one_line(cli(*args, env={name: value}), name, expect)


@pytest.mark.parametrize("args", [
    ("run", "{config}", "--limit", "99999999999999999999"),
    ("longcontext", "{data}", "{data}", "--out", "{out}", "--num-docs", "1" + "0" * 30),
    ("longcontext", "{data}", "{data}", "--out", "{out}", "--seed", "-" + "9" * 40),
    ("search-eval", str(BUNDLED_SAMPLE), "--k", "9" * 25),
    ("flashrag-eval", "{data}", "--corpus", "{data}", "--k", "9" * 25),
    ("align", "{data}", "{data}", "--out", "{out}", "--workers", "9" * 25),
])
def test_command_line_numbers_are_bounded(tmp_path, args):
    data = tmp_path / "rows.jsonl"
    data.write_text("")
    values = {"config": _run_config(tmp_path), "data": data, "out": tmp_path / "out.jsonl"}
    out = one_line(cli(*[a.format(**values) for a in args]), "over the limit of 1,000,000,000,000")
    assert out.startswith("--") and not (tmp_path / "out.jsonl").exists()


def test_a_path_argument_that_is_not_text_is_one_line(tmp_path):
    """An undecodable byte in a path reaches Python as a lone surrogate: refused naming the flag or argument,
    never a UnicodeEncodeError when the path is written into a run's config or a cache."""
    bad = str(tmp_path / "c") + "\udcff"
    one_line(cli("ping", ROOT / "configs" / "models.yaml", "gpt-4o-mini", "--cache-dir", bad), "--cache-dir", "not valid UTF-8")
    one_line(cli("run", bad), "CONFIG", "not valid UTF-8")
    one_line(cli("run", _run_config(tmp_path), "--runs-dir", bad, "--no-progress"), "--runs-dir")


# -- model entries -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("models,expect", [
    ('{m: "openai/gpt-4o"}', "field models.m: expected a mapping"),
    ("{m: 5}", "field models.m: expected a mapping"),
    ("[a, b]", "field models: expected a mapping"),
    ('{"": {model: openai/gpt-4o}}', "model name must be non-empty"),
    ('{m: {model: openai/gpt-4o, api_base: "http://[::1/v1"}}', "field models.m.api_base: not a usable URL"),
    ('{m: {model: openai/gpt-4o, api_base: "http://[zz]:8/v1"}}', "field models.m.api_base"),
    ('{m: {model: openai/gpt-4o, api_base: "http://h:99999/v1"}}', "field models.m.api_base"),
    ('{m: {model: openai/gpt-4o, api_base: "http://u:pw@[::1/v1"}}', "field models.m.api_base"),
])
def test_model_entries_of_the_wrong_shape_are_one_line_everywhere(tmp_path, models, expect):
    models_file = tmp_path / "models.yaml"
    models_file.write_text(f"models: {models}\n")
    for args in (("families", "--config", models_file), ("doctor", "--models", models_file), ("ping", models_file, "m")):
        out = one_line(cli(*args), str(models_file), expect)
        assert "pw@" not in out  # an api_base's user:password is never echoed
    inline = _run_config(tmp_path, extra=f"models: {models}\n")
    one_line(cli("run", inline, "--runs-dir", tmp_path / "runs"), str(inline), expect.replace("field models.m.api_base", "api_base"))
    with pytest.raises(InputError):
        judge.evaluate({"dataset": {"path": str(BUNDLED_SAMPLE)}, "models": __import__("yaml").safe_load(models)}, runs_dir=tmp_path / "api")


# -- JSON outside the dataset adapters -----------------------------------------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000  # Python's json: RecursionError
DEEP_OK = "[" * 300 + "]" * 300  # parses, but deeper than any input needs
CORPUS = [{"id": "1", "title": "Alpha", "text": "Alpha is a town."}, {"id": "2", "title": "Beta", "text": "Beta is a river."},
          {"id": "3", "title": "Gamma", "text": "Gamma is a port."}]
ROW = {"id": "r1", "question": "q?", "golden_answers": ["a"], "metadata": {"gold_doc_ids": ["1"], "supporting_facts": [["Alpha", 0]],
                                                                          "context": [["Alpha", ["Alpha is a town."]]]}}


def _jsonl(path: Path, rows) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("line,expect", [
    (DEEP, "nested deeper"),
    ('{"id": "9", "title": "T", "text": ' + DEEP_OK + "}", "corpus chunk"),
    ('{"id": "9", "title": "T", "text": "a \\ud800 b"}', "lone surrogate"),
    ('{"id": "9\\udc00", "title": "T", "text": "x"}', "lone surrogate"),
])
def test_a_hostile_corpus_line_is_one_line_in_align_longcontext_and_flashrag_eval(tmp_path, line, expect):
    corpus = _jsonl(tmp_path / "corpus.jsonl", CORPUS + [line])
    rows = _jsonl(tmp_path / "rows.jsonl", [ROW])
    out = tmp_path / "out.jsonl"
    for args in (("align", rows, corpus, "--out", out), ("longcontext", rows, corpus, "--out", out, "--num-docs", "2"),
                 ("flashrag-eval", rows, "--corpus", corpus)):
        one_line(cli(*args), str(corpus), "line 4", expect)
        assert not out.exists()


@pytest.mark.parametrize("row", [
    DEEP, '{"id": "r2", "question": "q", "golden_answers": ["a"], "metadata": {"x": ' + DEEP_OK + "}}",
    '{"id": "r2", "question": "q\\ud800", "golden_answers": ["a"]}',
    '{"id": 99999999999999999999999, "question": "q", "golden_answers": ["a"]}',
])
def test_a_hostile_row_is_one_line_in_align_longcontext_and_flashrag_eval(tmp_path, row):
    corpus = _jsonl(tmp_path / "corpus.jsonl", CORPUS)
    rows = _jsonl(tmp_path / "rows.jsonl", [ROW, row])
    out = tmp_path / "out.jsonl"
    for args in (("align", rows, corpus, "--out", out), ("longcontext", rows, corpus, "--out", out, "--num-docs", "2"),
                 ("flashrag-eval", rows, "--corpus", corpus)):
        one_line(cli(*args), str(rows), "line 2")
        assert not out.exists()


@pytest.mark.parametrize("metadata,field", [
    ({"question_decomposition": "a string"}, "metadata.question_decomposition"),
    ({"question_decomposition": ["a string hop"]}, "metadata.question_decomposition[0]"),
    ({"question_decomposition": [{"support_paragraph": "text"}]}, "metadata.question_decomposition[0].support_paragraph"),
    ({"question_decomposition": [{"support_paragraph": {"title": ["A"], "paragraph_text": "x"}}]}, "metadata.question_decomposition[0].support_paragraph.title"),
    ({"supporting_facts": {"title": "Alpha", "sent_id": [0]}}, "metadata.supporting_facts.title"),
    ({"supporting_facts": {"title": ["Alpha"], "sent_id": 0}}, "metadata.supporting_facts.sent_id"),
    ({"supporting_facts": "Alpha"}, "metadata.supporting_facts"),
    ({"supporting_facts": [[["Alpha"], 0]]}, "metadata.supporting_facts[0]"),
    ({"supporting_facts": [["Alpha", 0]], "context": {"title": None, "sentences": [["x"]]}}, "metadata.context.title"),
    ({"supporting_facts": [["Alpha", 0]], "context": {"title": ["Alpha"], "sentences": "x"}}, "metadata.context.sentences"),
    ({"supporting_facts": [["Alpha", 0]], "context": [["Alpha", "x"]]}, "metadata.context[0]"),
    ({"supporting_facts": [["Alpha", 0]], "context": 5}, "metadata.context"),
])
def test_align_rows_of_the_wrong_shape_are_one_line_naming_row_and_field(tmp_path, metadata, field):
    corpus = _jsonl(tmp_path / "corpus.jsonl", CORPUS)
    rows = _jsonl(tmp_path / "rows.jsonl", [ROW, {**ROW, "id": "bad", "metadata": metadata}])
    one_line(cli("align", rows, corpus, "--out", tmp_path / "out.jsonl"), str(rows), "record bad", f"field {field}")
    assert not (tmp_path / "out.jsonl").exists()


def test_hostile_retrieval_runs_and_predictions_are_one_line(tmp_path):
    bench = ROOT.parent / "shared" / "data" / "external" / "beir_arcd_sample"
    corpus = _jsonl(tmp_path / "corpus.jsonl", CORPUS)
    rows = _jsonl(tmp_path / "rows.jsonl", [ROW])
    for text, expect in ((DEEP, "nested deeper"), ('{"q": ' + DEEP_OK + "}", "nested deeper"), ('{"q": {"1": 1e999}}', "finite"),
                         ('{"q\\udc80": ["1"]}', "lone surrogate")):
        run = tmp_path / "run.json"
        run.write_text("{" + text[1:] if text.startswith("{") else "{\"q\": " + text + "}")
        one_line(cli("flashrag-eval", rows, "--corpus", corpus, "--retrieval", run), str(run), expect)
        if bench.exists():
            one_line(cli("retrieval", bench, run, "--allow-fingerprint-mismatch"), str(run), expect)
        predictions = tmp_path / "predictions.json"
        predictions.write_text(run.read_text())
        one_line(cli("flashrag-eval", rows, "--corpus", corpus, "--predictions", predictions), str(predictions))


@pytest.mark.parametrize("fmt", [None, "dialsummeval", "faithbench", "hebrew-qa"])
@pytest.mark.parametrize("text", [DEEP, '{"annotations": ' + DEEP_OK + ', "summary": "s"}', '{"samples": "\\ud800"}'])
def test_hostile_ratings_are_one_line_in_agreement_humans(tmp_path, fmt, text):
    path = tmp_path / "ratings.json"
    path.write_text(text + "\n")
    one_line(cli("agreement-humans", path, *(("--format", fmt) if fmt else ())), str(path))


@settings(**SETTINGS)
@given(value=yaml_values, depth=st.integers(0, 100))
def test_property_parse_json_returns_data_or_raises_the_projects_error(value, depth):
    text = json.dumps(value)
    for _ in range(depth):
        text = "[" + text + "]"
    try:
        parsed = parse_json(text, "f.json", "line 1")
    except InputError as e:
        assert "\n" not in str(e) and str(e).startswith("f.json: record line 1")
    else:
        assert value_problem(parsed) is None and depth < MAX_DEPTH
        json.dumps(parsed, allow_nan=False, ensure_ascii=False).encode("utf-8")


# -- the Python API --------------------------------------------------------------------------------------------


def _record(**change):
    return {"id": "r1", "question": "Where?", "source": "The bridge opened in 1937.", "answer": "It opened in 1937.", **change}


@pytest.mark.parametrize("records,answers,expect", [
    ([_record(id="r\ud800")], None, "records: record records[0]: field id: expected Unicode text"),
    ([_record(source="x\udfff")], None, "records: record r1: field source: expected Unicode text"),
    ([_record(meta={"n": 10**30})], None, "field meta.n"),
    ([_record(meta={"x": float("nan")})], None, "finite"),
    ([_record(meta={1: "int key"})], None, "text keys"),
    ([_record(meta=json.loads("[" * 200 + "]" * 200))], None, "nested deeper"),
    ([_record(meta={"when": object()})], None, "not a JSON value"),
    ([_record(answer=None) | {"answer": None}], {"r1": "ok\ud800"}, "answers: field r1: expected Unicode text"),
    ([_record()], ["not", "a", "mapping"], "answers: expected a mapping"),
    # found by the API property test: a record with no id was named by the run's own staging file
    ([{"question": "Where?", "source": "x y z", "answer": "y"}], None, "records: record records[0]: field id: required field is missing"),
    ([_record(question=5)], None, "records: record r1: field question"),
])
def test_records_given_in_python_are_refused_with_the_projects_error(tmp_path, records, answers, expect):
    records = [{k: v for k, v in r.items() if v is not None} for r in records]
    with pytest.raises(InputError) as caught:
        judge.evaluate(ROOT / "configs" / "deterministic.yaml", records=records, answers=answers, runs_dir=tmp_path / "runs")
    assert expect in str(caught.value) and "\n" not in str(caught.value)
    assert not (tmp_path / "runs").exists()  # nothing written on refusal
    assert isinstance(caught.value, judge.InputError)


@pytest.mark.parametrize("config,expect", [
    ({"dataset": {"path": str(BUNDLED_SAMPLE)}, "cache_dir": "c\ud800"}, "field cache_dir"),
    ({"dataset": {"path": str(BUNDLED_SAMPLE)}, "models": {"m\ud800": {"model": "openai/gpt-4o"}}}, "the key"),
    ({"dataset": {"path": str(BUNDLED_SAMPLE)}, "limit": 2**80}, "field limit"),
    ({"dataset": {"path": str(BUNDLED_SAMPLE) + "\x00"}}, "does not exist"),
    ({"dataset": {"path": str(BUNDLED_SAMPLE)}, "models_file": 5}, "models_file"),
])
def test_a_config_dict_given_in_python_is_refused_with_the_projects_error(tmp_path, config, expect):
    with pytest.raises(InputError, match=expect.replace("(", r"\(")):
        judge.evaluate(config, runs_dir=tmp_path / "runs")
    with pytest.raises(InputError):
        judge.evaluate(ROOT / "configs" / "deterministic.yaml", runs_dir=tmp_path / "runs", limit=2**80)
    assert not (tmp_path / "runs").exists()


# -- every subcommand, generated hostile files ------------------------------------------------------------------

hostile_texts = st.one_of(
    yaml_values.map(lambda v: json.dumps(v)),
    st.lists(yaml_values.map(lambda v: json.dumps(v)), min_size=1, max_size=4).map("\n".join),
    yaml_values.map(_yaml_dump),
    st.tuples(st.integers(60, 3000), st.sampled_from(["[", "{\"a\": "])).map(lambda t: t[1] * t[0]),
    st.sampled_from([BOMB, "x: &a [*a]\n", '{"id": "\\ud800"}', '{"id": 1e999}', "[NaN]", '{"id": 99999999999999999999999}',
                     '{"question_decomposition": "s"}', "\x1b[2J\u202e", "a: [\n", "", "\ufeff"]),
    st.text(max_size=60),
)


@pytest.mark.slow
@settings(**{**SETTINGS, "max_examples": 40})
@given(text=hostile_texts, binary=st.booleans(), raw=st.binary(max_size=40))
def test_property_every_subcommand_takes_any_file_without_a_traceback(tmp_path_factory, text, binary, raw):
    """A generated hostile file in every file argument of every command: exit 0 to 3, no exception escapes,
    and an output is never left behind by a refused command."""
    tmp = tmp_path_factory.mktemp("p")
    f = tmp / "hostile.json"
    f.write_bytes(raw if binary else text.encode("utf-8", "surrogatepass"))
    corpus = _jsonl(tmp / "corpus.jsonl", CORPUS)
    rows = _jsonl(tmp / "rows.jsonl", [ROW])
    out = tmp / "out.jsonl"
    bench = ROOT.parent / "shared" / "data" / "external" / "beir_arcd_sample"
    commands = [
        ("validate", f), ("search-eval", f), ("agreement-humans", f), ("families", "--config", f), ("doctor", "--models", f), ("ping", f, "m"),
        ("run", f, "--runs-dir", tmp / "runs", "--no-progress"),
        ("align", f, corpus, "--out", out), ("align", rows, f, "--out", out),
        ("longcontext", f, corpus, "--out", out, "--num-docs", "2"), ("longcontext", rows, f, "--out", out, "--num-docs", "2"),
        ("flashrag-eval", f, "--corpus", corpus), ("flashrag-eval", rows, "--corpus", f), ("flashrag-eval", rows, "--corpus", corpus, "--predictions", f),
        ("flashrag-eval", rows, "--corpus", corpus, "--retrieval", f),
    ] + ([("retrieval", bench, f, "--allow-fingerprint-mismatch")] if bench.exists() else [])
    for args in commands:
        result = cli(*args)
        assert result.exit_code in (0, 1, 2, 3), (args, result.exit_code, result.output[-500:], result.exception)
        assert isinstance(result.exception, (SystemExit, type(None))), (args, repr(result.exception))
        assert "Traceback" not in result.output
        if result.exit_code == 2:
            assert not out.exists(), args
        out.unlink(missing_ok=True)
