"""Claims as a reader reads them, spans on token boundaries (issue 35, items 1, 2 and 7).

A full sentence is never read with its question, only an answer with no clause of its own; discourse tokens
are no claim and never the answer's content; lower-case and tokenised text is split into sentences; every
span the search emits starts and ends on the source's token boundaries; a model judge is shown the answer's
sentences as claims, each source sentence once per claim; no warning about model judges where none runs.
"""

from __future__ import annotations

import html
import json
import logging
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.claims_reading import full_sentence, labelled_sets, measure
from judge.search import Index
from judge.stages.decompose import sentence_claims
from judge.testing.scripts import pipeline_model, user_text
from judge.text import split_sentences
from judge.text.bounds import on_word_boundaries, snap_to_words
from judge.text.discourse import leading_discourse, only_discourse
from judge.text.proposition import own_clause
from tests.conftest import SHARED_DATA

FULL_SENTENCES = [  # issue 35: each was glued to its question ("no verb")
    "The Amazon River flows through Peru, Colombia and Brazil before reaching the Atlantic Ocean.",
    "Photosynthesis releases oxygen as a by-product.",
    "Blue whales feed almost exclusively on krill.",
    "It's a series of fantasy novels written by British author J. K. Rowling.",
    "The first depiction of skiers with two ski poles dates back to 1741.",
    "Chicago hosts the annual marathon every October.",
    "This resulted in later ill-feeling from the scientific community.",
    "helen will do rita a favour .",  # lower-cased, tokenised, taken for Portuguese by its letters
    "A empresa criou um novo produto em 2010.",
    "Os alunos estudam matemática todos os dias.",
    "O rio corre pelo Peru e pela Colômbia antes de chegar ao oceano.",  # a present form no closed list holds
    "A universidade representa o estado.",  # short Portuguese the language detector takes for English
    "הנהר זורם דרך פרו וקולומביה לפני שהוא מגיע לאוקיינוס.",
]
NO_CLAUSE = [  # answers that mean something only with their question
    "yes", "Delhi", "in 1952", "10 minutes", "Arthur's Magazine", "Born in New Orleans in 1941",
    "a series of fantasy novels written by British author J. K. Rowling", "the games hosted by Tokyo in 1964",
    "the river that flows through Peru", "because the river floods every spring", "em 1952",
    "a telecomunicação, o banco de dados e as aplicações tecnológicas", "10 דקות",
    "o conjunto particular de instruções que um computador possui", "justamente porque a informação certa é requisito",
    "para definir o estudo de sistemas artificiais", "um livro escrito por Machado de Assis", "the operating system of the computer",
]


@pytest.mark.parametrize("sentence", FULL_SENTENCES)
def test_a_full_sentence_is_never_read_with_its_question(sentence):
    assert own_clause(sentence)
    admitted = sentence_claims(sentence, "What do we know about it?")
    (claim,) = admitted.claims
    assert not claim.reads_question and claim.text == sentence
    assert (claim.spans[0].start_char, claim.spans[0].end_char) == (0, len(sentence))


@pytest.mark.parametrize("answer", NO_CLAUSE)
def test_an_answer_with_no_clause_of_its_own_is_read_with_its_question(answer):
    assert not own_clause(answer)
    (claim,) = sentence_claims(answer, "What is it?").claims
    assert claim.reads_question and claim.text == f"What is it? {answer}" and claim.spans[0].excerpt == answer


def test_the_oracle_of_the_labelled_set_count_tells_sentences_from_phrases():
    assert all(full_sentence(s) for s in FULL_SENTENCES[:6] + FULL_SENTENCES[7:9])
    assert not any(full_sentence(a) for a in NO_CLAUSE)


