"""Free verdicts must be right: number alignment by context, conflicts in the source, the calibrated rule."""

from __future__ import annotations

import pytest

from judge.results import ClaimChecks
from judge.search import search
from judge.stages.evidence import check_claim
from judge.stages.numbers import mentions, numbers_in
from judge.stages.alignment_numbers import aligned_mismatches
from judge.stages.source import correction_cue
from judge.stages.evidence import find_conflicts
from judge.judges.deterministic import DeterministicThresholds, fault_kind, load_weights, no_model_label
from judge.stages.evidence import Evidence, read_evidence
from tests.conftest import shared

# -- numbers aligned with their context --------------------------------------------------------------------


def test_a_date_is_compared_with_the_date_not_with_a_number_that_happens_to_be_near():
    evidence = ["Apollo 11 landed on July 20, 1969, and Armstrong walked on the Moon."]
    got = {(m.claim, m.candidate) for m in aligned_mismatches("Armstrong walked on the Moon on July 21, 1971.", evidence)}
    assert got == {("21", "20"), ("1971", "1969")}  # never ("21", "11"): "Apollo 11" is not a day of July


def test_a_number_with_no_counterpart_in_the_same_context_is_missing_not_mismatched():
    assert aligned_mismatches("Armstrong walked on the Moon on July 21, 1971.", ["Apollo 11 carried three astronauts."]) == []
    checks = check_claim("The speed is limited to 25 km/h.", search("The speed is limited to 25 km/h.", "The city bought 600 bikes."))
    assert checks.numbers_missing == ["25"] and checks.numbers_mismatched == []


def test_hebrew_numbers_align_through_prefixes_and_units():
    got = aligned_mismatches("אורכה היה כ־78 קילומטרים.", ['ואורכה היה כ־87 ק"מ והיא נפתחה ב־1892.'])
    assert [(m.claim, m.candidate) for m in got] == [("78", "87")]


def test_a_value_stated_differently_beside_the_same_words_is_a_mismatch_even_if_it_appears_elsewhere():
    # 60% appears in the evidence, but about something else; beside "nurses consider leaving" it is 40%
    evidence = ["About 40% of the nurses consider leaving the public system.", "Wages rose 60% in a decade."]
    got = aligned_mismatches("About 60% of the nurses consider leaving the public system.", evidence)
    assert [(m.claim, m.candidate) for m in got] == [("60%", "40%")]


def test_a_tie_in_context_is_the_claims_benefit_of_the_doubt():
    evidence = ["Sales grew 40% in 2019 and sales grew 60% in 2020."]
    assert aligned_mismatches("Sales grew 60%.", evidence) == []


def test_percent_written_out_is_a_percentage():
    assert numbers_in("עלייה של 12 אחוזים, and 5 percent, and 7%") == ["12%", "5%", "7%"]
    assert [m.kind for m in mentions("On 21 July 1971")] == ["day", "year"]


# -- conflicts: corrections and near-duplicates ------------------------------------------------------------

NEWS = (
    "The ministry added 1,450 weekly trips to peripheral lines last year. The buses are new. "
    "Correction: the figure was mistyped and should read 1,540 trips."
)
CLAIM = "The ministry added 1,450 weekly trips to peripheral lines last year."


@pytest.mark.parametrize(
    "sentence",
    [
        "Correction: the figure was mistyped.",
        "UPDATE: the talks resumed on Monday.",
        "An earlier version of this article misstated the date.",
        "תיקון: נפלה טעות בנתון.",
        "בטעות נכתב כי מדובר ב־12 אחוזים.",
        "Correção: onde se lê 10, leia-se 12.",
        "Errata: o número correto é 12.",
        "تصحيح: الرقم الصحيح هو 12.",
    ],
)
def test_correction_cues_in_four_languages(sentence):
    assert correction_cue(sentence) is not None


@pytest.mark.parametrize("sentence", ["He updated his phone.", "The correct answer was given.", "העדכון השבועי פורסם."])
def test_ordinary_sentences_carry_no_cue(sentence):
    assert correction_cue(sentence) is None


def test_a_verbatim_claim_the_source_corrects_has_a_conflict_with_its_span():
    at = NEWS.index(CLAIM)
    found = find_conflicts(CLAIM, {"d": NEWS}, [("d", at, at + len(CLAIM))])
    assert [c.kind for c in found] == ["correction"]
    c = found[0]
    assert NEWS[c.start_char : c.end_char] == c.excerpt and c.excerpt.startswith("Correction:")
    assert "1540" in c.detail


