"""The pure parts of judging and scoring, directly: triage, the deterministic thresholds, the panel's
tie-break, gold claim matching, the verdict rules and each score section; and a judge that is no model,
added by registering it, running through the real pipeline."""

import asyncio
from collections import Counter

import pytest

from judge.judges import ClaimToJudge, DeterministicThresholds, JudgeContext, Panel, deterministic_verdict, offer, panel_verdict, triage
from judge.judges.registry import needs_model, register_judge
from judge.models import Candidate, Source, Span
from judge.results import AnswerResult, ClaimChecks, ClaimResult, Decomposition, JudgeVerdict, NumberMismatch, RecordResult
from judge.search import Index
from judge.scoring.base import AnswerItem
from judge.metrics.gold import GoldClaim, Matched, matched_gold
from judge.scoring.sections import ByGenre, ClaimMatching, Evidence, GoldLabels, Human, Overall, PerAnswer
from judge.stages.evidence import check_claim
from judge.judges.deterministic import fault_kind
from judge.stages.evidence import read_evidence
from judge.verdicts import CLAIM_LABELS, CREDIT, SEVERITY, rates, scale_scores

SOURCE = "The bridge opened in 1937. It is 2,737 metres long. Fog often covers it in summer."


def candidate(start: int, end: int, score: float, method: str = "fuzzy") -> Candidate:
    excerpt = SOURCE[start:end]
    return Candidate(start_char=start, end_char=end, excerpt=excerpt, score=score, method=method, parts=[Span(start_char=start, end_char=end, excerpt=excerpt)])


def claim(text: str, *cands: Candidate, checks: ClaimChecks | None = None) -> ClaimToJudge:
    offered = offer(list(cands), "1")
    return ClaimToJudge("1", text, offered, checks if checks is not None else check_claim(text, offered))


def verdict(label: str, judge: str = "j", evidence: list[Span] | None = None) -> JudgeVerdict:
    return JudgeVerdict(judge=judge, model=judge, family="f", label=label, evidence=evidence or [])


# -- triage --------------------------------------------------------------------------------------------------
def test_triage_settles_only_verbatim_claims_and_cites_the_match():
    found = Index(SOURCE).search("The bridge opened in 1937.", 3)
    assert triage(claim("The bridge opened in 1937.", *found)) is None  # without the source, no whole sentence to check
    settled = triage(claim("The bridge opened in 1937.", *found), {None: SOURCE})
    assert settled is not None and settled.label == "supported" and settled.how == "triage"
    (span,) = settled.evidence
    assert span.start_char == 0 and SOURCE[span.start_char : span.end_char] == span.excerpt and "1937" in span.excerpt
    assert triage(claim("The bridge opened in 1938.", candidate(0, 26, 0.95))) is None  # a fuzzy match goes to the judges
    assert triage(claim("Nothing like it.")) is None


# -- the deterministic judge ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "cand", "checks", "expected"),
    [
        ("The bridge opened in 1937.", candidate(0, 26, 1.0, "exact"), None, "supported"),  # verbatim
        ("The bridge opened in 1938.", candidate(0, 26, 0.95), None, "contradicted"),  # the year stated otherwise beside "opened"
        ("Whales sing in the deep ocean at night.", candidate(53, 83, 0.3), None, "unsupported"),  # little of it is there
        ("The bridge opened in 1937, mainly because of heavy traffic.", candidate(0, 26, 0.7), None, "partially_supported"),
        ("x", candidate(0, 26, 0.95), ClaimChecks(numbers_mismatched=[NumberMismatch(claim="1938", candidate="1937")]), "contradicted"),
    ],
)
def test_deterministic_rule(text, cand, checks, expected):
    """The fault rule (what names the learned judge's contradictions and failures) on its own."""
    c = claim(text, cand, checks=checks)
    assert fault_kind(read_evidence(c.text, c.candidates, c.checks), DeterministicThresholds().profile("en")) == expected


@pytest.mark.parametrize(
    ("text", "cand", "expected"),
    [
        ("The bridge opened in 1937.", candidate(0, 26, 1.0, "exact"), {"supported"}),
        ("The bridge opened in 1938.", candidate(0, 26, 0.95), {"contradicted", "unsure"}),  # never supported: a year stated otherwise
        ("Whales sing in the deep ocean at night.", candidate(53, 83, 0.3), {"unsupported"}),
    ],
)
def test_the_learned_judge_on_the_same_claims(text, cand, expected):
    v = deterministic_verdict(claim(text, cand), DeterministicThresholds().profile("en"))
    assert v.label in expected, v.rationale
    assert bool(v.evidence) == (v.label not in ("unsupported", "unsure"))