@pytest.mark.parametrize(
    "answer, question, texts, quotes, dropped",
    [
        ("Yes, the bridge opened in 1932 after four years of work.", "Did the bridge open?",
         ["the bridge opened in 1932 after four years of work."], ["the bridge opened in 1932 after four years of work."], []),
        ("That's right. Paris is the capital of France.", "Is Paris the capital?", ["Paris is the capital of France."],
         ["Paris is the capital of France."], ["That's right."]),
        ("Sure! No problem. Delhi.", "What is the capital of India?", ["What is the capital of India? Delhi."], ["Delhi."], ["Sure!", "No problem."]),
        ("Yes.", "Is Delhi the capital of India?", ["Is Delhi the capital of India? Yes."], ["Yes."], []),  # the whole answer: it answers
        ("כן, הנהר זורם דרך פרו וקולומביה לפני שהוא מגיע לאוקיינוס.", "האם הנהר זורם דרך פרו?",
         ["הנהר זורם דרך פרו וקולומביה לפני שהוא מגיע לאוקיינוס."], ["הנהר זורם דרך פרו וקולומביה לפני שהוא מגיע לאוקיינוס."], []),
        ("No one knows who built it.", "Who built it?", ["No one knows who built it."], ["No one knows who built it."], []),
    ],
)
def test_discourse_tokens_are_no_claim_and_never_the_answers_content(answer, question, texts, quotes, dropped):
    admitted = sentence_claims(answer, question)
    assert [c.text for c in admitted.claims] == texts
    assert [s.excerpt for c in admitted.claims for s in c.spans] == quotes
    assert all(answer[s.start_char : s.end_char] == s.excerpt for c in admitted.claims for s in c.spans)  # offsets exact
    assert [d.text for d in admitted.dropped] == dropped


def test_discourse_tokens_need_closing_punctuation():
    assert leading_discourse("Well-known bands play.") == 0 and leading_discourse("True love waits.") == 0
    assert leading_discourse("Yes \u2014 it is.") == len("Yes \u2014 ")
    assert only_discourse("That\u2019s right.") and only_discourse("Sim, claro.") and not only_discourse("Sim, ele veio.")


@pytest.mark.parametrize(
    "text, sentences",
    [
        ("it is a great job. the species that are hunted are referred to as game .",
         ["it is a great job.", "the species that are hunted are referred to as game ."]),
        ("friday . locke replaced him . he said so.", ["friday .", "locke replaced him .", "he said so."]),
        ("The U.S. president spoke at 10 a.m. today. then he left.", ["The U.S. president spoke at 10 a.m. today.", "then he left."]),
        ("And then... we left. e.g. the bridge.", ["And then... we left.", "e.g. the bridge."]),
        ("He scored in 2010. the next year he left.", ["He scored in 2010.", "the next year he left."]),
    ],
)
def test_lower_case_and_tokenised_text_is_split_into_sentences(text, sentences):
    assert [s.text for s in split_sentences(text)] == sentences


def test_the_opinion_riding_on_a_copied_sentence_is_its_own_claim():
    answer = "it is a great job. the species that are hunted are referred to as game ."
    assert [c.text for c in sentence_claims(answer, "").claims] == ["it is a great job.", "the species that are hunted are referred to as game ."]


TOKYO = "Tokyo hosted the Summer Olympic Games in 1964 and 2021. The games were postponed by a year because of the pandemic."


def test_a_fuzzy_span_is_never_cut_inside_a_number():
    found = Index(TOKYO).search("Tokyo hosted the Summer Olympic Games in 1964 and 2020.", 5)
    fuzzy = [c for c in found if c.method == "fuzzy"]
    assert fuzzy and fuzzy[0].excerpt.endswith("1964 and 2021")
    for c in found:
        for p in c.parts:
            assert TOKYO[p.start_char : p.end_char] == p.excerpt and on_word_boundaries(TOKYO, p.start_char, p.end_char)


