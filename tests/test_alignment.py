"""Issue 35: one alignment per claim and span. Each defect the issue measured, reproduced as a one-record run
with no model (``judge.evaluate``, the deterministic judge, sentence claims), beside the neighbour the same
rule must still catch; then the alignment value itself."""

from __future__ import annotations

import pytest

from judge.models import Candidate, Span
from judge.stages.alignment import FEATURES, align, judged
from judge.stages.evidence import check_claim

# (record id, source, answer, what the verdict must be)
CASES = [
    # 4: a name elsewhere in the source never rescues the slot another name fills
    ("cluzet", "The ceremony was chaired by Isabelle Mergault. The film starred François Cluzet.",
     "The ceremony was chaired by François Cluzet.", "not supported"),
    ("mergault", "The ceremony was chaired by Isabelle Mergault. The film starred François Cluzet.",
     "The ceremony was chaired by Isabelle Mergault.", "supported"),
    # 5: a denial in other words is the same denial; a denial elsewhere is no denial of the claim
    ("refused", "She chose not to show up at her hearing on Monday.", "She refused to show up at her hearing.", "not contradicted"),
    ("yet", "The agreement between the two clubs has not yet been signed by the league.",
     "The agreement between the two clubs has yet to be signed by the league.", "not contradicted"),
    ("elsewhere", "The mayor opened the new bridge on Friday. The council did not approve the budget for the tunnel.",
     "The mayor opened the new bridge on Friday.", "supported"),
    ("leeds", "Leeds have not confirmed their backing for the proposal to expand the league.",
     "Leeds have thrown their backing behind the proposal to expand the league.", "not supported"),
    # a dropped denial is never supported: the fitted judge contradicts it or, unsure, leaves it to a model judge
    ("showed", "She did not show up at her hearing on Monday.", "She showed up at her hearing on Monday.", "not supported"),
    # 6: numbers pair within their slot only, and digits meet number words
    ("billboard", "The album debuted at number one on the Billboard 200 chart, while its single reached the Hot 100.",
     "The album debuted at number 1 on the Billboard 200.", "supported"),
    ("to-go", "Jones was substituted 62 minutes into the match after a knock. The team held on to win the cup.",
     "Jones was substituted with 28 minutes to go.", "not contradicted"),
    ("to-go-wrong", "Jones was substituted with 28 minutes to go after a knock.", "Jones was substituted with 30 minutes to go.", "contradicted"),
    ("five", "The team won five golds at the championships in Doha.", "The team won 5 golds at the championships in Doha.", "supported"),
    ("three", "The team won five golds at the championships in Doha.", "The team won 3 golds at the championships in Doha.", "contradicted"),
]


@pytest.fixture(scope="module")
def labels(tmp_path_factory):
    import judge

    records = [{"id": rid, "question": "What happened?", "source": source} for rid, source, _, _ in CASES]
    run = judge.evaluate({"name": "alignment", "decompose": {"method": "sentences"}, "adjudicate": {"judges": ["deterministic"]}},
                         records=records, answers={rid: answer for rid, _, answer, _ in CASES},
                         runs_dir=tmp_path_factory.mktemp("runs"), reports=False)
    out = {}
    for c in run.claims():
        assert c.record_id not in out, "each answer is one claim"
        out[c.record_id] = c.label
    return out


@pytest.mark.parametrize(("rid", "want"), [(c[0], c[3]) for c in CASES])
def test_each_measured_defect_as_a_one_record_run(labels, rid, want):
    got = labels[rid]
    if want == "not supported":
        assert got != "supported"
    elif want == "not contradicted":
        assert got != "contradicted"
    else:
        assert got == want


# -- the value ------------------------------------------------------------------------------------------------------
def test_features_have_the_documented_names_and_are_numbers():
    f = align("The team won 5 golds in Doha.", "The team won five golds at the championships in Doha.").features()
    assert tuple(f) == FEATURES and all(isinstance(v, float) for v in f.values())
    assert f["aligned_share"] == 1.0 and f["numbers_unaligned"] == 0.0 and f["verbatim"] == 0.0


