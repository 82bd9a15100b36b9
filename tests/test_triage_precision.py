"""Issue 24.2: triage's precision is 1 by construction. Verbatim means on word boundaries after normalisation
(near-miss substrings in English, Portuguese, Hebrew and Arabic are no match), and only a full proposition
that is a whole sentence of the source is settled without a model."""

from __future__ import annotations

import pytest

from judge.judges import ClaimToJudge, JudgeContext, offer, triage
from judge.judges.panel import Panel
from judge.models import Source
from judge.search import Index
from judge.stages.evidence import check_claim
from judge.stages.evidence import VERBATIM_METHODS, read_evidence
from judge.text.bounds import find_word, on_word_boundaries
from judge.text.proposition import not_a_proposition

# (claim, a source that holds it only inside longer words or joined to them, a source that holds it on word boundaries)
NEAR_MISSES = [
    pytest.param(
        "largest city in the Midwest",
        "Chicago is the second-largest city in the Midwestern United States.",
        "Chicago is the largest city in the Midwest.",
        id="en-hyphen-and-suffix",
    ),
    pytest.param("the film earned $3", "By May the film earned $3.5 million.", "By May the film earned $3 million.", id="en-decimal"),
    pytest.param("the museum of Roy Orbison", "It is the museum of Roy Orbison's childhood home.", "It is the museum of Roy Orbison, in Texas.", id="en-possessive"),
    pytest.param(
        "A final foi disputada no Maracanã",
        "A final foi disputada no Maracanãzinho, no Rio de Janeiro.",
        "A final foi disputada no Maracanã, no Rio de Janeiro.",
        id="pt-suffix",
    ),
    pytest.param("A inflação chegou a 4", "A inflação chegou a 4,5% em 2019.", "A inflação chegou a 4 pontos em 2019.", id="pt-decimal-comma"),
    pytest.param("brasileiros votaram em massa", "Os teuto-brasileiros votaram em massa.", "Os brasileiros votaram em massa.", id="pt-hyphen"),
    pytest.param("מחיר הדלק עלה ב-5 אחוזים", "השר אמר שמחיר הדלק עלה ב-5 אחוזים.", "לפי הלשכה, מחיר הדלק עלה ב-5 אחוזים.", id="he-prefix-she"),
    pytest.param("תינוקות יוכלו לקבל חיסון מוקדם", "ההורים יגיעו, ותינוקות יוכלו לקבל חיסון מוקדם.", "בנוסף, תינוקות יוכלו לקבל חיסון מוקדם.", id="he-prefix-vav"),
    pytest.param("המשרד הפיץ את הספר", "המשרד הפיץ את הספרים לבתי הספר.", "המשרד הפיץ את הספר לבתי הספר.", id="he-suffix"),
    pytest.param('הוא שירת בצה', 'הוא שירת בצה"ל שלוש שנים.', "הוא שירת בצה שלוש שנים.", id="he-gershayim"),
    pytest.param("المدرسة الجديدة افتتحت في عام 2010", "والمدرسة الجديدة افتتحت في عام 2010.", "قال المدير: المدرسة الجديدة افتتحت في عام 2010.", id="ar-prefix-wa"),
    pytest.param("شركة أعلنت عن أرباح", "الشركة أعلنت عن أرباح قياسية.", "قالت شركة أعلنت عن أرباح قياسية إنها ستتوسع.", id="ar-article"),
    pytest.param("قرأ الطالب الكتاب", "قرأ الطالب الكتابين في يوم واحد.", "قرأ الطالب الكتاب في يوم واحد.", id="ar-suffix"),
]


@pytest.mark.parametrize(("claim", "inside", "bounded"), NEAR_MISSES)
def test_a_near_miss_substring_is_no_verbatim_match_in_any_language(claim, inside, bounded):
    assert claim in inside  # the plain substring test the search used to make
    assert find_word(inside, claim) == -1
    found = Index(inside).search(claim, 5)
    assert all(c.method not in VERBATIM_METHODS for c in found), [(c.method, c.excerpt) for c in found]
    # the same claim on word boundaries is found verbatim, and the span is exactly the claim
    at = find_word(bounded, claim)
    assert at >= 0 and on_word_boundaries(bounded, at, at + len(claim))
    best = Index(bounded).search(claim, 5)[0]
    assert best.method in VERBATIM_METHODS and best.excerpt == claim


