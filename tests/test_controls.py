"""Control claims: made from verified claims, each label holding by construction; the rules per language;
and the gate: exact intervals, a lower bound per label, failed / unverified / passed, against noisy and
lopsided judges (the false-pass rates the defaults promise)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from judge.controls import ControlData, Verified, control_count, controls_for_answer, floor_plan, verified
from judge.controls.health import ControlObservation, GateConfig, exact_interval, judge_health, lower_bound, min_per_label
from judge.controls.perturb import flip_negation
from judge.controls.reword import move_lead_in, reword, swap_synonyms
from judge.stages.numbers import NUMBER as _NUMBER, canon_number as _canon_number
from judge.datasets import load
from judge.judges import offer
from judge.judges.triage import VERBATIM_METHODS
from judge.search import Index
from judge.stages.checks import check_claim
from judge.text import normalize, split_sentences
from judge.verdicts import CONTROL_LABELS
from tests.conftest import BUNDLED_SAMPLE, shared

BUNDLED_ANSWERS = BUNDLED_SAMPLE.parent / "he_sample_answers.jsonl"


def _numbers(text: str) -> Counter:
    return Counter(_canon_number(m.group()).rstrip("%") for m in _NUMBER.finditer(text))


def to_judge(record, texts: list[str], k: int = 4):
    """Claims as the pipeline shows them to a judge: the search's top k candidates and the checks."""
    from judge.judges import ClaimToJudge

    indexes = [Index(s.text, s.doc_id) for s in record.sources]
    sources = {s.doc_id: s.text for s in record.sources}
    out = []
    for i, text in enumerate(texts):
        found = sorted((c for ix in indexes for c in ix.search(text, k)), key=lambda c: -c.score)[:k]
        offered = offer(found, str(i + 1))
        out.append(ClaimToJudge(str(i + 1), text, offered, check_claim(text, offered, sources)))
    return out


def bases_of(record, texts: list[str]) -> list[Verified]:
    return [v for c in to_judge(record, texts) if (v := verified(c.text, c.candidates, c.checks)) is not None]


def answer_sentences(records, answers) -> dict[str, list[str]]:
    """Each record's recorded answers, split into sentences (the deterministic decomposer's claims)."""
    out: dict[str, list[str]] = {}
    for a in answers:
        out.setdefault(a.record_id, []).extend(s.text for s in split_sentences(a.answer))
    return out


def check_controls(records, claims: dict[str, list[str]], per_record: int = 9) -> Counter:
    """Controls for every record from its claims; assert that each one's label holds; returns kinds made."""
    data = ControlData.from_records(records)
    kinds: Counter = Counter()
    for r in records:
        bases = bases_of(r, claims.get(r.id, []))
        texts = {b.text for b in bases}
        for c in controls_for_answer(r.id, bases, data, per_record, seed=7):
            kinds[(c.label, c.kind)] += 1
            if c.origin is not None:
                origin_source = data.records[c.origin_record_id].source(c.origin.doc_id).text
                assert origin_source[c.origin.start_char : c.origin.end_char] == c.origin.excerpt  # offsets are sacred
            own = [normalize(s.text).text for s in r.sources]
            best = data.best_match(r.id, c.text)
            assert "Regarding" not in c.text and "Sobre" not in c.text  # no template
            if c.label == "supported":
                assert c.origin_record_id == r.id
                assert c.text in texts or c.kind == "reworded", c
                if c.kind == "reworded":
                    assert any(_numbers(c.text) == _numbers(t) for t in texts)  # rewording never touches a number
            else:
                assert c.text not in texts
                norm = normalize(c.text).text.strip(" .")
                assert not any(norm in s for s in own), c  # found nowhere in the record's sources
                assert best is None or best.method not in VERBATIM_METHODS, c
            if c.label == "contradicted" and c.kind == "number":
                old, new = (x.strip() for x in c.change.split("->"))
                assert _canon_number(new) != _canon_number(old)
                assert _canon_number(old).rstrip("%") in _numbers(c.origin.excerpt)  # the source states the slot otherwise
            if c.label == "unsupported" and c.kind == "subject":
                new = c.change.split("->")[1].split("(")[0].strip()
                assert normalize(new).text not in " ".join(own)  # what it is now about, the source never mentions
    return kinds