def test_a_hebrew_correction_with_only_the_new_figure_is_a_conflict():
    source = "משרד התחבורה הוסיף 1,450 נסיעות שבועיות בקווים לפריפריה. האוטובוסים חדשים. תיקון: נפלה טעות בנתון, והמספר הנכון הוא 1,540."
    claim = "משרד התחבורה הוסיף 1,450 נסיעות שבועיות בקווים לפריפריה."
    assert [c.kind for c in find_conflicts(claim, {None: source}, [(None, 0, len(claim))])] == ["correction"]


def test_a_near_duplicate_with_another_number_is_a_conflict():
    source = CLAIM + " The buses are new. Later the report said the ministry added 1,540 weekly trips to peripheral lines last year."
    found = find_conflicts(CLAIM, {"d": source}, [("d", 0, len(CLAIM))])
    assert [c.kind for c in found] == ["near_duplicate"] and "1540" in found[0].detail


def test_an_unrelated_correction_and_a_plain_source_are_no_conflict():
    source = CLAIM + " The buses are new. The mayor spoke. Correction: the mayor's name is spelled Cohen, not Kohen."
    assert find_conflicts(CLAIM, {"d": source}, [("d", 0, len(CLAIM))]) == []
    assert find_conflicts(CLAIM, {"d": CLAIM + " The buses are new."}, [("d", 0, len(CLAIM))]) == []


def test_check_claim_with_sources_reports_conflicts_and_fails():
    candidates = search(CLAIM, NEWS)
    assert candidates[0].method == "exact"
    checks = check_claim(CLAIM, candidates, {"d": NEWS})
    assert checks.conflicts and not checks.passed
    assert check_claim(CLAIM, candidates).conflicts == []  # without sources nothing is looked for


def test_claim_checks_without_conflicts_serialise_as_before():
    assert "conflicts" not in ClaimChecks(numbers=["1"]).model_dump_json()


# -- triage and the calibrated rule ------------------------------------------------------------------------


def _features(claim: str, source: str) -> Evidence:
    candidates = search(claim, source)
    return read_evidence(claim, candidates, check_claim(claim, candidates, {"d": source}))


EN = DeterministicThresholds().profile("en")


def test_triage_refuses_a_verbatim_claim_the_source_corrects():
    assert _features(CLAIM, CLAIM + " The buses are new.").settles_free()
    corrected = _features(CLAIM, NEWS)
    assert corrected.verbatim and not corrected.settles_free()
    assert fault_kind(corrected, EN) == "contradicted"


def test_triage_refuses_headings_and_fragments():
    source = "Anne Rice:\n- Born in New Orleans in 1941\n- Wrote Interview with the Vampire"
    assert not _features("Anne Rice:", source).settles_free()
    assert not _features("- Born", source).settles_free()


def test_coverage_and_runs_of_missing_words():
    f = _features("The buses are new and mostly painted bright green.", "The buses are new.")
    assert f.coverage < 0.5 and f.tail_run == f.max_run >= 3 and f.added_connectives == ["mostly"]
    assert fault_kind(f, EN.model_copy(update={"unsupported_below": 0.3})) == "partially_supported"


def test_the_rule_follows_its_thresholds():
    base = Evidence(verbatim=False, coverage=1.0, max_run=0, tail_run=0, span_score=0.9)
    assert fault_kind(base, EN) == "supported"
    assert fault_kind(base.model_copy(update={"coverage": 0.9, "uncovered": ["green"]}), EN) == "partially_supported"
    assert fault_kind(base.model_copy(update={"coverage": 0.3}), EN) == "unsupported"
    assert fault_kind(base.model_copy(update={"coverage": 0.3}), EN.model_copy(update={"unsupported_below": 0.2})) == "supported"
    assert fault_kind(base.model_copy(update={"mismatches": 1}), EN) == "contradicted"
    # a number the evidence lacks keeps a claim from "supported", and that is all: the evidence does not state
    # the number's slot otherwise (that is a mismatch), so it contradicts nothing, however much of it there is
    missing = base.model_copy(update={"numbers_missing": 1})
    for p in (EN, EN.model_copy(update={"unsupported_below": 0.0})):
        assert fault_kind(missing, p) == "partially_supported"


def test_the_shipped_profiles_load_with_the_weights():
    shipped = load_weights().thresholds
    assert DeterministicThresholds().profile("pt") == shipped.default and DeterministicThresholds().profile("he") == shipped.he
    assert load_weights().heldout["balanced_accuracy"]  # figures on held-out data, written by the bench


