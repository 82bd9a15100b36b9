"""No verdict of the no-model judge is ``supported`` while its rationale names a fault (issue 45, Done-when),
over every rationale kind: every branch of :func:`judge.judges.deterministic.fault` and of
:func:`no_model_label`, reached by Evidence values drawn across their fields and fitted scores across the
thresholds. And the converse a reader relies on: a claim the rule finds nothing against and the score calls
supported says so in words that name no fault."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from judge.judges.deterministic import DeterministicThresholds, fault, never_supported, no_model_label
from judge.stages.alignment import FEATURES as ALIGNMENT
from judge.stages.evidence import Evidence
from judge.verdicts import CONTRADICTED, PARTIALLY_SUPPORTED, SUPPORTED, UNSUPPORTED, UNSURE

# Words only a fault's reason writes (fault() and never_supported() are the only places they come from).
FAULT_WORDS = ("never writes", "denies", "not confirmed", "not:", "someone else", "stated differently", "corrects",
               "no passage", "a phrase of it", "not in its evidence", "beside", "(<")

words = st.lists(st.sampled_from(["mainly", "green", "1936", "Conrad", "riots"]), max_size=3)
alignment = st.fixed_dictionaries({n: st.sampled_from([0.0, 0.5, 1.0, 2.0]) for n in ALIGNMENT})
evidence = st.builds(
    Evidence,
    verbatim=st.booleans(), coverage=st.sampled_from([0.0, 0.3, 0.6, 0.85, 1.0]), offered_coverage=st.sampled_from([0.0, 0.5, 1.0]),
    max_run=st.integers(0, 5), tail_run=st.integers(0, 3), uncovered=words, numbers_missing=st.integers(0, 1),
    mismatches=st.integers(0, 1), names_missing=st.integers(0, 1), conflicts=st.integers(0, 1), added_connectives=words,
    words=st.integers(1, 12), heading=st.booleans(), absent=st.integers(0, 3), absent_share=st.sampled_from([0.0, 0.2, 1.0]),
    absent_key=words, absent_run=st.integers(0, 5), added_negation=st.booleans(), dropped_negation=st.booleans(),
    withheld_negation=st.booleans(), name_slots=st.integers(0, 1), alignment=alignment, short=st.booleans(),
    question_coverage=st.sampled_from([0.0, 0.3, 0.5, 1.0]), answer_in_source=st.booleans(),
    span_score=st.one_of(st.none(), st.sampled_from([0.2, 0.9])), hebrew=st.booleans(),
)
scores = st.sampled_from([0.0, 0.2, 0.44, 0.45, 0.46, 0.47, 0.475, 0.5, 0.7, 1.0])


@settings(max_examples=1500, deadline=None)
@given(e=evidence, p=scores, language=st.sampled_from(["en", "he"]))
def test_a_supported_verdict_names_no_fault(e, p, language):
    profile = DeterministicThresholds().profile(language)
    label, why = no_model_label(p, e, profile)
    assert label in (SUPPORTED, PARTIALLY_SUPPORTED, UNSUPPORTED, CONTRADICTED, UNSURE)
    assert why.strip()
    if label == SUPPORTED:
        assert never_supported(e) is None  # a veto is never overruled
        found = fault(e, profile)
        assert found is None or found[1] not in why
        assert not any(w in why for w in FAULT_WORDS), why
    else:
        assert label != SUPPORTED


def test_every_fault_kind_is_reached_and_each_reason_is_a_fault_word():
    """The strategy above reaches every reason fault() can give: each named here, read off a minimal Evidence."""
    en = DeterministicThresholds().profile("en")
    base = dict(verbatim=False, coverage=1.0, max_run=0, span_score=0.9)
    cases = {
        "corrects": dict(conflicts=1), "stated differently": dict(mismatches=1), "no passage": dict(short=True),
        "never writes": dict(absent_key=["1936"]), "someone else": dict(name_slots=1), "not confirmed": dict(withheld_negation=True),
        "denies": dict(added_negation=True), "a phrase of it": dict(absent_run=4), "not:": dict(uncovered=["green"], coverage=0.8),
        "(<": dict(coverage=0.1), "not in its evidence": dict(numbers_missing=1),
        "beside": dict(short=True, answer_in_source=True, question_coverage=0.1),
    }
    for word, fields in cases.items():
        found = fault(Evidence(**{**base, **fields}), en)
        assert found is not None and word in found[1], (word, found)
        assert word in FAULT_WORDS