def test_deterministic_profiles_set_the_thresholds_and_no_candidate_is_unsupported():
    little = claim("Whales sing in the deep ocean at night.", candidate(53, 83, 0.3))
    assert deterministic_verdict(little, DeterministicThresholds().profile("en")).label == "unsupported"
    lenient = DeterministicThresholds(profiles={"en": {"unsupported_below": 0.0}})
    assert deterministic_verdict(little, lenient.profile("en")).label != "unsupported"  # the config's number is the one read
    assert lenient.profile("he") == DeterministicThresholds().profile("he")  # other languages keep the shipped profile
    assert DeterministicThresholds().profile("he").unsupported_below != DeterministicThresholds().profile("en").unsupported_below
    assert deterministic_verdict(claim("x"), DeterministicThresholds().profile("en")).label == "unsupported"
    with pytest.raises(ValueError, match="profiles.en"):
        DeterministicThresholds(profiles={"en": {"unsupported_below": 2}})
    with pytest.raises(ValueError, match="profiles.en.supported_min_coverage: not a setting"):  # the old rule's keys are refused
        DeterministicThresholds(profiles={"en": {"supported_min_coverage": 0.5}})


# -- the panel ---------------------------------------------------------------------------------------------------------
def test_panel_majority_then_the_more_severe_label_on_a_tie():
    assert panel_verdict([verdict("supported"), verdict("supported"), verdict("unsupported")])[0] == "supported"
    assert panel_verdict([verdict("supported"), verdict("unsupported")])[0] == "unsupported"
    assert panel_verdict([verdict("unsupported"), verdict("contradicted")])[0] == "contradicted"
    assert panel_verdict([verdict("partially_supported"), verdict("supported")])[0] == "partially_supported"
    assert panel_verdict([verdict("supported"), verdict("judge_error"), verdict("judge_error")])[0] == "supported"  # errors do not vote
    assert panel_verdict([verdict("judge_error"), verdict("judge_error")]) == ("judge_error", [])


def test_panel_evidence_is_the_agreeing_judges_spans_once_each():
    a, b = Span(start_char=0, end_char=26, excerpt=SOURCE[0:26]), Span(start_char=27, end_char=51, excerpt=SOURCE[27:51])
    label, evidence = panel_verdict([verdict("supported", "x", [a]), verdict("supported", "y", [a, b]), verdict("unsupported", "z", [b])])
    assert label == "supported" and evidence == [a, b]


def test_severity_orders_every_verdict_label():
    assert sorted(CLAIM_LABELS, key=SEVERITY.get) == ["supported", "partially_supported", "unsure", "judge_error", "unsupported", "contradicted"]


# -- the verdict rules ---------------------------------------------------------------------------------------------------
def test_rates_leave_judge_errors_out_of_both_rates():
    r = rates(Counter(["supported", "partially_supported", "unsupported", "judge_error"]))
    assert r["claims"] == 4 and r["labels"]["judge_error"] == 1
    assert r["faithfulness"] == pytest.approx((1 + 0.5) / 3) and r["hallucination_rate"] == pytest.approx(1 / 3)
    assert rates(Counter(["judge_error"]))["faithfulness"] is None
    assert CREDIT["partially_supported"] == 0.5


def test_the_human_scale_rule():
    assert scale_scores(["supported", "partially_supported"], [True, True]) == (1, 2, 0.75)
    assert scale_scores(["supported", "unsupported", "unsupported"], [True, False, False]) == (0, 0, pytest.approx(1 / 3))


# -- a judge that is no model ------------------------------------------------------------------------------------------
class Contrarian:
    """A user's judge: calls every claim unsupported unless its best candidate is verbatim."""

    def __init__(self, name):
        self.name = name

    async def judge(self, claims, context):
        return {c.cid: JudgeVerdict(judge=self.name, model="contrarian", family="rules", label="unsupported", rationale=context.question)
                for c in claims}


def test_a_registered_judge_sits_in_a_panel_without_a_model():
    register_judge("contrarian", lambda name, setup: Contrarian(name))
    assert not needs_model("contrarian") and needs_model("some-model")
    panel = Panel([Contrarian("contrarian")], triage=True)
    claims = [claim("The bridge opened in 1937.", *Index(SOURCE, "d").search("The bridge opened in 1937.", 3)),
              ClaimToJudge("2", "It is green.", [])]
    got = asyncio.run(panel.verdicts(claims, JudgeContext("How long is it?", "en", [Source(doc_id="d", text=SOURCE)])))
    assert [v.judge for v in got["1"]] == ["triage"]
    assert [(v.judge, v.label, v.rationale) for v in got["2"]] == [("contrarian", "unsupported", "How long is it?")]


def test_a_registered_judge_runs_through_the_pipeline(tmp_path):
    from judge.config import load_run_config
    from judge.runs.runner import execute
    from tests.conftest import ROOT

    register_judge("contrarian", lambda name, setup: Contrarian(name))
    config = load_run_config(ROOT / "configs" / "deterministic.yaml")
    config = config.model_copy(update={"adjudicate": config.adjudicate.model_copy(update={"judges": ["contrarian"], "triage": False}),
                                       "cache_dir": str(tmp_path / "cache")})
    store, summary = execute(config, runs_root=tmp_path / "runs")
    summary = summary.model_dump()  # the typed Summary (judge.runs.summary), as summary.json holds it
    assert summary["judges"] == ["contrarian"] and summary["by_judge"]["contrarian"]["labels"]["unsupported"] == summary["overall"]["claims"] > 0