def test_the_fitting_code_labels_claims_with_the_judges_own_decision_path():
    """bench/fit_no_model_judge.py searches thresholds over each claim's label in the three regimes of its
    fitted score, read from :func:`no_model_label` itself: at every score, the fit's label is the judge's."""
    import importlib.util
    import sys
    from pathlib import Path

    pytest.importorskip("numpy")
    bench = Path(__file__).resolve().parents[1] / "bench"
    sys.path.insert(0, str(bench))
    try:
        spec = importlib.util.spec_from_file_location("fit_no_model_judge", bench / "fit_no_model_judge.py")
        fit = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fit)
    finally:
        sys.path.remove(str(bench))
    source = "The line opened in 1990. It was not built by the city. Correction: it opened in 1991. The trains are new and fast."
    claims = ["The line opened in 1990.", "The line opened in 1995.", "The city built the line.", "The trains are new.",
              "Whales sing at night.", "The trains are new, fast and mostly painted green."]
    profile = DeterministicThresholds().profile("en")
    for text in claims:
        found = search(text, source)
        e = read_evidence(text, found, check_claim(text, found, {"d": source}), None, (source,), "en")
        above, band, below = fit.regimes(e, "en")
        for p in (0.0, 0.1, profile.unsure_from - 0.01, profile.unsure_from, profile.supported_from - 0.001, profile.supported_from, 0.9, 1.0):
            want = no_model_label(p, e, profile)[0]
            got = above if p >= profile.supported_from else band if p >= profile.unsure_from else below
            assert got == fit._index(want), (text, p, want)


def test_verbatim_hebrew_answer_claims_are_triaged_and_all_are_right():
    """On the shared Hebrew answers, every claim triage settles is gold-supported."""
    from judge.datasets import load
    from judge.search import Index

    records = {r.id: r for r in load(shared("he_qa_sample.json"))}
    settled = []
    for a in load(shared("he_model_answers_sample.jsonl")):
        r = records[a.record_id]
        index = Index(r.sources[0].text, r.sources[0].doc_id)
        for g in a.gold_claims:
            candidates = index.search(g.text, 5)
            f = read_evidence(g.text, candidates, check_claim(g.text, candidates, {r.sources[0].doc_id: r.sources[0].text}))
            if f.settles_free():
                settled.append(g.label)
    assert len(settled) >= 5 and set(settled) == {"supported"}


# -- the figures scores report: free verdicts and the evidence ceiling ---------------------------------------


def test_offered_covers_needs_every_gold_span_half_covered():
    from judge.metrics.free import offered_covers

    gold = [("d", 0, 10), ("d", 20, 30)]
    assert offered_covers(gold, [("d", 0, 10), ("d", 24, 40)])  # 6 of 10 characters of the second
    assert not offered_covers(gold, [("d", 0, 10), ("d", 26, 40)])  # 4 of 10
    assert not offered_covers(gold, [("d", 0, 10), ("e", 20, 30)])  # another document
    assert offered_covers([("d", 0, 10)], [("d", 0, 4), ("d", 4, 6)])  # the union of several candidates counts
    assert not offered_covers([], [("d", 0, 10)])


def test_free_verdict_coverage_and_precision_per_label():
    from judge.metrics.free import FreeVerdicts
    from judge.results import JudgeVerdict

    def v(label, how):
        return JudgeVerdict(judge=how, model="m", family="f", label=label, how=how)

    free = FreeVerdicts()
    free.add("supported", "supported", [v("supported", "triage")])
    free.add("contradicted", "supported", [v("supported", "triage")])  # a wrong free verdict
    free.add("unsupported", "unsupported", [v("unsupported", "deterministic")])
    free.add("unsupported", "supported", [v("supported", "model"), v("unsupported", "deterministic")])
    out = free.result()
    assert out["claims"] == 4
    assert out["triage"]["settled"] == 2 and out["triage"]["coverage"] == 0.5 and out["triage"]["precision"] == 0.5
    assert out["deterministic"]["per_label"]["unsupported"] == {"given": 2, "precision": 1.0}
    assert out["no_model_call"]["settled"] == 3  # the fourth claim asked a model
    assert FreeVerdicts().result() is None


def test_evidence_ceiling_beside_the_judges_accuracy():
    from judge.metrics.free import EvidenceCeiling

    ceiling = EvidenceCeiling()
    ceiling.add([[("d", 0, 10)]], [("d", 0, 10)], "supported")
    ceiling.add([[("d", 0, 10)], [("d", 50, 60)]], [("d", 50, 60)], "partially_supported")  # an alternative set offered
    ceiling.add([[("d", 0, 10)]], [("d", 30, 40)], "supported")  # not offered, judged right anyway
    ceiling.add([[]], [("d", 0, 10)], "supported")  # no gold spans: not counted
    out = ceiling.result()
    assert out["claims"] == 3 and out["ceiling"] == 2 / 3
    assert out["judges_accuracy"] == 2 / 3 and out["judges_accuracy_when_offered"] == 0.5


# -- through the real pipeline: `judge run` with no model ------------------------------------------------------


