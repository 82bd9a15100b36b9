"""The deterministic judge reads the whole source and the question (issue 24.4): what the source never writes
keeps a claim from "supported", and a short answer is judged with its question. Real search, real checks.
``judge`` is the learned judge as a run has it; ``rule`` the fault rule that names its failures (issue 35, one
decision path since issue 48), where a test is about the rule's own reading or a profile's threshold."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import pytest

from judge.judges import ClaimToJudge, DeterministicJudge, DeterministicThresholds, JudgeContext, offer
from judge.models import Source
from judge.search import Index
from judge.stages.evidence import check_claim
from judge.stages.decompose import sentence_claims
from judge.judges.deterministic import fault
from judge.stages.evidence import absent_words, read_evidence
from tests.conftest import shared

# Every threshold as permissive as it goes: what still keeps a claim from "supported" is a fixed rule.
LOOSE = {"unsupported_below": 0.0}
OBEROI = (
    "The Oberoi Group is a hotel company with its head office in Delhi. "
    "Its staff wear uniforms designed in Paris. "
    "The family's first hotel opened in Shimla in 1934."
)


def rule(text: str, source: str, question: str = "", profile: dict | None = None, language: str = "en"):
    """The fault rule's (label, reason): supported where it finds nothing (the shipped profile, or it
    overridden by ``profile``)."""
    found = Index(source, "d").search(text, 5)
    e = read_evidence(text, found, check_claim(text, found, {"d": source}), question, (source,), language)
    label, why = fault(e, DeterministicThresholds(profiles={language: profile} if profile else {}).profile(language)) or ("supported", "")
    return SimpleNamespace(label=label, rationale=why)


def judge(text: str, source: str, question: str = "", profile: dict | None = None, language: str = "en"):
    index = Index(source, "d")
    found = index.search(text, 5)
    claim = ClaimToJudge("1", text, offer(found, "1"), check_claim(text, found, {"d": source}))
    thresholds = DeterministicThresholds(profiles={language: profile} if profile else {})
    context = JudgeContext(question=question, language=language, sources=[Source(doc_id="d", text=source)])
    return asyncio.run(DeterministicJudge(thresholds).judge([claim], context))["1"]


@pytest.mark.parametrize(
    ("claim", "why"),
    [
        ("The family's first hotel was opened by William Conrad.", "William Conrad"),  # an invented name
        ("The family's first hotel opened in Shimla in 1936.", "1936"),  # a number the source never writes
        ("The family's first hotel did not open in Shimla.", None),  # a negation the evidence lacks
    ],
)
def test_what_the_whole_source_never_writes_keeps_a_claim_from_supported(claim, why):
    v = judge(claim, OBEROI)
    assert v.label != "supported", v.rationale
    if why:
        assert why in v.rationale


def test_words_the_span_lacks_are_named_and_a_phrase_the_source_never_writes_is_one_fault():
    v = rule("The family's first hotel opened in Shimla amid fierce riots.", OBEROI, profile=LOOSE)  # two new words
    assert v.label == "partially_supported" and "fierce" in v.rationale and "riots" in v.rationale
    v = rule("The family's first hotel opened in Shimla amid fierce riots of angry striking workers.", OBEROI, profile=LOOSE)
    assert v.label == "partially_supported" and "phrase" in v.rationale


@pytest.mark.parametrize(("claim", "source", "absent"), [
    ("ההתמקדות הייתה בקווים", "התוספת התמקדה בקווי הלילה.", []),  # prefixes and a suffix apart: the same words
    ("the grant financed schools", "The money was financing new schools.", ["grant"]),
    ("הבנק הוריד את הריבית", "הבנק העלה את הריבית.", ["הוריד"]),  # another verb, not another form
])
def test_absent_words_meet_other_forms_of_a_word(claim, source, absent):
    assert absent_words(claim, (source,))[0] == absent


def test_the_loose_profile_does_support_a_claim_whose_words_are_all_in_the_source():
    v = rule("The first hotel of the family opened in Shimla.", OBEROI, profile=LOOSE)
    assert v.label == "supported", v.rationale  # so the tests of the rule are about its fixed parts, not its thresholds


def test_a_fuller_form_of_a_name_in_the_source_is_no_absent_name():
    source = "Roy Kelton Orbison was an American singer, songwriter and musician."
    v = rule("Roy Orbison was an American singer.", source, profile=LOOSE)
    assert v.label == "supported", v.rationale


@pytest.mark.parametrize(
    ("answer", "question", "expected"),
    [
        ("Delhi", "The Oberoi Group has its head office in what city?", "supported"),
        ("Shimla", "In what town did the family's first hotel open?", "supported"),
        # in the source, but beside nothing the question asks: it answers another question
        pytest.param("Paris", "In what town did the family's first hotel open?", "partially_supported", marks=pytest.mark.xfail(
            strict=True, reason="known limit: a passage is two sentences in a row, so the next sentence's words count for Paris")),
        ("Mumbai", "The Oberoi Group has its head office in what city?", "unsupported"),  # nowhere in the source
        ("yes", "Is the head office of the Oberoi Group in Delhi?", "supported"),  # no words of its own: its question's
    ],
)
@pytest.mark.parametrize("as_run", [False, True])
def test_a_short_answer_is_read_with_its_question(answer, question, expected, as_run):
    """Alone beside its question, and as runs judge it: the claim "<question> <answer>" the boundary writes."""
    text = sentence_claims(answer, question).claims[0].text if as_run else answer
    assert (text != answer) == as_run
    v = rule(text, OBEROI, question)  # the shipped profile
    assert v.label == expected, v.rationale
    assert v.rationale.startswith("read with its question") or (expected == "supported" and not v.rationale)
    if expected == "supported" and answer != "yes":  # the judge says how it read it (a "yes" has no span to cite)
        assert judge(text, OBEROI, question).rationale.startswith("read with its question")


def test_a_yes_without_its_question_is_not_read_as_one():
    v = judge("yes", OBEROI)
    assert not v.rationale.startswith("read with its question")


def test_no_correct_short_answer_of_heq_is_contradicted_and_most_are_supported():
    """HeQ's gold answers, the claims a run makes of them, under the shipped Hebrew profile: never contradicted."""
    data = json.loads(shared("external/heq/test_v1.1.json").read_text(encoding="utf-8"))
    paragraphs = [p for d in data["data"] for p in d["paragraphs"]][:25]
    labels = []
    for p in paragraphs:
        index = Index(p["context"], "p")
        for q in p["qas"]:
            if q.get("is_impossible") or not q["answers"]:
                continue
            text = sentence_claims(q["answers"][0]["text"].strip(), q["question"]).claims[0].text  # as a run has it
            found = index.search(text, 5)
            e = read_evidence(text, found, check_claim(text, found, {"p": p["context"]}), q["question"], (p["context"],))
            labels.append((fault(e, DeterministicThresholds().profile("he")) or ("supported",))[0])
    assert len(labels) >= 50
    assert "contradicted" not in labels
    assert labels.count("supported") / len(labels) >= 0.6


