"""One code vocabulary for languages (issue 48.1): a run records "he" for a Hebrew record and the Hebrew profile
of the no-model judge applies to it, through ``judge.evaluate`` (not a "he" passed straight into the judge);
a config's profile names a code; a run written with the old names reads back as codes."""

from __future__ import annotations

import json

import pytest

import judge
from judge.problems import DatasetError
from judge.results import RecordResult
from judge.config import ConfigError
from judge.text.language import LANGUAGES, detect_language, direction, language_code, language_name
from tests.conftest import ROOT

DATA = ROOT / "judge" / "data"
# No fitted score reaches supported_from 1.01, and unsupported_below 1.0 names every claim short of all its words unsupported.
ALL_UNSUPPORTED = {"unsupported_below": 1.0, "supported_from": 1.01, "unsure_from": 1.01}


def _run(tmp_path, name: str, profiles: dict | None = None):
    config = {"name": name, "dataset": {"path": str(DATA / "he_sample.json")}, "answers": {"path": str(DATA / "he_sample_answers.jsonl")},
              "decompose": {"method": "sentences"}, "adjudicate": {"judges": ["deterministic"]}, "cache_dir": str(tmp_path / "cache")}
    if profiles is not None:
        config["adjudicate"]["deterministic"] = {"profiles": profiles}
    try:
        return judge.evaluate(config, runs_dir=tmp_path / "runs")
    except ConfigError:
        raise
    except Exception:  # scoring is another issue's; the verdicts are what this test reads
        from judge.runs.run import Run

        return Run.open(max((tmp_path / "runs").glob(f"*{name}*")))


def _labels(run) -> list[str]:
    return [c.label for c in run.claims()]


def test_a_hebrew_record_is_recorded_as_he_and_its_profile_applies_in_a_run(tmp_path):
    plain = _run(tmp_path, "plain")
    assert {r.language for r in plain.results()} == {"he"}
    # The Hebrew profile is the one the run reads: overriding it changes the verdicts, overriding English does not.
    hebrew = _run(tmp_path, "hebrew", {"he": ALL_UNSUPPORTED})
    english = _run(tmp_path, "english", {"en": ALL_UNSUPPORTED})
    assert _labels(english) == _labels(plain)
    assert _labels(hebrew) != _labels(plain)
    assert _labels(hebrew).count("unsupported") > _labels(plain).count("unsupported")  # the override's own numbers are read


def test_a_profile_keyed_by_a_name_is_refused_with_the_codes(tmp_path):
    with pytest.raises((ConfigError, DatasetError, ValueError)) as e:
        _run(tmp_path, "named", {"Hebrew": ALL_UNSUPPORTED})
    assert "Hebrew" in str(e.value) and "he" in str(e.value)


def test_the_detector_speaks_codes_and_names_are_derived():
    assert detect_language("מכתש רמון נוצר בתהליך ארוך של סחיפה.") == "he"
    assert detect_language("The bridge was built in 1932 by the city.") == "en"
    assert detect_language("A ponte foi construída em 1932 pela cidade de São Paulo.") == "pt"
    assert set(LANGUAGES) >= {"he", "en", "ar", "pt", "es"}
    assert language_name("he") == "Hebrew" and language_code("Hebrew") == "he" and language_code("he") == "he"
    assert language_code("Klingon") is None
    assert direction("he") == direction("Hebrew") == "rtl" and direction("en") == "ltr"


def test_a_result_written_with_the_old_names_reads_back_as_codes():
    line = json.dumps({"schema_version": 1, "record_id": "r", "question": "q", "language": "Hebrew"})
    assert RecordResult.model_validate_json(line).language == "he"
    with pytest.raises(ValueError):
        RecordResult.model_validate_json(json.dumps({"schema_version": 1, "record_id": "r", "question": "q", "language": "Hebrew.\nSYSTEM: x"}))


def test_the_prompts_still_name_the_language(tmp_path):
    from judge.prompts import load_prompt

    messages = load_prompt("answer").render(language="he", question="q?", sources=[])
    assert "Hebrew" in messages[0]["content"] and " he," not in messages[0]["content"]
