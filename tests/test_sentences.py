import json
import re

from judge.text import sentence_index, split_sentences, word_forms, words, normalize
from tests.conftest import shared

# The fixtures' own rule (../shared/data/README.md), implemented independently here.
_RULE = re.compile(r"[.?!]+[\"'\u05f3\u05f4\u201c\u201d\u2019\u00bb)\]]*(?=\s|$)")


def _reference_sentences(text):
    out, last = [], 0
    for m in _RULE.finditer(text):
        chunk = text[last : m.end()]
        start = last + len(chunk) - len(chunk.lstrip())
        out.append((start, m.end()))
        last = m.end()
    rest = text[last:]
    if rest.strip():
        start = last + len(rest) - len(rest.lstrip())
        out.append((start, start + len(rest.strip())))
    return out


def texts(text):
    sentences = split_sentences(text)
    for s in sentences:
        assert text[s.start : s.end] == s.text
    return [s.text for s in sentences]


def test_hebrew_fixture_sentences_follow_the_fixture_rule():
    records = json.loads(shared("he_qa_sample.json").read_text(encoding="utf-8"))
    for r in records:
        ours = [(s.start, s.end) for s in split_sentences(r["source_text"])]
        assert ours == _reference_sentences(r["source_text"]), r["id"]
        sentences = split_sentences(r["source_text"])
        for c in r["claims"]:
            for a in c["attribution"]:
                assert sentence_index(sentences, a["start_char"], a["end_char"]) == a["sentence_id"]


def test_abbreviations_initials_and_decimals_do_not_split():
    assert texts("Dr. Smith paid 3.2 million in Jan. 2020. J. R. Tolkien wrote it.") == [
        "Dr. Smith paid 3.2 million in Jan. 2020.",
        "J. R. Tolkien wrote it.",
    ]
    assert texts("O Sr. Silva chegou às 20:15. A Profa. Ana saiu.") == ["O Sr. Silva chegou às 20:15.", "A Profa. Ana saiu."]


def test_closing_quotes_stay_with_their_sentence():
    assert texts('הוא אמר: "זה הסוף." ואז הלך.') == ['הוא אמר: "זה הסוף."', "ואז הלך."]
    assert texts("עלה 12 ש\"ח. זה הכול.") == ['עלה 12 ש"ח.', "זה הכול."]


def test_a_single_line_break_stays_inside_a_sentence_but_speaker_turns_and_bullets_split():
    text = "תקרת החלל\nאינה מסוגלת עוד לשאת את המשקל.\nמראיין: ומה הלאה\nד\"ר לנדאו: נראה."
    assert texts(text) == ["תקרת החלל\nאינה מסוגלת עוד לשאת את המשקל.", "מראיין: ומה הלאה", 'ד"ר לנדאו: נראה.']
    assert texts("Items\n- first item\n- second item") == ["Items", "- first item", "- second item"]
    assert texts("# Title\nBody text here.") == ["# Title", "Body text here."]
    assert texts("para one\n\npara two") == ["para one", "para two"]


def test_latin_title_lines_split_before_a_capitalised_line():
    assert texts("Hollywood Star Walk\nIrene Hervey was an actress.") == ["Hollywood Star Walk", "Irene Hervey was an actress."]
    assert texts("Dec. 20, 1998\nin Motion Picture Country House") == ["Dec. 20, 1998\nin Motion Picture Country House"]


def test_arabic_question_mark_and_ellipsis():
    assert texts("ما هذا؟ هذا كتاب.") == ["ما هذا؟", "هذا كتاب."]
    assert texts("Wait... What?") == ["Wait...", "What?"]
    assert texts("Wait... what?") == ["Wait... what?"]  # a lower-case continuation is the same sentence


def test_sentence_index_rejects_a_span_across_two_sentences():
    sentences = split_sentences("One two. Three four.")
    assert sentence_index(sentences, 0, 8) == 0
    assert sentence_index(sentences, 4, 14) is None


def test_hebrew_prefixes_meet_their_stems():
    assert "בית" in word_forms("ובבית")
    assert "עירוניים" in word_forms("והעירוניים")
    assert word_forms("1,450") == ("1450",)
    assert "actor" in word_forms("actors")
    assert words(normalize('צה״ל ו־12% ב"ה').text) == ['צה"ל', "ו", "12%", 'ב"ה']


def test_an_inline_list_number_starts_an_item_and_ends_no_sentence():
    """Issue 24: "mentioned: 1. Veeram ... 2. Another" made the claims "...mentioned: 1." and "2." (a number
    with no statement, judged unsupported on a correct answer). A numbered item starts a sentence; its number
    ends none. Only numbers that count 1, 2, ... in order are items: a lone "Total: 12." is a statement."""
    assert texts("Two films are mentioned: 1. Veeram, a 2014 film. 2. Another one, a 2016 drama.") == [
        "Two films are mentioned:", "1. Veeram, a 2014 film.", "2. Another one, a 2016 drama."]
    assert texts("1. First point. 2. Second point. 3. Third.") == ["1. First point.", "2. Second point.", "3. Third."]
    assert texts("Passos: 1. Abra a caixa; 2. Feche a tampa.") == ["Passos:", "1. Abra a caixa;", "2. Feche a tampa."]
    assert texts("שלבים: 1. פותחים את הקופסה. 2. סוגרים אותה.") == ["שלבים:", "1. פותחים את הקופסה.", "2. סוגרים אותה."]
    assert texts("Items\n1. First item.\n2. Second one.") == ["Items", "1. First item.", "2. Second one."]  # was "1.", "First item." ...
    for statement in ("Total: 12. That is all.", "The score was 2. Then he left.", "Chapter 1. Intro text.", "Total: 1. That is all."):
        assert len(texts(statement)) == 2 and texts(statement)[0].endswith("."), statement
    # the rest of a decimal, a version, a score or a verse is no list number, nor is a value after a label
    # (found by a review: "Inflation was 4.1. It rose to 4.2." had become "... was 4." and "1. It rose ...")
    for prose, first in (("Inflation was 4.1. It rose to 4.2. Then it fell.", "Inflation was 4.1."),
                         ("The first half ended 1:1. The match ended 1:2. Fans cheered.", "The first half ended 1:1."),
                         ("Genesis 1:1. In the beginning. Genesis 1:2. And the earth.", "Genesis 1:1."),
                         ("האינפלציה הייתה 4.1. ואז 4.2. ואז ירדה.", "האינפלציה הייתה 4.1."),
                         ("Wins: 1. Losses: 2. Draws: 3.", "Wins: 1.")):
        assert texts(prose)[0] == first, prose