def test_normalisation_comes_first_then_the_boundaries():
    # curly quotes, niqqud and case differ from the claim; the match is still verbatim, on boundaries
    source = "השר אמר: ״מְחִיר הדלק עלה ב־5 אחוזים״. המחיר ירד מאז."
    best = Index(source).search('מחיר הדלק עלה ב-5 אחוזים', 3)[0]
    assert best.method == "normalized" and best.excerpt == "מְחִיר הדלק עלה ב־5 אחוזים"
    # ... and a prefix letter before it in the source still makes it another word
    assert Index("השר אמר שמְחִיר הדלק עלה ב־5 אחוזים.").search('מחיר הדלק עלה ב-5 אחוזים', 3)[0].method not in VERBATIM_METHODS


def test_word_boundary_edges():
    assert on_word_boundaries("(Chicago)", 1, 8)
    assert not on_word_boundaries("1,450 trips", 0, 1)  # "1" of "1,450"
    assert on_word_boundaries("1, 450 trips", 0, 1)  # a list: "1, 450"
    assert not on_word_boundaries("U.S. Army", 2, 9)  # "S. Army" inside "U.S."
    assert on_word_boundaries('he said "yes" twice', 9, 12)  # quotes around a word are no gershayim
    assert not on_word_boundaries('ש"ח', 2, 3)
    assert find_word("Midwestern and Midwest", "Midwest") == 15  # the first occurrence on boundaries


# -- what triage settles ------------------------------------------------------------------------------------------
def _settle(claim: str, source: str, question: str = "?"):
    index = Index(source, "d")
    found = index.search(claim, 5)
    checks = check_claim(claim, found, {"d": source})
    offered = offer(found, "1")
    verdict = triage(ClaimToJudge("1", claim, offered, checks), JudgeContext(question, "", [Source(doc_id="d", text=source)]))
    return verdict, read_evidence(claim, found, checks)


@pytest.mark.parametrize(
    ("claim", "source"),
    [
        pytest.param("The bridge opened in 1937.", "Fog is common. The bridge opened in 1937. It is red.", id="en"),
        pytest.param("A ponte foi inaugurada em 1937.", "A neblina é comum. A ponte foi inaugurada em 1937. Ela é vermelha.", id="pt"),
        pytest.param("הגשר נפתח לתנועה בשנת 1937.", "הערפל נפוץ באזור. הגשר נפתח לתנועה בשנת 1937. צבעו אדום.", id="he"),
        pytest.param("افتتح الجسر أمام حركة المرور عام 1937.", "الضباب شائع هناك. افتتح الجسر أمام حركة المرور عام 1937. لونه أحمر.", id="ar"),
        pytest.param("The bridge opened in 1937", "The bridge opened in 1937, and the tolls were removed in 1970.", id="en-coordinated-clause"),
        pytest.param("בנוסף יוצבו ניידות חיסון ליד מרכזים קהילתיים.", "בנוסף יוצבו ניידות חיסון ליד מרכזים קהילתיים, ותינוקות יקבלו מנה מוקדמת.", id="he-coordinated-clause"),
    ],
)
def test_a_whole_verbatim_sentence_is_settled_in_each_language(claim, source):
    verdict, _ = _settle(claim, source)
    assert verdict is not None and verdict.label == "supported" and verdict.how == "triage"
    (span,) = verdict.evidence
    assert source[span.start_char : span.end_char] == span.excerpt