def test_snapping_takes_the_whole_word_number_or_name():
    text = "Collins stayed in the command module Columbia; 1,450 km/h at U.S. second-largest."
    assert snap_to_words(text, 0, text.index("Columbia") + 5) == (0, text.index(";"))
    at = text.index("450")
    assert text[slice(*snap_to_words(text, at, at + 2))] == "1,450"
    at = text.index("largest")
    assert text[slice(*snap_to_words(text, at, at + 3))] == "second-largest"
    assert snap_to_words(text, 0, len(text)) == (0, len(text))


_SOURCE_WORDS = ["Tokyo", "hosted", "the", "Games", "in", "1964", "and", "2021", "Columbia", "1,450", "km/h", "U.S.", "second-largest",
                 "ירושלים", "מירושלים", "São", "Paulo", "d'água", "3.5", "módulo"]


@settings(deadline=None, max_examples=150, derandomize=True)
@given(source=st.lists(st.sampled_from(_SOURCE_WORDS + [".", ",", "\n"]), min_size=8, max_size=60),
       cut=st.tuples(st.integers(0, 400), st.integers(1, 120)), edit=st.sampled_from(["", "x", "0", "a"]))
def test_every_span_the_search_emits_is_on_token_boundaries(source, cut, edit):
    text = " ".join(source)
    start = min(cut[0], max(0, len(text) - 2))
    claim = text[start : start + cut[1]] + edit  # a piece of the source, its last word cut and changed
    for c in Index(text).search(claim, 5) + Index(text).offer(claim, 30):
        for p in c.parts:
            assert text[p.start_char : p.end_char] == p.excerpt
            assert on_word_boundaries(text, p.start_char, p.end_char), (claim, p.excerpt)


# -- the labelled sets --------------------------------------------------------------------------------------------
SETS = ["hebrew answers", "HeQ", "FaQuAD", "WiCE", "FaithBench", "DialSummEval"]


def _triples(name: str):
    if not SHARED_DATA.exists():
        pytest.skip(f"{SHARED_DATA} is absent (../shared/data exists only in the project workspace and CI)")
    return labelled_sets(SHARED_DATA)[name]


@pytest.mark.parametrize("name", SETS)
def test_no_full_sentence_is_read_with_its_question_on_any_labelled_set(name):
    m = measure(_triples(name), with_spans=False)
    assert m["claims"] > 0
    assert m["false glue"] == 0, m["glue examples"][:5]
    assert m["rule glues"] == 0, m["glue examples"][:5]  # nor would be, were it an answer's first sentence


@pytest.mark.slow
@pytest.mark.parametrize("name", SETS)
def test_no_span_starts_or_ends_inside_a_token_on_any_labelled_set(name):
    m = measure(_triples(name))
    assert m["spans"] > 0 and m["spans inside a token"] == 0, m["span examples"][:5]


# -- what a model judge is shown ----------------------------------------------------------------------------------
SOURCE = ("The Amazon River flows through Peru, Colombia and Brazil before reaching the Atlantic Ocean. "
          "It carries more water than any other river. "
          "Tokyo hosted the Summer Olympic Games in 1964 and 2021. The 2020 Games were postponed by a year.")
ANSWER = ("Yes, the Amazon River flows through Peru, Colombia and Brazil before reaching the Atlantic Ocean. "
          "Tokyo hosted the Summer Olympic Games in 1964 and 2020.")
_CLAIM_BLOCK = re.compile(r'<claim id="([^"]+)">(.*?)</claim>(.*?)(?=<claim id=|\Z)', re.S)


def _judge_bodies(scripted_server, tmp_path, batch: bool):
    import judge

    server = scripted_server(pipeline_model())
    config = {
        "name": "shown", "decompose": {"method": "sentences"}, "controls": {"enabled": False},
        "models": {"judge-b": {"model": "openai/judge-b", "api_base": server.base_url, "family": "fam-b"}},
        "adjudicate": {"judges": ["judge-b"], "triage": False, "batch_claims": batch},
        "cache_dir": str(tmp_path / "cache"),
    }
    records = [{"id": "r1", "question": "Which river flows through Peru, and where were the Olympics held?", "source": SOURCE}]
    run = judge.evaluate(config, records=records, answers={"r1": {"writer-x": ANSWER}}, runs_dir=tmp_path / "runs")
    assert not run.failures, run.failures
    return [user_text(b) for b in server.stats.bodies if "<claim id=" in user_text(b)]


