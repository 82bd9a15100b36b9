"""Neighbours of inputs already fixed, found by an attacker this round, each fixed as a class where the input
enters: a key written twice (JSON lines, JSON arrays, YAML, predictions), what names a thing naming one thing
(source ids, claim ids, annotators, attributions, gold claims' models), blank names and texts, flags held to
the config's bounds (--shard, --controls-per-label), a merge of some shards only, a damaged run.json, an answer
of only a number the source never writes, and a claim too long to align character by character."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli import app
from judge.search.index import FUZZY_MAX_CHARS
from tests.conftest import ROOT

SAMPLE = ROOT / "judge" / "data" / "he_sample.json"


def cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def refused(result, *expect: str) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output[-1500:], repr(result.exception))
    out = " ".join(result.output.split())
    assert "Traceback" not in result.output
    for e in expect:
        assert e in out, (e, out)
    return out


def config_for(tmp_path: Path, data: Path, extra: str = "") -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(f"dataset: {{path: {data}}}\ndecompose: {{method: sentences}}\nadjudicate: {{judges: [deterministic]}}\n"
                    f"cache_dir: {tmp_path / 'cache'}\n{extra}", encoding="utf-8")
    return path


def line(**fields) -> str:
    return json.dumps({"id": "q1", "question": "When did the bridge open?", "source": "The bridge opened in 1937. It is 2.7 km long.",
                       **fields}) + "\n"


# -- a key written twice -------------------------------------------------------------------------------------
def test_a_key_twice_in_a_jsonl_record_is_refused_by_validate_and_run(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "q1", "source": "x y z.", "answer": "It opened in 1937.", "answer": "It is blue."}\n', encoding="utf-8")
    for result in (cli("validate", data), cli("run", config_for(tmp_path, data), "--runs-dir", tmp_path / "runs", "--no-progress")):
        refused(result, "line 1", "the key 'answer' appears twice")
    assert not (tmp_path / "runs").exists()


def test_a_key_twice_in_a_json_array_item_and_in_the_primary_format_is_refused(tmp_path):
    records = json.loads(SAMPLE.read_text(encoding="utf-8"))
    text = json.dumps(records, ensure_ascii=False)
    twice = text.replace('"question":', '"genre": "x", "genre":', 1)
    data = tmp_path / "he.json"
    data.write_text(twice, encoding="utf-8")
    refused(cli("validate", data), "item 0", "the key 'genre' appears twice")


def test_a_key_twice_in_a_yaml_config_is_refused_and_merge_keys_may_override(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(line(answer="1937."), encoding="utf-8")
    config = config_for(tmp_path, data, f"cache_dir: {tmp_path / 'other'}\n")
    refused(cli("run", config, "--runs-dir", tmp_path / "runs", "--no-progress"), "line 5", "the key 'cache_dir' appears twice")
    merged = tmp_path / "merged.yaml"
    merged.write_text(f"base: &b {{path: {data}}}\ndataset:\n  <<: *b\n  path: {data}\nadjudicate: {{judges: [deterministic]}}\n"
                      f"decompose: {{method: sentences}}\ncache_dir: {tmp_path / 'cache'}\n", encoding="utf-8")
    assert "appears twice" not in cli("run", merged, "--runs-dir", tmp_path / "runs", "--no-progress").output


def test_an_id_twice_in_a_predictions_object_is_refused(tmp_path):
    from judge.datasets.flashrag import load_predictions
    from judge.problems import DatasetError

    path = tmp_path / "pred.json"
    path.write_text('{"r1": "Paris", "r2": "Rome", "r1": "Lyon"}', encoding="utf-8")
    with pytest.raises(DatasetError, match="the key 'r1' appears twice"):
        load_predictions(path)


# -- what names a thing names one thing; nothing blank ---------------------------------------------------------
@pytest.mark.parametrize("record, expect", [
    ({"id": "q1", "sources": [{"id": "d", "text": "Lima is in Peru."}, {"id": "d", "text": "It opened in 1937."}]},
     "sources: the source id 'd' appears twice"),
    ({"id": "q1", "source": "x.", "answers": {"m": "x."}, "gold_claims": {"zz": []}}, "gold_claims.zz: no answer of model 'zz'"),
    ({"id": "  ", "source": "x."}, "field id: is empty or only spaces"),
    ({"id": "q1", "source": ""}, "field source: is empty or only spaces"),
    ({"id": "q1", "sources": [{"id": "d", "text": " \n "}]}, "field sources[0].text: is empty or only spaces"),
    ({"id": "q1", "source": "x.", "answers": {" ": "x."}}, "field answers: a model name is blank"),
])
def test_the_plain_format_refuses_ambiguous_names_and_blank_values(tmp_path, record, expect):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(record) + "\n", encoding="utf-8")
    refused(cli("validate", data), expect)


@pytest.mark.parametrize("edit, expect", [
    (lambda r: r["claims"][0]["attribution"][0].update(doc_id="nope"), "doc_id 'nope' names no source"),
    (lambda r: r["claims"].append(dict(r["claims"][0])), "claims: the claim_id 0 appears twice"),
    (lambda r: r["human_ratings"].append(r["human_ratings"][0]), "rating by annotator 'annotator_1' appears twice"),
    (lambda r: r["claims"][0]["attribution"][0].update(sentence_id=-3), "sentence_id: expected greater than or equal to 0"),
])
def test_the_primary_format_refuses_the_same_neighbours(tmp_path, edit, expect):
    records = json.loads(SAMPLE.read_text(encoding="utf-8"))
    edit(records[0])
    data = tmp_path / "he.json"
    data.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    refused(cli("validate", data), records[0]["id"], expect)


# -- flags held to the config's bounds; a merge of some shards --------------------------------------------------
def test_a_huge_shard_count_is_refused_before_anything_is_written(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(line(answer="1937."), encoding="utf-8")
    refused(cli("run", config_for(tmp_path, data), "--shard", "0/99999999999999999999", "--runs-dir", tmp_path / "runs"), "--shard")
    assert not (tmp_path / "runs").exists()


@pytest.fixture(scope="module")
def three(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("three")
    data = tmp / "d.jsonl"
    data.write_text("".join(line(id=f"q{i}", answer="It opened in 1937.") for i in range(3)), encoding="utf-8")
    return config_for(tmp, data)


def test_rejudge_holds_controls_per_label_to_the_configs_bound(three, tmp_path):
    result = cli("run", three, "--runs-dir", tmp_path / "runs", "--no-progress")
    assert result.exit_code in (0, 3), result.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    refused(cli("rejudge", run_dir, "--judge", "deterministic", "--controls-per-label", "99999999999", "--runs-dir", tmp_path / "re"),
            "--controls-per-label 99999999999", "less than or equal to 10000")
    assert not (tmp_path / "re").exists()


def test_a_merge_of_some_shards_is_refused_naming_the_missing_shard(three, tmp_path):
    for shard in ("1/3", "2/3"):
        assert cli("run", three, "--shard", shard, "--runs-dir", tmp_path / "runs", "--no-progress").exit_code in (0, 3)
    shards = sorted((tmp_path / "runs").iterdir())
    refused(cli("merge", *shards, "--runs-dir", tmp_path / "merged"), "shard 0/3 of this split is missing")
    assert not (tmp_path / "merged").exists()
    assert cli("run", three, "--shard", "0/3", "--runs-dir", tmp_path / "runs", "--no-progress").exit_code in (0, 3)
    result = cli("merge", *sorted((tmp_path / "runs").iterdir()), "--runs-dir", tmp_path / "merged", "--json")
    assert result.exit_code in (0, 3), result.output
    assert json.loads(result.output)["run"]["records_finished"] == 3


def test_a_run_json_field_of_the_wrong_type_is_one_line_naming_it(three, tmp_path):
    assert cli("run", three, "--runs-dir", tmp_path / "runs", "--no-progress").exit_code in (0, 3)
    (run_dir,) = (tmp_path / "runs").iterdir()
    for field, value in (("wall_seconds", [None]), ("shard", "0/2"), ("prompts", [1]), ("records_selected", {"a": 1})):
        copy = Path(shutil.copytree(run_dir, tmp_path / f"copy-{field}"))
        manifest = json.loads((copy / "run.json").read_text())
        (copy / "run.json").write_text(json.dumps({**manifest, field: value}))
        refused(cli("score", copy), "run.json", f"field {field}")


# -- verdicts ------------------------------------------------------------------------------------------------
def test_an_answer_of_only_a_number_the_source_never_writes_is_unsupported(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(line(answer="1."), encoding="utf-8")
    result = cli("run", config_for(tmp_path, data), "--runs-dir", tmp_path / "runs", "--no-progress")
    (run_dir,) = (tmp_path / "runs").iterdir()
    (claim,) = json.loads((run_dir / "results.jsonl").read_text(encoding="utf-8"))["answers"][0]["claims"]
    assert claim["label"] == "unsupported" and "never writes 1" in claim["verdicts"][0]["rationale"], claim
    assert result.exit_code == 0, result.output


def test_a_claim_longer_than_the_fuzzy_cap_is_matched_by_ngrams_never_aligned_character_by_character():
    """One long sentence (no sentence end for 18,000 characters) and a claim copying a slice of it with one word
    changed: aligned (fuzzy) while the claim is within FUZZY_MAX_CHARS, left to n-gram recall past it (the
    alignment costs the claim's length squared a window: a repetitive source took seconds a call)."""
    import random

    from judge.search.index import Index

    rng = random.Random(1)
    vocab = "river stone bridge valley tower garden market harbor castle meadow".split()
    source = ", ".join(" ".join(rng.choice(vocab) for _ in range(6)) for _ in range(300)) + "."
    index = Index(source, "d")

    def variant(n: int) -> str:
        return source[1000:1000 + n].replace("river", "rivers", 2)

    assert index.search(variant(FUZZY_MAX_CHARS - 50), k=3)[0].method == "fuzzy"
    past = index.search(variant(2 * FUZZY_MAX_CHARS), k=3)
    assert past and all(c.method != "fuzzy" for c in past) and past[0].method == "ngram"


def test_a_rejudged_shard_is_still_its_shard_and_merges_only_with_its_split(three, tmp_path):
    assert cli("run", three, "--shard", "1/2", "--runs-dir", tmp_path / "runs", "--no-progress").exit_code in (0, 3)
    (shard,) = (tmp_path / "runs").iterdir()
    assert cli("rejudge", shard, "--judge", "deterministic", "--runs-dir", tmp_path / "re").exit_code in (0, 3)
    (rejudged,) = (tmp_path / "re").iterdir()
    assert json.loads((rejudged / "run.json").read_text())["shard"] == [1, 2]
    refused(cli("merge", rejudged, "--runs-dir", tmp_path / "merged"), "shard 0/2 of this split is missing")