# -- a claim that drops the source's negation -------------------------------------------------------------------
RAMON = "מכתש רמון הוא המכתש הגדול בעולם. המכתש נוצר בתהליך ארוך של סחיפה, ולא בפגיעת מטאוריט כפי שנהוג לחשוב בטעות."
BRIDGE = "The old bridge was not built by the Romans; it was built in 1200. He did not return to the town until 1950."
FABRICA = "A fábrica não fechou em 1990, segundo o relatório. A empresa não só produzia tecido, mas também papel."


@pytest.mark.parametrize(
    ("claim", "source", "language", "label"),
    [
        ("מכתש רמון נוצר מפגיעת מטאוריט.", RAMON, "he", "contradicted"),  # gold: contradicted (the bundled sample)
        ("המכתש נוצר בפגיעת מטאוריט.", RAMON, "he", "contradicted"),
        ("The old bridge was built by the Romans.", BRIDGE, "en", "contradicted"),
        ("A fábrica fechou em 1990.", FABRICA, "pt", "contradicted"),
        # the neighbours that keep their verdict: what the negation does not govern, a negation kept, a
        # negation that dates or limits rather than denies
        ("המכתש נוצר בתהליך ארוך של סחיפה.", RAMON, "he", "supported"),
        ("המכתש לא נוצר בפגיעת מטאוריט.", RAMON, "he", "supported"),
        ("The old bridge was built in 1200.", BRIDGE, "en", "supported"),
        ("He returned to the town in 1950.", BRIDGE, "en", "not contradicted"),
        ("A empresa produzia tecido.", FABRICA, "pt", "supported"),
    ],
)
def test_a_claim_that_drops_its_sources_negation_is_contradicted(claim, source, language, label):
    v = rule(claim, source, language=language)
    assert (v.label != "contradicted") if label == "not contradicted" else (v.label == label), (v.label, v.rationale)
    learned = judge(claim, source, language=language).label
    assert learned in ("contradicted", "unsure") if label == "contradicted" else learned != "contradicted"


@pytest.mark.parametrize(
    ("claim", "source"),
    [
        ("The bridge opened in 1990.", "It is not a coincidence that the bridge opened in 1990."),
        ("He loved Paris all his life.", "He never lost his love of Paris, all his life."),
        ("המכתש נוצר בתהליך סחיפה.", "אין ספק שהמכתש נוצר בתהליך סחיפה."),
        ("A fábrica fechou em 1990.", "Não há dúvida de que a fábrica fechou em 1990."),
        ("He returned to the town in 1950.", "He did not return to the town until 1950."),
        ("The port was a fortress.", "The port was not only a harbour but a fortress."),
    ],
)
def test_a_negation_that_affirms_limits_or_dates_is_no_dropped_negation(claim, source):
    from judge.stages.alignment import align

    assert align(claim, source).negation != "dropped"
    assert judge(claim, source).label != "contradicted"