@pytest.mark.parametrize(("claim", "span"), [
    ("The bridge cost 1,100 dollars.", "The bridge cost 1100 dollars."),
    ("It came first in the race.", "It came 1st in the race."),
    ("הקבוצה זכתה בחמש מדליות.", "הקבוצה זכתה ב־5 מדליות."),
    ("A equipe ganhou 3 medalhas.", "A equipe ganhou três medalhas."),
    ("He wrote twenty-five songs.", "He wrote 25 songs."),
])
def test_numbers_meet_in_any_form(claim, span):
    a = align(claim, span)
    assert a.unaligned == () and a.slots == (), (a.unaligned, a.slots)


@pytest.mark.parametrize(("claim", "span", "state"), [
    ("She refused to show up at her hearing.", "She chose not to show up at her hearing.", "same"),
    ("The deal has yet to be signed.", "The deal has not yet been signed.", "same"),
    ("He failed to qualify for the final.", "He did not qualify for the final.", "same"),
    ("The old bridge was built by the Romans.", "The old bridge was not built by the Romans; it was built in 1200.", "dropped"),
    ("Leeds have thrown their backing behind the plan.", "Leeds have not confirmed their backing for the plan.", "withheld"),
    ("The hotel did not open in Shimla.", "The hotel opened in Shimla in 1934.", "added"),
    ("He did not fail to qualify for the final.", "He qualified for the final.", "none"),  # a denied denial affirms
    ("She was unable to attend the hearing.", "She did not attend the hearing.", "same"),
    ("She attended the hearing.", "She was unable to attend the hearing.", "dropped"),
    ("He wore the 10 shirt at the club.", "He wore the No. 10 shirt at the club.", "none"),  # "No." abbreviates a number
    ("The bridge opened in 1990.", "It is not a coincidence that the bridge opened in 1990.", "none"),
])
def test_negation_within_the_aligned_clause(claim, span, state):
    assert align(claim, span).negation == state


def test_a_name_in_the_claims_slot_differs_whatever_else_the_span_names():
    a = align("The ceremony was chaired by François Cluzet.", "The ceremony was chaired by Isabelle Mergault. The film starred François Cluzet.")
    assert [(s.kind, s.claim, s.span) for s in a.slots] == [("name", "françois cluzet", "isabelle mergault")]
    kept = align("The film starred François Cluzet.", "The ceremony was chaired by Isabelle Mergault. The film starred François Cluzet.")
    assert kept.slots == () and kept.unaligned == ()


def test_a_number_in_another_sentence_of_the_span_never_fills_the_slot():
    span = "The line was built in 1890. The station opened in 1895, two years later."
    a = align("The station opened in 1890.", span)
    assert [(s.kind, s.claim, s.span) for s in a.slots] == [("date", "1890", "1895")]


def _candidate(source: str, sentence: str) -> Candidate:
    at = source.index(sentence)
    part = Span(doc_id="d", start_char=at, end_char=at + len(sentence), excerpt=sentence)
    return Candidate(doc_id="d", start_char=at, end_char=at + len(sentence), excerpt=sentence, score=0.5, method="ngram", parts=[part])


def test_the_checks_read_one_span_and_no_other_candidate_rescues_a_number():
    source = "The station opened in 1895. The museum hosted 40,000 visitors in 1890."
    offered = [_candidate(source, "The station opened in 1895."), _candidate(source, "The museum hosted 40,000 visitors in 1890.")]
    at, a = judged("The station opened in 1890.", [c.text for c in offered])
    assert at == 0 and a is not None
    checks = check_claim("The station opened in 1890.", offered)
    assert checks.numbers_missing == ["1890"] and [(m.claim, m.candidate) for m in checks.numbers_mismatched] == [("1890", "1895")]


def test_evidence_gives_the_fitted_judge_one_stable_dict():
    from judge.search import Index
    from judge.stages.evidence import FEATURES as NAMED, read_evidence

    source = "The team won five golds at the championships in Doha. The coach was pleased."
    claim = "The team won 5 golds at the championships in Doha."
    found = Index(source, "d").search(claim, 5)
    e = read_evidence(claim, found, check_claim(claim, found, {"d": source}), "", (source,))
    values = e.features()
    assert tuple(values) == NAMED and NAMED[: len(FEATURES)] == tuple(f"align_{n}" for n in FEATURES)
    assert all(isinstance(v, float) for v in values.values())
    assert values["align_aligned_share"] == 1.0 and values["absent_key"] == 0.0 and e.features() is values  # built once
