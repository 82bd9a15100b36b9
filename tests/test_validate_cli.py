import json

import krippendorff
import numpy as np
import pytest

from judge.datasets import load
from judge.models import DIMENSIONS
from tests.conftest import BUNDLED_SAMPLE, cli_inproc, shared

KEYS = {
    "records", "claims", "spans", "spans_verified", "rating_entries", "genres", "difficulties",
    "perfect_agreement", "alpha_pooled", "alpha_by_dimension", "errors",
}


def _validate_json(*args):
    result = cli_inproc("validate", *args, "--json")
    return result, json.loads(result.stdout)


def test_validate_hebrew_fixture_reports_the_card_numbers():
    result, rep = _validate_json(str(shared("he_qa_sample.json")))
    assert result.returncode == 0, result.stderr
    assert KEYS <= rep.keys()
    assert (rep["records"], rep["claims"], rep["spans"], rep["spans_verified"], rep["rating_entries"]) == (16, 42, 64, 64, 64)
    assert rep["genres"] == {"dialogue": 5, "encyclopedic": 5, "journalistic": 6}
    assert rep["difficulties"] == {"0": 5, "1": 6, "2": 5}
    assert rep["errors"] == []
    expected = json.loads(shared("he_ratings_agreement.json").read_text())["files"]["he_qa_sample.json"]
    assert rep["perfect_agreement"] == pytest.approx(expected["perfect_agreement_records"])
    assert rep["alpha_pooled"] == pytest.approx(expected["pooled"]["alpha_ordinal"], abs=1e-6)
    for dim in DIMENSIONS:
        assert rep["alpha_by_dimension"][dim] == pytest.approx(expected["per_dimension"][dim]["alpha_ordinal"], abs=1e-6)
    assert rep["sentence_ids"] == {"stated": 64, "agree": 64}


def test_alpha_equals_the_krippendorff_package_on_the_bundled_sample():
    records = load(BUNDLED_SAMPLE)
    _, rep = _validate_json(str(BUNDLED_SAMPLE))
    matrices = [np.array([[getattr(h.scores, d) for h in r.human_ratings] for r in records], dtype=float).T for d in DIMENSIONS]
    pooled = krippendorff.alpha(reliability_data=np.concatenate(matrices, axis=1), level_of_measurement="ordinal", value_domain=[0, 1, 2])
    assert rep["alpha_pooled"] == pytest.approx(pooled)
    same = sum(all(len({getattr(h.scores, d) for h in r.human_ratings}) == 1 for d in DIMENSIONS) for r in records)
    assert rep["perfect_agreement"] == pytest.approx(same / len(records))


def test_bad_input_exits_2_with_one_line_per_bad_record_and_no_traceback(tmp_path):
    records = json.loads(BUNDLED_SAMPLE.read_text(encoding="utf-8"))
    records[0]["claims"][0]["attribution"][0]["start_char"] += 3
    del records[1]["source_text"]
    records[2]["human_ratings"][0]["scores"]["coherence"] = 5
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    result = cli_inproc("validate", str(path))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = [l for l in result.stderr.splitlines() if l.strip()]
    assert any("he-pkg-001" in l and "claims[0].attribution[0].source_excerpt" in l and str(path) in l for l in lines)
    assert any("he-pkg-002" in l and "field source_text" in l for l in lines)
    assert any("he-pkg-003" in l and "human_ratings[0].scores.coherence" in l for l in lines)
    result, rep = _validate_json(str(path))
    assert result.returncode == 2 and len(rep["errors"]) == 3


def test_malformed_json_exits_2_without_traceback(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("[{", encoding="utf-8")
    result = cli_inproc("validate", str(path), "--format", "hebrew-qa")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert str(path) in result.stderr and "malformed JSON" in result.stderr


def test_repair_faquad_finds_all_33_misaligned_offsets(tmp_path):
    src = shared("external/faquad/dataset.json")
    out = tmp_path / "faquad_repaired.json"
    result, rep = _validate_json(str(src), "--repair", "--write", str(out))
    assert result.returncode == 2  # the input itself is still broken
    assert len(rep["repairs"]) == 33 and all(r["new"] for r in rep["repairs"])
    assert rep["repairs_written"]["applied"] == 33
    fixed = cli_inproc("validate", str(out), "--json")
    assert fixed.returncode == 0 and json.loads(fixed.stdout)["errors"] == []


def test_repair_never_writes_over_the_input(tmp_path):
    records = json.loads(BUNDLED_SAMPLE.read_text(encoding="utf-8"))
    att = records[0]["claims"][0]["attribution"][0]
    att["start_char"] += 5
    att["end_char"] += 5
    path = tmp_path / "shifted.json"
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    result = cli_inproc("validate", str(path), "--repair", "--write", str(path))
    assert result.returncode == 2 and "refusing to overwrite" in result.stderr
    assert path.read_text(encoding="utf-8") == before
    out = tmp_path / "fixed.json"
    result, rep = _validate_json(str(path), "--repair", "--write", str(out))
    assert rep["repairs"][0]["new"] == [att["start_char"] - 5, att["end_char"] - 5]
    assert json.loads(cli_inproc("validate", str(out), "--json").stdout)["errors"] == []


def test_answers_validated_against_records():
    result, rep = _validate_json(str(shared("he_model_answers_sample.jsonl")), "--records", str(shared("he_qa_sample.json")))
    assert result.returncode == 0, result.stderr
    assert rep["records"] == 32 and rep["claims"] == 117 and rep["spans"] == 116 == rep["spans_verified"]
    assert rep["answers_by_model"] == {"faithful-paraphraser": 16, "hallucinator": 8, "mixed": 8}


def test_search_eval_json_reports_ours_and_the_baseline():
    result = cli_inproc("search-eval", str(BUNDLED_SAMPLE), "--json")
    assert result.returncode == 0, result.stderr
    rep = json.loads(result.stdout)
    assert rep["overall"]["claims"] == 6 and rep["overall"]["span_recall"] == 1.0
    assert set(rep["ratio_to_baseline"]) >= {"span_recall", "hit@1", "hit@5", "mrr"}
    assert set(rep["by_group"]) == {"dialogue", "encyclopedic", "journalistic"}


def test_help_is_fast_to_import():
    result = cli_inproc("--help")
    assert result.returncode == 0 and "validate" in result.stdout and "search-eval" in result.stdout