def test_bundled_sample_controls_are_made_from_verified_claims_and_hold():
    records = load(BUNDLED_SAMPLE)
    kinds = check_controls(records, answer_sentences(records, load(BUNDLED_ANSWERS, "answers")))
    assert {label for label, _ in kinds} == set(CONTROL_LABELS), kinds
    assert kinds[("supported", "claim")] and kinds[("contradicted", "number")]


def test_hebrew_sample_controls_hold():
    records = load(shared("he_qa_sample.json"))
    answers = load(shared("he_model_answers_sample.jsonl"), "answers")
    kinds = check_controls(records, answer_sentences(records, answers))
    assert {label for label, _ in kinds} == set(CONTROL_LABELS), kinds
    assert kinds[("unsupported", "subject")] + kinds[("unsupported", "unrelated")] >= 10, kinds


def test_claims_the_search_cannot_vouch_for_are_no_base():
    record = load(BUNDLED_SAMPLE)[1]
    first = split_sentences(record.sources[0].text)[0].text
    assert bases_of(record, [first])  # a sentence of the source is verified
    assert not bases_of(record, ["The weather on Mars is mild in the afternoon."])
    assert not bases_of(record, [first.rstrip(".") + "?"])  # a question is no claim


def test_controls_are_seeded_and_labels_take_turns():
    records = load(BUNDLED_SAMPLE)
    claims = answer_sentences(records, load(BUNDLED_ANSWERS, "answers"))
    data = ControlData.from_records(records)
    r = records[1]
    bases = bases_of(r, claims[r.id])
    first = controls_for_answer(r.id, bases, data, 3, seed=1)
    assert first == controls_for_answer(r.id, bases, ControlData.from_records(records), 3, seed=1)
    assert [c.label for c in first] == list(CONTROL_LABELS)
    assert controls_for_answer(r.id, bases, data, 1, seed=1, offset=1)[0].label == "contradicted"
    assert controls_for_answer(r.id, [], data, 3) == []  # no verified claim, no control


@pytest.mark.parametrize(
    "language,text,expected",
    [
        ("English", "The bridge was built in 1932.", "The bridge was not built in 1932."),
        ("English", "The museum did not open on Mondays.", "The museum did open on Mondays."),
        ("English", "The plan isn't final.", "The plan is final."),
        ("Portuguese", "O projeto não foi aprovado pela câmara.", "O projeto foi aprovado pela câmara."),
        ("Portuguese", "A ponte foi construída em 1932.", "A ponte não foi construída em 1932."),
        ("Hebrew", "הגשר לא נבנה בשנת 1932.", "הגשר נבנה בשנת 1932."),
        ("Hebrew", "בעיר יש שלושה גשרים.", "בעיר אין שלושה גשרים."),
        ("Hebrew", "המחיר עלה בשנה שעברה.", "המחיר לא עלה בשנה שעברה."),
        ("Arabic", "كان الجسر مفتوحا للسيارات.", "لم يكن الجسر مفتوحا للسيارات."),
        ("Arabic", "لا يعمل المتحف يوم الاثنين.", "يعمل المتحف يوم الاثنين."),
    ],
)
def test_negation_flips(language, text, expected):
    out, change = flip_negation(text, language)
    assert out == expected and "negation" in change


@pytest.mark.parametrize(
    "language,text",
    [
        ("English", "It is not only the bridge that closed."),
        ("Hebrew", "זה לא רק הגשר שנסגר."),
        ("Portuguese", "Não só a ponte fechou."),
    ],
)
def test_idioms_are_not_negations(language, text):
    assert flip_negation(text, language) is None


