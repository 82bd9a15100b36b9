"""Claims read right in any language (issue 45.1, 45.2, 45.3, 45.5, 45.6), through the public path: one record
each through ``judge.evaluate`` with the deterministic judge, no model. The sentences are written for these tests."""

from __future__ import annotations

import json

import pytest

import judge
from judge.results import RecordResult
from judge.stages.names import names_in
from judge.text.language import LANGUAGES, OTHER, detect_language

CONFIG = {"adjudicate": {"judges": ["deterministic"]}}


def _claims(tmp_path, record: dict, answer: str):
    run = judge.evaluate(CONFIG, records=[record], answers={record["id"]: answer}, runs_dir=tmp_path / "runs")
    result = json.loads((run.path / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])
    return list(run.claims()), result


GERMAN = {"id": "de", "question": "Welcher Bahnhof ist der älteste in den USA?",
          "source": "Der älteste Bahnhof der USA ist die Ellicott City Station. Er wurde am 24. Mai 1830 eröffnet. "
                    "Der Hauptsitz der Bahngesellschaft lag in Baltimore."}


def test_a_german_sentence_is_read_alone_and_an_ordinal_ends_no_sentence(tmp_path):
    claims, result = _claims(tmp_path, GERMAN, "Der älteste Bahnhof der USA ist die Ellicott City Station. Er wurde am 24. Mai 1830 eröffnet.")
    assert result["language"] == "de"
    assert [c.text for c in claims] == ["Der älteste Bahnhof der USA ist die Ellicott City Station.", "Er wurde am 24. Mai 1830 eröffnet."]
    assert all(c.label == "supported" for c in claims)
    assert not any(a["claims"][0].get("reads_question") for a in result["answers"] if a["claims"])


def test_a_german_answer_that_changes_a_date_is_not_supported(tmp_path):
    claims, _ = _claims(tmp_path, GERMAN, "Er wurde am 24. Mai 1850 eröffnet.")
    assert [c.text for c in claims] == ["Er wurde am 24. Mai 1850 eröffnet."] and claims[0].label != "supported"


def test_a_french_sentence_is_read_alone_and_elle_is_no_name(tmp_path):
    record = {"id": "fr", "question": "Quand la tour Eiffel a-t-elle été construite ?",
              "source": "La tour Eiffel a été construite entre 1887 et 1889 pour l'Exposition universelle de Paris."}
    claims, result = _claims(tmp_path, record, "La tour Eiffel a été construite entre 1887 et 1889 pour l'Exposition universelle.")
    assert result["language"] == "fr" and len(claims) == 1 and claims[0].label == "supported"
    assert claims[0].text.startswith("La tour Eiffel")  # its own, not its question's
    assert "Elle" not in names_in("Elle a été construite entre 1887 et 1889.")


def test_spanish_openers_are_no_names_and_a_spanish_claim_is_read_alone(tmp_path):
    record = {"id": "es", "question": "¿Cuál es la capital de Chile?",
              "source": "Santiago es la capital de Chile. Además, es la ciudad más poblada del país."}
    claims, result = _claims(tmp_path, record, "Santiago es la capital de Chile. Además, es la ciudad más poblada del país.")
    assert result["language"] == "es" and [c.label for c in claims] == ["supported", "supported"]
    assert names_in("Además, es la ciudad más poblada del país.") == []
    assert names_in("También Juan Pérez vive en Santiago.") == ["Juan Pérez", "Santiago"]


def test_capitalised_german_nouns_are_no_names():
    assert names_in("Der Hauptsitz der Firma liegt in der Stadt.") == []
    assert "USA" in names_in("Der älteste Bahnhof der USA ist die Ellicott City Station.")


def test_hindi_words_keep_their_vowel_signs_and_devanagari_digits_are_numbers(tmp_path):
    record = {"id": "hi", "question": "विद्रोह कब हुआ?", "source": "सन् १८५७ में विद्रोह हुआ। इसलिए वातावरण बदल गया।"}
    claims, result = _claims(tmp_path, record, "सन् 1857 में विद्रोह हुआ। इसलिए वातावरण बदल गया।")
    assert result["language"] == "hi"
    assert [c.label for c in claims] == ["supported", "supported"]  # १८५७ is 1857; the danda ends a sentence
    wrong, _ = _claims(tmp_path, record, "सन् 1858 में विद्रोह हुआ।")
    assert wrong[0].label != "supported"
    from judge.text import words
    assert words("इसलिए वातावरण उनके") == ["इसलिए", "वातावरण", "उनके"]


@pytest.mark.parametrize("text", ["That 's a good idea .", "I did n't know that ."])
def test_tokenised_english_contractions_are_full_sentences(tmp_path, text):
    record = {"id": "en", "question": "Should we take the train?", "source": f"Sure. {text} The train leaves at noon."}
    claims, result = _claims(tmp_path, record, text)
    assert [c.text for c in claims] == [text]
    assert not result["answers"][0]["claims"][0].get("reads_question")


def test_the_detector_says_what_it_does_not_support_and_old_runs_read_back():
    assert detect_language("Der älteste Bahnhof der USA ist die Ellicott City Station.") == "de"
    assert detect_language("La tour Eiffel est le monument le plus visité de Paris.") == "fr"
    assert detect_language("इसलिए वातावरण बदल गया।") == "hi"
    assert detect_language("สวัสดีครับ ยินดีต้อนรับ") == OTHER
    assert detect_language("The city is on the river.") == "en"
    assert detect_language("O rio corre pelo Peru e pelo Brasil.") == "pt"
    assert {"en", "he", "ar", "pt", "es", OTHER} <= set(LANGUAGES)
    base = {"record_id": "r", "question": "q", "answers": []}
    for code in ("he", "de", OTHER):
        assert RecordResult.model_validate({**base, "language": code}).language == code
    with pytest.raises(Exception):
        RecordResult.model_validate({**base, "language": "Klingon"})