# -- gold matching and score sections ------------------------------------------------------------------------------------------
def answer_with(*labels_and_spans) -> AnswerResult:
    claims = []
    for i, (text, label, evidence) in enumerate(labels_and_spans):
        claims.append(ClaimResult(claim_id=i, text=text, label=label, evidence=evidence, verdicts=[verdict(label, "judge-a", evidence)]))
    return AnswerResult(model="m", family="f", answer=" ".join(t for t, _, _ in labels_and_spans), decomposition=Decomposition(method="sentences"), claims=claims)


def test_gold_claims_are_matched_by_text_when_offsets_are_missing():
    from judge.models import Answer, GoldClaim as Gold, Record, Source, SupportSpan

    record = Record(id="r1", question="q", sources=[Source(doc_id="d", text=SOURCE)])
    a = answer_with(("The bridge opened in 1937.", "supported", []), ("It is blue.", "unsupported", []))
    gold = Answer(record_id="r1", model="m", answer="other words", gold_claims=[
        Gold(text="The bridge opened in the year 1937.", label="supported", support=[SupportSpan(start_char=0, end_char=26)]),
        Gold(text="Fog covers it.", label="unsupported"),
    ])
    recorded = {("r1", "m", a.answer): gold}
    m = matched_gold(record, a, recorded)
    assert [(c.text, g.text) for c, g in m.pairs] == [("The bridge opened in 1937.", "The bridge opened in the year 1937.")]
    assert (m.unmatched_predicted, m.unmatched_gold) == (1, 1)
    assert m.pairs[0][1].spans == [("d", 0, 26)]  # a span with no doc_id points into the record's only source
    assert matched_gold(record, a, {}) is None  # no gold for this answer


def item(answer: AnswerResult, matched: Matched | None = None, genre: str | None = None, model: str | None = None) -> AnswerItem:
    result = RecordResult(record_id="r1", genre=genre, question="q", language="en", answers=[answer])
    if model:
        answer = answer.model_copy(update={"model": model})
    return AnswerItem(result, answer, None, matched)


def test_gold_label_section_scores_the_panel_and_each_judge_and_counts_for_compare():
    a = answer_with(("c1", "supported", []), ("c2", "unsupported", []), ("c3", "supported", []))
    matched = Matched([(a.claims[0], GoldClaim("c1", "supported", [], [])), (a.claims[1], GoldClaim("c2", "contradicted", [], [])),
                       (a.claims[2], GoldClaim("c3", None, [], []))], 0, 1)
    section = GoldLabels()
    section.add(item(a, matched))
    value = section.result({}).model_dump()
    assert set(value) == {"panel", "judge-a"} and value["panel"]["n"] == 2 and value["panel"]["accuracy"] == 0.5
    assert value["panel"]["confusion"]["contradicted"]["unsupported"] == 1
    counts = Counter()
    GoldLabels.count(item(a, matched), counts)
    assert (counts["gold_correct"], counts["gold_n"]) == (1, 2)
    cm = ClaimMatching()
    cm.add(item(a, matched))
    assert cm.result({}).model_dump() == {"predicted": 0, "gold": 1, "matched": 3}
    assert GoldLabels().result({}) is None  # no gold: the section is absent, not zero


def test_rate_sections_group_answers_and_overall_counts_for_compare():
    a = answer_with(("c1", "supported", []), ("c2", "partially_supported", []), ("c3", "judge_error", []))
    by_genre, per_answer = ByGenre(), PerAnswer()
    for it in (item(a, genre="news"), item(a)):
        by_genre.add(it)
        per_answer.add(it)
    value = by_genre.result({}).model_dump()
    assert list(value) == ["n/a", "news"] and value["news"]["faithfulness"] == 0.75 and value["news"]["claims"] == 3
    assert [r["record_id"] for r in per_answer.result({}).model_dump()] == ["r1", "r1"]
    counts = Counter()
    Overall.count(item(a), counts)
    assert dict(counts) == {"claims": 3, "judged": 2, "credit": 1.5, "hallucinated": 0, "errors": 1}


def test_evidence_section_measures_cited_characters_against_gold():
    from judge.models import Record, Source

    cited = Span(doc_id="d", start_char=0, end_char=26, excerpt=SOURCE[0:26])
    a = answer_with(("c1", "supported", [cited]))
    matched = Matched([(a.claims[0], GoldClaim("c1", "supported", [("d", 0, 10)], []))], 0, 0)
    it = AnswerItem(RecordResult(record_id="r1", question="q", language="en", answers=[a]), a,
                    Record(id="r1", question="q", sources=[Source(doc_id="d", text=SOURCE)]), matched)
    section = Evidence()
    section.add(it)
    e = section.result({}).model_dump()
    assert (e["cited"], e["gold"], e["shared"], e["claims"]) == (26, 10, 10, 1)
    assert e["precision"] == pytest.approx(10 / 26) and e["recall"] == 1.0 and e["sentence_hit_rate"] == 1.0


def test_human_section_says_why_when_no_reference_answer_was_judged():
    section = Human()
    section.add(item(answer_with(("c1", "supported", []))))
    assert section.result({"records": {}}).model_dump() == {"reason": Human.reason}
