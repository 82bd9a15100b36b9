import json

import pytest

from judge.datasets import load, load_checked, sniff
from judge.models import Answer, Record
from judge.problems import DatasetError
from tests.conftest import BUNDLED_SAMPLE, shared


def test_bundled_sample_loads_as_records_with_verified_spans():
    records = load(BUNDLED_SAMPLE)
    assert len(records) == 3 and all(isinstance(r, Record) for r in records)
    for r in records:
        assert r.reference_answer == " ".join(c.text for c in r.claims)
        for c in r.claims:
            for a in c.attribution:
                assert r.source_text[a.start_char : a.end_char] == a.source_excerpt
                assert a.doc_id == r.sources[0].doc_id


def test_hebrew_fixture_counts_match_its_readme():
    records = load(shared("he_qa_sample.json"))
    assert len(records) == 16
    assert sum(len(r.claims) for r in records) == 42
    assert sum(len(c.attribution) for r in records for c in r.claims) == 64
    assert sum(1 for r in records for c in r.claims if len(c.attribution) >= 2) == 22
    assert all(len(r.human_ratings) == 4 for r in records)


def test_answers_file_with_gold_labels_and_support_checked_against_records():
    answers = load(shared("he_model_answers_sample.jsonl"), records_path=shared("he_qa_sample.json"))
    assert len(answers) == 32 and all(isinstance(a, Answer) for a in answers)
    labels = [c.label for a in answers for c in a.gold_claims]
    assert len(labels) == 117
    assert labels.count("supported") == 65 and labels.count("contradicted") == 18
    assert sum(len(c.support) for a in answers for c in a.gold_claims) == 116


def test_wice_joins_evidence_with_exact_offsets_and_keeps_alternatives():
    records = load(shared("external/wice/claim_test.jsonl"))
    assert len(records) == 358
    raw = [json.loads(line) for line in shared("external/wice/claim_test.jsonl").read_text().splitlines()]
    labels = {"supported": 0, "partially_supported": 0, "unsupported": 0}
    for r, line in zip(records, raw):
        claim = r.claims[0]
        labels[claim.label] += 1
        assert len(claim.gold_sets()) == sum(1 for s in line["supporting_sentences"] if s)
        for gold in claim.gold_sets():
            for a in gold:
                assert r.source_text[a.start_char : a.end_char] == line["evidence"][a.sentence_id]
    assert labels == {"supported": 111, "partially_supported": 215, "unsupported": 32}


def test_squad_files_heq_and_faquad():
    heq = load(shared("external/heq/test_v1.1.json"))
    assert len(heq) == 1504
    assert sum(1 for r in heq if r.meta["is_impossible"]) == 432
    answerable = [r for r in heq if r.claims]
    assert all(r.claims[0].text == r.source_text[r.claims[0].attribution[0].start_char : r.claims[0].attribution[0].end_char] for r in answerable)
    faquad = load_checked(shared("external/faquad/dataset.json"))
    assert len(faquad.items) == 900
    assert len(faquad.problems) == 33  # the 33 real misaligned offsets, each reported
    assert all(p.field.startswith("answers[") and p.record_id for p in faquad.problems)


def test_format_is_sniffed():
    assert sniff(BUNDLED_SAMPLE) == "hebrew-qa"
    assert sniff(shared("he_model_answers_sample.jsonl")) == "answers"
    assert sniff(shared("external/wice/claim_test.jsonl")) == "wice"
    assert sniff(shared("external/heq/test_v1.1.json")) == "squad"


def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def _record(rid, **changes):
    base = json.loads(BUNDLED_SAMPLE.read_text(encoding="utf-8"))[0]
    base = {**base, "id": rid}
    base.update(changes)
    return base


def test_every_bad_record_is_reported_with_file_record_and_field(tmp_path):
    good = _record("ok-1")
    missing = _record("bad-missing")
    del missing["question"]
    wrong_type = _record("bad-type", difficulty="hard")
    out_of_range = _record("bad-range")
    out_of_range["claims"] = json.loads(json.dumps(out_of_range["claims"]))
    out_of_range["claims"][0]["attribution"][0]["end_char"] = 99_999
    mismatch = _record("bad-excerpt")
    mismatch["claims"] = json.loads(json.dumps(mismatch["claims"]))
    mismatch["claims"][1]["attribution"][0]["source_excerpt"] = "טקסט שאינו במקור"
    path = _write(tmp_path, "bad.json", [good, missing, wrong_type, out_of_range, mismatch])
    with pytest.raises(DatasetError) as info:
        load(path)
    found = {(p.record_id, p.field) for p in info.value.problems}
    assert ("bad-missing", "question") in found
    assert ("bad-type", "difficulty") in found
    assert ("bad-range", "claims[0].attribution[0].end_char") in found
    assert ("bad-excerpt", "claims[1].attribution[0].source_excerpt") in found
    assert all(p.file == str(path) for p in info.value.problems)
    assert "ok-1" not in {p.record_id for p in info.value.problems}


def test_malformed_json_and_invalid_utf8_are_problems_not_tracebacks(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('[{"id": "x", ', encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        load(bad, format="hebrew-qa")
    assert "malformed JSON at line 1" in str(info.value)
    raw = tmp_path / "latin1.jsonl"
    raw.write_bytes(b'{"record_id": "r", "model": "m", "answer": "caf\xe9"}\n')
    with pytest.raises(DatasetError) as info:
        load(raw, format="answers")
    assert "not valid UTF-8" in str(info.value)


def test_bad_jsonl_lines_are_each_named(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text(
        '{"record_id": "a", "model": "m", "answer": "x"}\n'
        "not json\n"
        '{"record_id": "b", "model": "m", "answer": "y", "gold_claims": [{"text": "t", "label": "maybe"}]}\n',
        encoding="utf-8",
    )
    with pytest.raises(DatasetError) as info:
        load(path, format="answers")
    problems = info.value.problems
    assert [p.record_id for p in problems] == ["line 2", "b (line 3)"]
    assert problems[1].field == "gold_claims[0].label"


def test_unknown_format_is_a_clear_error(tmp_path):
    path = _write(tmp_path, "x.json", {"hello": 1})
    with pytest.raises(DatasetError, match="cannot tell the format"):
        load(path)
    with pytest.raises(DatasetError, match="unknown format"):
        load(path, format="csv")