def test_lead_in_moves_both_ways_and_keeps_the_words():
    out = move_lead_in("According to the ministry, 1,450 trips were added last year.", "English")
    assert out == "1,450 trips were added last year, according to the ministry."
    assert move_lead_in(out, "English") == "According to the ministry, 1,450 trips were added last year."
    assert move_lead_in("Segundo o relatório, a ponte foi reaberta.", "Portuguese") == "A ponte foi reaberta, segundo o relatório."
    assert move_lead_in("לפי משרד התחבורה, נוספו 1,450 נסיעות בשבוע.", "Hebrew") == "נוספו 1,450 נסיעות בשבוע, לפי משרד התחבורה."
    assert move_lead_in("The bridge, which is old, still stands.", "English") is None
    assert move_lead_in("In 4,000 cases nothing changed at all.", "English") is None  # a thousands comma is no clause


def test_synonyms_and_number_forms():
    assert swap_synonyms("Approximately 40 people began the race.", "English") == "About 40 people started the race."
    assert reword("כ־12% מהנסיעות בוטלו אולם הקו נשאר.", "Hebrew") == "בערך 12 אחוזים מהנסיעות בוטלו אך הקו נשאר."
    assert reword("Cerca de 12% dos alunos começaram o curso.", "Portuguese") == "Cerca de 12 por cento dos alunos iniciaram o curso."
    assert reword("Nothing here has a rule.", "English") is None


def test_control_count_rate_and_floor():
    counts = [control_count(8, 0.125, key=f"r{i}") for i in range(400)]
    assert set(counts) == {1}
    counts = [control_count(4, 0.125, key=f"r{i}") for i in range(2000)]
    assert set(counts) == {0, 1} and 0.4 < sum(counts) / len(counts) < 0.6
    assert control_count(4, 0.125, key="x") == control_count(4, 0.125, key="x")
    assert floor_plan(["a", "b", "c", "d"], 3) == {"a": 1, "b": 1, "c": 1}
    assert floor_plan(["a"], 3) == {"a": 3}
    assert floor_plan([], 3) == {} and floor_plan(["a"], 0) == {}



# -- the gate ----------------------------------------------------------------------------------------------


def _observe(judge: str, answer, per_label: int = 24) -> list[ControlObservation]:
    """``per_label`` controls of each label, answered by ``answer(label, i)``."""
    kinds = {"supported": "claim", "contradicted": "number", "unsupported": "subject"}
    return [
        ControlObservation(judge=judge, control_id=f"{label}{i}", label=label, kind=kinds[label], answered=answer(label, i))
        for label in kinds
        for i in range(per_label)
    ]


def _noisy(p: float, rng: random.Random):
    """Right with probability p; else one of the other labels at random."""
    def answer(label, i):
        return label if rng.random() < p else rng.choice([x for x in ("supported", "partially_supported", "unsupported", "contradicted") if x != label])
    return answer


def _pass_rate(p: float, runs: int = 400, per_label: int = 24) -> float:
    passed = 0
    for seed in range(runs):
        h = judge_health(_observe("j", _noisy(p, random.Random(seed)), per_label)).judges[0]
        passed += h.status == "passed"
    return passed / runs


def test_the_gate_false_passes_at_most_5_percent_of_guessing_judges_and_passes_good_ones():
    """The issue's bar, over 400 seeded runs each: p <= 0.5 passes <= 5% of runs, p >= 0.8 passes >= 90%."""
    assert _pass_rate(0.4) <= 0.05
    assert _pass_rate(0.5) <= 0.05
    assert _pass_rate(0.8) >= 0.90
    assert _pass_rate(0.9) >= 0.99
    assert 0.0 < _pass_rate(0.6) < 0.5  # in between: mostly not shown to be good enough


def test_a_judge_that_fails_one_label_fails_and_the_verdict_names_it():
    h = judge_health(_observe("lenient", lambda label, i: "supported" if label == "contradicted" else label)).judges[0]
    assert h.status == "failed" and h.passed is False
    assert "misses contradicted: 0 of 24, calls 24 supported" in h.verdict
    always = judge_health(_observe("yes", lambda label, i: "supported")).judges[0]
    assert always.status == "failed" and "unsupported" in always.verdict and "contradicted" in always.verdict