@pytest.mark.slow
@pytest.mark.parametrize("batch", [True, False])
def test_a_model_judge_sees_the_answers_sentences_and_each_source_sentence_once(scripted_server, tmp_path, batch):
    bodies = _judge_bodies(scripted_server, tmp_path, batch)
    claims = {cid: (html.unescape(text), html.unescape(rest)) for b in bodies for cid, text, rest in _CLAIM_BLOCK.findall(b)}
    answer_sentences = [s.text for s in split_sentences(ANSWER)]
    assert sorted(t for t, _ in claims.values()) == sorted([answer_sentences[0][len("Yes, "):], answer_sentences[1]])
    source_sentences = [s.text for s in split_sentences(SOURCE)]
    for text, shown in claims.values():
        assert "Which river" not in text  # never glued to its question
        plain = shown.replace("<mark>", "").replace("</mark>", "")
        for sentence in source_sentences:
            assert plain.count(sentence.rstrip(".")) <= 1, (text, sentence, shown)
        for marked in re.findall(r"<mark>(.*?)</mark>", shown, re.S):
            at = SOURCE.find(marked)
            assert at >= 0 and on_word_boundaries(SOURCE, at, at + len(marked)), marked
        for passage in re.findall(r"<passage[^>]*>(.*?)</passage>", shown, re.S):
            for piece in re.split(r"\s*(?:…|\(as in passage [^)]*\)|</?mark>)\s*", passage):
                if piece.strip():
                    at = SOURCE.find(piece.strip())
                    assert at >= 0 and on_word_boundaries(SOURCE, at, at + len(piece.strip())), piece
    tokyo = next(shown for text, shown in claims.values() if text.startswith("Tokyo"))
    assert "1964 and 2021" in tokyo  # the token that decides the verdict is in what the judge reads


# -- warnings -----------------------------------------------------------------------------------------------------
def test_no_warning_about_model_judges_where_none_runs(tmp_path, caplog, capsys):
    import judge

    records = [{"id": "r1", "question": "Why is the sky blue?", "source": "Rayleigh scattering makes the sky look blue."}]
    with caplog.at_level(logging.WARNING):
        run = judge.evaluate({"name": "quiet", "adjudicate": {"judges": ["deterministic"]}}, records=records,
                             answers={"r1": {"model-a": "Rayleigh scattering makes the sky look blue."}}, runs_dir=tmp_path / "runs")
    said = caplog.text + capsys.readouterr().err
    assert "cannot tell the model family" not in said and run.summary["unknown_family_answer_models"] == []
    assert json.loads((run.path / "summary.json").read_text(encoding="utf-8"))["unknown_family_answer_models"] == []


def test_an_llm_decomposers_claims_lose_their_discourse_tokens_too():
    from judge.stages.claims import DISCOURSE_ONLY, admit_proposed

    answer = "Sure! Yes, the bridge opened in 1932 after four years of work. It is 300 metres long."
    admitted = admit_proposed(answer, "When did the bridge open?", [
        ("Sure!", "Sure!"),
        ("The bridge opened in 1932 after four years of work.", "Yes, the bridge opened in 1932 after four years of work."),
        ("The bridge is 300 metres long.", "It is 300 metres long."),
    ])
    assert [d.reason for d in admitted.dropped] == [DISCOURSE_ONLY]
    quotes = [s.excerpt for c in admitted.claims for s in c.spans]
    assert quotes == ["the bridge opened in 1932 after four years of work.", "It is 300 metres long."]
    assert all(answer[s.start_char : s.end_char] == s.excerpt for c in admitted.claims for s in c.spans)
    assert not any(c.reads_question for c in admitted.claims)
