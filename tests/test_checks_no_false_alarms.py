"""Issue 24.3: checks without false alarms. A name is no capitalised word opening a sentence; names meet their
fuller and shorter forms and the organisations around them; a number, a name or a correction makes a claim
contradicted only when the source states the same slot of the same entity otherwise. Each case comes from a
correct answer or claim that the checks called contradicted (HaluEval QA, HeQ, FaQuAD, WiCE, FaithBench, the
shared Hebrew answers), beside the real contradiction the same rule must still catch."""

from __future__ import annotations

import json

import pytest

from judge.search import Index
from judge.stages.evidence import check_claim
from judge.stages.names import name_present, names_in, related_names, same_name
from judge.stages.numbers import mentions
from judge.stages.alignment_numbers import aligned_mismatches
from judge.stages.source import correction_cue
from judge.stages.evidence import find_conflicts
from judge.judges.deterministic import DeterministicThresholds, fault_kind
from judge.stages.evidence import read_evidence
from tests.conftest import shared

# -- names -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Essentially, Roy Orbison was a singer.", ["Roy Orbison"]),
        ("Introduced in 2005, the Ford Fusion is a mid-size car.", ["Ford Fusion"]),
        ("Enquanto a Junta Médica Oficial da UFMS decide, o aluno espera.", ["Junta Médica Oficial da UFMS"]),
        ("Cada programa recebe o resultado.", []),
        ("Paris is the capital of France.", ["Paris", "France"]),  # a name that opens a sentence stays one
        ("Following Roy Orbison's death, fans mourned.", ["Roy Orbison's"]),
        ("On May 1, 2019, Harris was named to the roster.", ["Harris"]),  # a month is no name
    ],
)
def test_a_capitalised_word_opening_a_sentence_is_no_name(text, names):
    assert names_in(text) == names


def test_a_word_the_text_capitalises_inside_a_sentence_is_a_name_where_it_opens_one():
    assert "Essentially" in names_in("Essentially is a band. We saw Essentially live.")


@pytest.mark.parametrize(
    ("short", "full"),
    [("Roy Orbison", "Roy Kelton Orbison"), ("Anna Kournikova", "Anna Sergeyevna Kournikova"), ("J. Smith", "John Smith"), ("Orbison", "Roy Orbison")],
)
def test_names_meet_their_fuller_and_shorter_forms(short, full):
    assert same_name(short, full) and same_name(full, short)
    assert name_present(short, f"It was written by {full} in 1961.")
    assert not name_present(full, f"It was written by {short} in 1961.")  # the fuller form's extra token is not there


def test_other_names_stay_other():
    assert not same_name("Roy Orbison", "Roy Rogers") and not same_name("Anna Kournikova", "Jana Novotná")
    assert related_names("MedStar Health", "MedStar Washington Hospital Center")
    assert not related_names("Putnam County", "Westchester County")  # a generic word shared is no shared name
    assert not name_present("Rice", "Price rose sharply.")  # on word boundaries


# -- names in the source's near-duplicates -------------------------------------------------------------------------
def _conflicts(claim: str, source: str):
    at = source.find(claim)
    own = [("d", at, at + len(claim))] if at >= 0 else []
    return find_conflicts(claim, {"d": source}, own)


@pytest.mark.parametrize(
    ("claim", "source"),
    [
        # short answers (HaluEval QA right answers): they name no slot a sentence could fill otherwise
        ("Roy Orbison", "Roy Orbison was a singer. Essentially, Roy Orbison sang ballads with Roy Orbison's band."),
        ("Anna Kournikova", "Anna Kournikova is a tennis player. Anna Sergeyevna Kournikova and Jana Novotná won the doubles."),
        ("MedStar Washington Hospital Center", "MedStar Washington Hospital Center is a hospital. MedStar Washington Hospital Center belongs to MedStar Health."),
        # full propositions: the fuller form, and the organisation around the name, are the same entity
        ("The song was written by Roy Orbison in 1961.", "The song was written by Roy Orbison in 1961. Later the song was written down by Roy Kelton Orbison in 1961."),
        ("The hospital is run by MedStar Washington Hospital Center.",
         "The hospital is run by MedStar Washington Hospital Center. The hospital is run by MedStar Health, its parent."),
        # the claim's name is what it is about: another name there is another entity (WiCE)
        ("Harris was named to the 23 player roster for the World Cup.",
         "Harris was named to the 23 player roster for the World Cup. Carli Lloyd was named to the roster for the World Cup."),
    ],
)
def test_no_name_conflict_for_the_same_entity_or_another_one(claim, source):
    assert _conflicts(claim, source) == []