def test_a_run_sends_a_corrected_verbatim_claim_past_triage_and_scores_free_verdicts(tmp_path):
    import json
    from pathlib import Path

    import yaml

    from judge.results import RecordResult
    from tests.conftest import cli_inproc

    plain = "The new line runs every 10 minutes at peak hours."
    source = f"{CLAIM} {plain} The buses are new and quiet. Correction: the figure was mistyped and should read 1,540 trips."
    record = {
        "id": "r1", "source_task_id": "t", "genre": "journalistic", "difficulty": 0, "document_id": "d", "question": "What changed?",
        "source_text": source, "reference_answer": CLAIM, "human_ratings": [],
        "claims": [{"claim_id": 0, "text": CLAIM, "attribution": [
            {"sentence_id": 0, "source_excerpt": CLAIM, "start_char": 0, "end_char": len(CLAIM), "verified": True, "verification_method": "auto"}]}],
    }
    at = source.index(plain)
    gold = [
        {"text": CLAIM, "label": "contradicted", "support": [{"start_char": source.index("Correction"), "end_char": len(source)}], "kind": "corrected"},
        {"text": plain, "label": "supported", "support": [{"start_char": at, "end_char": at + len(plain)}], "kind": "verbatim"},
    ]
    (tmp_path / "data.json").write_text(json.dumps([record]), encoding="utf-8")
    answer = {"record_id": "r1", "model": "m", "answer": f"{CLAIM} {plain}", "gold_claims": gold}
    (tmp_path / "answers.jsonl").write_text(json.dumps(answer) + "\n", encoding="utf-8")
    config = {"name": "free", "dataset": {"path": "data.json"}, "answers": {"path": "answers.jsonl"}, "decompose": {"method": "sentences"},
              "adjudicate": {"judges": ["deterministic"]}, "cache_dir": str(tmp_path / "cache")}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    result = cli_inproc("run", str(tmp_path / "config.yaml"), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress")
    assert result.returncode == 0, result.stderr
    run_dir = Path(json.loads(result.stdout)["run_dir"])
    (line,) = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    claims = {c.text: c for c in RecordResult.model_validate_json(line).answers[0].claims}
    corrected, kept = claims[CLAIM], claims[plain]
    assert [v.how for v in corrected.verdicts] == ["deterministic"] and corrected.label == "contradicted"
    (conflict,) = corrected.checks.conflicts
    assert source[conflict.start_char : conflict.end_char] == conflict.excerpt and conflict.kind == "correction"
    assert [v.how for v in kept.verdicts] == ["triage"] and kept.label == "supported"
    scores = json.loads((run_dir / "scores.json").read_text(encoding="utf-8"))
    free = scores["free_verdicts"]
    assert free["claims"] == 2 and free["triage"]["settled"] == 1 and free["triage"]["precision"] == 1.0
    assert free["no_model_call"]["coverage"] == 1.0 and free["deterministic"]["per_label"]["contradicted"]["precision"] == 1.0
    ceiling = scores["evidence_ceiling"]
    assert ceiling["claims"] == 1 and ceiling["ceiling"] == 1.0 and ceiling["judges_accuracy"] == 1.0
    assert all("Free verdicts" in (run_dir / name).read_text(encoding="utf-8") for name in ("report.md", "report.html"))
    assert all("Evidence ceiling" in (run_dir / name).read_text(encoding="utf-8") for name in ("report.md", "report.html"))


def test_a_correction_about_another_figure_leaves_the_claim_alone():
    source = CLAIM + " The line runs every 10 minutes. Correction: the figure was mistyped and should read 1,540 trips."
    assert find_conflicts("The line runs every 10 minutes.", {"d": source}, [("d", 69, 100)]) == []
    vague = CLAIM + " Correction: an earlier version of this article gave a wrong figure."
    assert [c.kind for c in find_conflicts(CLAIM, {"d": vague}, [("d", 0, len(CLAIM))])] == ["correction"]


def test_a_config_overrides_a_profile_and_a_bad_override_is_a_clear_error(tmp_path):
    import yaml

    from judge.config import ConfigError, load_run_config
    from tests.conftest import BUNDLED_SAMPLE

    base = {"dataset": {"path": str(BUNDLED_SAMPLE)}, "generate": {"models": ["m"]}, "models": {"m": {"model": "openai/m", "family": "openai"}}}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({**base, "adjudicate": {"deterministic": {"profiles": {"he": {"unsupported_below": 0.1}}}}}))
    config = load_run_config(path)
    assert config.adjudicate.deterministic.profile("he").unsupported_below == 0.1
    assert config.adjudicate.deterministic.profile("he").supported_from == load_weights().thresholds.he.supported_from
    path.write_text(yaml.safe_dump({**base, "adjudicate": {"deterministic": {"profiles": {"he": {"unsupported_below": 3}}}}}))
    with pytest.raises(ConfigError, match=r"profiles\.he"):
        load_run_config(path)