@pytest.mark.parametrize(
    ("claim", "source", "why"),
    [
        # short answers: true or false only with their question ("Who was the best kickboxer?")
        ("Mike's Gym in Oostzaan", "He trained at Mike's Gym in Oostzaan for ten years.", "noun phrase"),
        ("Delhi", "The group has its head office in Delhi.", "short answer"),
        ("300 משתתפים בתוכנית", "בשנה שעברה היו 300 משתתפים בתוכנית.", "short answer"),
        # a question is no claim, even when the source asks it too
        ("How many maths teachers are missing this year?", "How many maths teachers are missing this year? Nobody knows.", "question"),
        ("כמה מורים למתמטיקה חסרים השנה?", "כמה מורים למתמטיקה חסרים השנה? איש אינו יודע.", "question"),
        # a pronoun stands for whoever the source means, not whoever the answer means
        ("He was born in 1942.", "John met Paul in 1957. He was born in 1942.", "pronoun"),
        # words before the match take it back, words after it narrow it
        ("the vaccine causes autism.", "Critics claimed that the vaccine causes autism.", "inside"),
        ("Visits rose mainly among the elderly.", "Visits rose mainly among the elderly with chronic illness.", "inside"),
        ("הבריטים פינו את שדה התעופה.", "המצרים תקפו בהנחה מוטעית כי הבריטים פינו את שדה התעופה.", "inside"),
        # a title or list item of the source, not a sentence of it
        ("The bridge opened in 1937", "Key facts\n- The bridge opened in 1937\n- The bridge is red", "full stop"),
        ("Born in New Orleans in 1941.", "Anne Rice\n- Born in New Orleans in 1941.\n- Wrote novels.", "noun phrase"),
    ],
)
def test_no_free_verdict_for_what_is_no_full_proposition_of_the_source(claim, source, why):
    verdict, features = _settle(claim, source)
    assert features.verbatim  # every one of them is found verbatim, on word boundaries
    assert verdict is None, why


def test_the_panel_hands_triage_the_records_sources():
    source = "Fog is common. The bridge opened in 1937. It is red."
    found = Index(source, "d").search("The bridge opened in 1937.", 3)
    claims = [ClaimToJudge("1", "The bridge opened in 1937.", offer(found, "1"), check_claim("The bridge opened in 1937.", found))]

    class Never:
        name = "never"

        async def judge(self, claims, context):
            raise AssertionError("triage should have settled every claim")

    import asyncio

    got = asyncio.run(Panel([Never()], triage=True).verdicts(claims, JudgeContext("When?", "en", [Source(doc_id="d", text=source)])))
    assert [v.how for v in got["1"]] == ["triage"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("yes", "short answer"),
        ("Arthur's Magazine", "short answer"),
        ("10 דקות", "short answer"),
        ("Which magazine was started first?", "question"),
        ("האם המסילה נפתחה ב-1892", "question"),
        ("هل افتتح الجسر عام 1937؟", "question"),
        ("Quem fundou a empresa em 1990", "question"),
        ("Anne Rice and her novels:", "heading"),
        ("It is 2,737 metres long.", "opens with"),
        ("זו עלייה של 12 אחוזים לעומת 2023.", "opens with"),
        ("Ela foi eleita em 2010 pela primeira vez.", "opens with"),
        ("largest city in the Midwestern United States", "no verb"),
        ("O museu de arte moderna de São Paulo", "no verb"),
    ],
)
def test_what_is_no_full_proposition(text, reason):
    assert reason in (not_a_proposition(text) or "")


@pytest.mark.parametrize(
    "text",
    [
        "First for Women was started first.",
        "The new line runs every 10 minutes at peak hours.",
        "Chicago hosts the largest festival in the Midwest.",
        "Roy Orbison wrote the song in 1961.",
        "São Paulo é a maior cidade do Brasil.",
        "Os alunos estudam matemática todos os dias.",
        "A empresa criou 300 empregos em 2020.",
        "מסילת יפו–ירושלים נחנכה רשמית ב־26 בספטמבר 1892.",
        "افتتح الجسر أمام حركة المرور عام 1937.",
    ],
)
def test_full_propositions_pass(text):
    assert not_a_proposition(text) is None


def test_free_supported_alone_would_have_settled_the_short_answer():
    """The features' own rule (verbatim, 3 words, no conflict) is not enough: the proposition test is what refuses it."""
    verdict, features = _settle("Mike's Gym in Oostzaan", "He trained at Mike's Gym in Oostzaan for ten years.")
    assert features.settles_free() and verdict is None