def test_a_name_in_the_same_slot_of_the_same_entity_is_still_a_conflict():
    claim = "The song Crying was written in 1961 by Roy Orbison for his album on Monument Records."
    found = _conflicts(claim, claim + " The song Crying was written in 1961 by Bob Dylan for his album on Monument Records.")
    assert [c.kind for c in found] == ["near_duplicate"] and "Bob Dylan" in found[0].detail


# -- numbers in the same slot -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("It also mentions Route 495, a freeway in Hudson County.", ["Route 495 is a 3.45-mile freeway in Hudson County."]),  # another unit
        ("A crash occurred on the A9 north of Berriedale around 2:00 PM.", ["The crash on the A9 north of Berriedale happened at 14:00."]),
        ("By the late 1990s, the bridge was carrying twice its traffic.", ["In 1997 the bridge was carrying twice its traffic."]),  # a decade
        ("In 1943, Sir John gave the house to the National Trust.", ["In 1929, Sir John sold the house to a bank."]),  # another slot
        ("Named after Selman Waksman, it was first awarded in 1968.", ["Sharon Long will receive the 2019 Selman A. Waksman Award."]),
        ("In 2018, Lincicome was granted a sponsor's exemption into the Barbasol Championship.",
         ["Sorenstam received a sponsor's exemption into the 2003 Colonial tournament."]),  # another entity
        ("The film had an early screening at the studios on June 8, 2019.", ["The film was screened at the studios on 2019-06-08, June 08, 2019."]),
        ("The first legs were played on March 6, and the second legs on March 13.", ["The first-leg games are on April 3, second-leg play on April 10."]),
        ("Brazil won the cup five times: 1958, 1962, 1970, 1994 and 2002.", ["Italy won the cup four times: 1934, 1938, 1982 and 2006."]),  # lists
        ("13 חברי כנסת", ["3 חברי כנסת הצביעו נגד ההצעה."]),  # a short answer: its slot is its question's
        ("15 horas", ["A carga horária total é de 450 horas."]),
    ],
)
def test_no_mismatch_outside_the_claims_slot(claim, evidence):
    assert aligned_mismatches(claim, evidence) == []


@pytest.mark.parametrize(
    ("claim", "evidence", "expected"),
    [
        ("Armstrong walked on the Moon on July 21, 1971.", ["Apollo 11 landed on July 20, 1969, and Armstrong walked on the Moon."], {("21", "20"), ("1971", "1969")}),
        ("אורכה היה כ־78 קילומטרים.", ['ואורכה היה כ־87 ק"מ והיא נפתחה ב־1892.'], {("78", "87")}),
        ("A crash occurred on the A9 north of Berriedale around 3:00 PM.", ["The crash on the A9 north of Berriedale happened around 14:00."], {("15:00", "14:00")}),
        ("The film had an early screening at the studios on June 9, 2019.", ["The film had an early screening at the studios on June 08, 2019."], {("9", "8")}),
        # "כ־1,000 דונם" was read as the year 1000, so the claim's 10,000 dunams met no number of its kind (issue 24)
        ("במסגרת תוכנית השיקום הוצף מחדש שטח של כ־10,000 דונם.", ['בשנות התשעים יצאה לדרך תוכנית שיקום החולה, ובמסגרתה הוצף מחדש שטח של כ־1,000 דונם ונוצר אגם רדוד בשם "אגמון החולה".'], {("10000", "1000")}),
        ("The programme restored 12,000 acres of wetland.", ["In 1994 the programme restored 1,200 acres of wetland."], {("12000", "1200")}),
    ],
)
def test_a_number_stated_otherwise_in_the_same_slot_is_still_a_mismatch(claim, evidence, expected):
    assert {(m.claim, m.candidate) for m in aligned_mismatches(claim, evidence)} == expected