def test_too_few_controls_is_unverified_never_passed():
    """3 of 3 right is not [1.00, 1.00] trustworthy: the exact interval is wide and the run is unverified."""
    h = judge_health(_observe("j", lambda label, i: label, per_label=3)).judges[0]
    assert h.status == "unverified" and h.passed is False
    assert "needs >= 4" in h.verdict
    (r,) = [x for x in h.by_label if x.label == "supported"]
    assert r.ci95[0] < 0.3 and r.ci95[1] == 1.0
    one_label = [o for o in _observe("j", lambda label, i: label) if o.label != "unsupported"]
    assert judge_health(one_label).judges[0].status == "unverified"  # a label never tested is no evidence
    assert judge_health(_observe("j", lambda label, i: label, per_label=4)).judges[0].status == "passed"


def test_exact_interval_and_lower_bound():
    lo, hi = exact_interval(3, 3)
    assert hi == 1.0 and abs(lo - 0.025 ** (1 / 3)) < 1e-9
    assert exact_interval(0, 5)[0] == 0.0 and lower_bound(0, 5) == 0.0
    assert abs(lower_bound(4, 4) - 0.05 ** 0.25) < 1e-9
    assert min_per_label(0.4) == 4 and min_per_label(0.5) == 5
    assert lower_bound(15, 24) < 15 / 24 < exact_interval(15, 24)[1]


def test_rules_and_an_open_gate_are_reported_not_gated_and_blind_spots_are_named():
    rows = _observe("deterministic", lambda label, i: label) + [
        ControlObservation(judge="deterministic", control_id=f"n{i}", label="contradicted", kind="negation", answered="supported", how="deterministic")
        for i in range(7)
    ]
    report = judge_health(rows)
    (d,) = report.judges
    assert d.status == "reported" and d.passed is None and not d.gated
    assert "misses negations: 0 of 7, calls 7 supported" in d.verdict
    off = judge_health(_observe("j", lambda label, i: "supported"), gate=GateConfig(gate=False))
    assert off.judges[0].status == "reported" and not off.failed and off.headline().startswith("JUDGES NOT VERIFIED")
    assert judge_health([], enabled=False).headline().startswith("JUDGES NOT VERIFIED: controls are off")


def test_errors_are_misses():
    h = judge_health(_observe("j", lambda label, i: "judge_error" if i % 3 else label)).judges[0]
    assert h.errors == 48 and h.status == "failed" and "calls 16 judge error" in h.verdict


# -- no surface tells ------------------------------------------------------------------------------------


def _sentences_by_record(answers) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for a in answers:
        out.setdefault(a.record_id, []).extend(s.text for s in split_sentences(a.answer))
    return out


def _no_tell(result: dict, bar: float = 0.7) -> None:
    assert result["controls"] >= 10 and result["real"] >= 10, result
    for feature, value in result["auc"].items():
        assert value <= bar, (feature, result)


def test_no_surface_feature_tells_controls_from_real_claims_on_the_bundled_sample():
    from judge.controls.tells import measure

    records = load(BUNDLED_SAMPLE)
    by = _sentences_by_record(load(BUNDLED_ANSWERS, "answers"))
    _no_tell(measure(records, lambda r: by.get(r.id, [])))


def test_no_surface_feature_tells_controls_from_real_claims_on_the_hebrew_sample():
    from judge.controls.tells import measure

    by = _sentences_by_record(load(shared("he_model_answers_sample.jsonl"), "answers"))
    _no_tell(measure(load(shared("he_qa_sample.json")), lambda r: by.get(r.id, [])))


def test_no_surface_feature_tells_controls_from_real_claims_on_wice():
    from judge.controls.tells import measure

    records = load(shared("external/wice/claim_test.jsonl"), "wice")[:150]
    _no_tell(measure(records, lambda r: [c.text for c in r.claims]))