def test_kinds_units_and_values_are_read_canonically():
    got = {m.value: (m.kind, m.unit) for m in mentions('At 2:00 PM on June 08, 2019, in the 1990s, 87 ק"מ, 25 מיליון ש"ח, a 3.45-mile road, 1500 pieces.')}
    assert got == {"14:00": ("time", None), "8": ("day", None), "2019": ("year", None), "1990": ("decade", None), "87": ("number", "km"),
                   "25": ("number", "ils"), "3.45": ("number", "mile"), "1500": ("number", "piec")}
    assert [m.kind for m in mentions("Em 15 de janeiro de 1998")] == ["day", "year"]
    assert [m.kind for m in mentions("CWC19 15 Jul 19")] == ["day", "year"]
    # no year is written with a thousands separator, in any of the ways the languages write one
    for grouped in ("כ־1,000 דונם", "em 1.500 casos", "about 1,999 of them"):
        assert [m.kind for m in mentions(grouped)] == ["number"], grouped
    assert [m.kind for m in mentions("He was born in 1990.")] == ["year"]


def test_a_parallel_sentence_about_another_subject_is_no_near_duplicate_conflict():
    """HeQ: a correct source sentence against the one beside it about another channel."""
    claim = 'רשת זכתה באפיק 13 בסכום של 7.77 מיליון ש"ח.'
    source = claim + ' קשת זכתה באפיק 12 בסכום של כ־25 מיליון ש"ח, כאשר מטרתה הייתה לשמור על המותג.'
    assert _conflicts(claim, source) == []
    # the same subject with another figure is the conflict the check is for
    same_subject = claim + ' בהמשך נמסר כי רשת זכתה באפיק 13 בסכום של 9.5 מיליון ש"ח.'
    assert [c.kind for c in _conflicts(claim, same_subject)] == ["near_duplicate"]


def _checked(claim: str, source: str):
    found = Index(source, "d").search(claim, 5)
    return check_claim(claim, found, {"d": source}), found


def test_a_reworded_claim_with_a_changed_figure_is_still_caught_by_its_candidates():
    """A contradicted control of the bundled sample: the candidate rewords the claim's subject and verb."""
    source = 'לדברי דוברת העירייה, הקו יפעל כל 10 דקות בשעות השיא, והשקעה בפרויקט נאמדת ב־85 מיליון ש"ח. ראש העירייה אמר כי הקו יקצר את הנסיעה בכ־20 דקות.'
    checks, found = _checked("עלות הפרויקט מוערכת ב־20 מיליון ש״ח.", source)
    assert [(m.claim, m.candidate) for m in checks.numbers_mismatched] == [("20", "85")]
    # 20 is in the span too, as minutes in the next sentence: a number elsewhere never fills the claim's slot
    assert checks.numbers_missing == ["20"]


def test_a_hebrew_claim_whose_year_is_another_events_is_caught():
    """The shared Hebrew answers: 1881 is in the source, as the year he immigrated, not the year he published."""
    source = ('אליעזר בן־יהודה (1858–1922) היה מחלוצי תחיית הלשון העברית. ב־1879 פרסם בכתב העת "השחר" מאמר בשם "שאלה נכבדה". '
              "ב־1881 עלה בן־יהודה לארץ עם אשתו דבורה והשתקע בירושלים.")
    checks, _ = _checked('בן־יהודה פרסם את "שאלה נכבדה" ב־1881, זמן קצר אחרי שעלה לארץ.', source)
    assert [(m.claim, m.candidate) for m in checks.numbers_mismatched] == [("1881", "1879")]


def test_the_same_on_the_shared_hebrew_answers_through_the_runs_candidates():
    from judge.datasets import load
    from judge.pipeline import candidates
    from judge.config import SearchSection

    record = next(r for r in load(shared("he_qa_sample.json")) if "שאלה נכבדה" in r.sources[0].text)
    claim = 'בן־יהודה פרסם את "שאלה נכבדה" ב־1881, זמן קצר אחרי שעלה לארץ.'  # gold: contradicted
    found = candidates([Index(s.text, s.doc_id) for s in record.sources], claim, SearchSection())
    checks = check_claim(claim, found, {s.doc_id: s.text for s in record.sources})
    assert [(m.claim, m.candidate) for m in checks.numbers_mismatched] == [("1881", "1879")]
    assert fault_kind(read_evidence(claim, found, checks), DeterministicThresholds().profile("he")) == "contradicted"


# -- corrections ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "sentence",
    [
        "The Egyptians mistakenly believed the British had left the airfield.",
        "The dam was corrected in 1990 after the flood.",
        "ובטעות חשבו המצרים שהבריטים פינו את הבסיס.",
        "המכתש נוצר בתהליך ארוך של סחיפה, ולא בפגיעת מטאוריט כפי שנהוג לחשוב בטעות.",
        "בהבהרה שפרסמה החברה נאמר כי מדובר ב־32 גרסאות.",
        "A carga horária será corrigida pelo professor no fim do semestre.",
        "يؤمن المسلمون أن القرآن معجزة، وهذا توضيح للأمر.",
        # a page's time stamp wears an update label and corrects nothing: a WiCE page's "Updated: July 5, 2018"
        # contradicted a correct claim about a July 2018 interview
        "Updated: July 5, 2018 8:08 AM EDT",
        "עדכון: 5 ביולי 2018, 08:08",
        "Atualização: 5 de julho de 2018, 08:08",
        "Update - 12:30 GMT",
        "Updated: July 5, 2018, at 8:08 a.m. ET",
        "Updated: 5th July 2018",
    ],
)
def test_a_narrative_word_of_error_is_no_correction_cue(sentence):
    assert correction_cue(sentence) is None


def test_a_correction_that_names_the_claims_entity_but_corrects_something_else_is_no_conflict():
    """WiCE: an editorial correction about the Mandeans under an article about Mosul's Christians."""
    claim = "According to Duraid Hikmat, an expert on minority relationships and resident of Mosul, the Christians were fearful to attend."
    source = (claim + " Many families left the city. Correction: July 23, 2014. An article on Saturday about the flight by Christians and others "
              "from the Iraqi city of Mosul referred incorrectly to the Mandeans.")
    assert _conflicts(claim, source) == []


# -- measured: correct answers are never contradicted ----------------------------------------------------------------------
def test_no_correct_halueval_answer_is_contradicted_and_no_hallucinated_one_is_free():
    """The 500 right answers of the HaluEval QA sample: no check flags one, the deterministic judge calls none
    contradicted (6 were, before), and triage settles no hallucinated answer (4 of 118 free verdicts were)."""
    from judge.judges import ClaimToJudge, JudgeContext, offer, triage
    from judge.models import Source
    from judge.text import split_sentences

    rows = [json.loads(line) for line in shared("external/halueval_qa/qa_one-turn_data.json").read_text(encoding="utf-8").splitlines()]
    params = DeterministicThresholds().profile("en")
    alarms, contradicted, free_wrong = [], [], []
    for r in rows:
        index = Index(r["knowledge"], "k")
        for answer, right in ((r["right_answer"], True), (r["hallucinated_answer"], False)):
            for s in split_sentences(answer):
                found = index.search(s.text, 5)
                checks = check_claim(s.text, found, {"k": r["knowledge"]})
                if right:
                    if checks.conflicts or checks.numbers_mismatched:
                        alarms.append(s.text)
                    if fault_kind(read_evidence(s.text, found, checks), params) == "contradicted":
                        contradicted.append(s.text)
                else:
                    claim = ClaimToJudge("1", s.text, offer(found, "1"), checks)
                    if triage(claim, JudgeContext(r["question"], "en", [Source(doc_id="k", text=r["knowledge"])])):
                        free_wrong.append(s.text)
    assert len(rows) == 500
    assert alarms == [] and contradicted == [] and free_wrong == []


def test_an_update_or_correction_that_says_something_is_still_a_cue():
    for sentence in ("Updated: the figure is 300, not 200.", "Correction: 1998", "Updated: 12", "עדכון: המספר הנכון הוא 300.", "Correction: An earlier version said 1998."):
        assert correction_cue(sentence), sentence
