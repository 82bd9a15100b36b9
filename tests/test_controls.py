"""Control claims: every control's label holds by construction, the rules per language, and judge health."""

from __future__ import annotations

from collections import Counter

import pytest

from judge.controls import ControlData, control_count, controls_for_record, floor_plan
from judge.controls.health import ControlObservation, bootstrap_ci, judge_health
from judge.controls.make import (
    _NUMBER,
    UNRELATED_MAX_SCORE,
    _canon_number,
    flip_negation,
    move_lead_in,
    reword,
    swap_synonyms,
)
from judge.datasets import load
from judge.judges.triage import VERBATIM_METHODS
from judge.text import normalize
from tests.conftest import BUNDLED_SAMPLE, shared


def _numbers(text: str) -> Counter:
    return Counter(_canon_number(m.group()).rstrip("%") for m in _NUMBER.finditer(text))


def check_controls(records, per_record: int = 6) -> Counter:
    """Build controls for every record and assert that each one's label holds; returns the kinds made."""
    data = ControlData.from_records(records)
    kinds: Counter = Counter()
    for r in records:
        controls = controls_for_record(r.id, data, per_record, seed=7)
        for c in controls:
            kinds[(c.label, c.kind)] += 1
            origin_source = data.records[c.origin_record_id].source(c.origin.doc_id).text
            assert origin_source[c.origin.start_char : c.origin.end_char] == c.origin.excerpt  # offsets are sacred
            own = [normalize(s.text).text for s in r.sources]
            best = data.best_match(r.id, c.text)
            if c.label == "supported":
                assert c.origin_record_id == r.id
                assert _numbers(c.text) == _numbers(c.origin.excerpt), c  # rewording never touches a number
                if c.kind == "copy":
                    assert c.text == c.origin.excerpt
                else:
                    assert c.text != c.origin.excerpt
            else:
                norm = normalize(c.text).text.strip(" .")
                assert not any(norm in s for s in own), c  # found nowhere in the record's sources
                assert best is None or best.method not in VERBATIM_METHODS, c
            if c.label == "contradicted":
                assert c.origin_record_id == r.id and c.text != c.origin.excerpt
                if c.kind == "number":
                    new = c.change.split("->")[1].strip()
                    assert _canon_number(new).rstrip("%") not in _numbers(c.origin.excerpt)
                    assert _numbers(c.text) != _numbers(c.origin.excerpt)
            if c.label == "unsupported":
                assert c.origin_record_id != r.id
                assert best is None or best.score < UNRELATED_MAX_SCORE, (c.text, best)
    return kinds


def test_bundled_sample_controls_hold_by_construction():
    records = load(BUNDLED_SAMPLE)
    kinds = check_controls(records)
    assert {label for label, _ in kinds} == {"supported", "contradicted", "unsupported"}


def test_hebrew_sample_controls_hold_and_cover_every_rule_kind():
    records = load(shared("he_qa_sample.json"))
    kinds = check_controls(records)
    made = {k for _, k in kinds}
    assert {"reworded", "number", "negation", "unrelated"} <= made, kinds


def test_wice_controls_hold_by_construction():
    records = load(shared("external/wice/claim_test.jsonl"), "wice")[:30]
    kinds = check_controls(records, per_record=3)
    assert sum(kinds.values()) >= 60


def test_controls_are_seeded_and_labels_take_turns():
    records = load(BUNDLED_SAMPLE)
    data = ControlData.from_records(records)
    rid = records[0].id
    first = controls_for_record(rid, data, 3, seed=1)
    assert first == controls_for_record(rid, ControlData.from_records(records), 3, seed=1)
    assert sorted(c.label for c in first) == ["contradicted", "supported", "unsupported"]
    assert [c.label for c in controls_for_record(rid, data, 1, seed=1, offset=1)] == ["contradicted"]
    others = [controls_for_record(rid, data, 3, seed=s) for s in range(2, 8)]
    assert any(o != first for o in others)
    assert len({c.origin.start_char for c in controls_for_record(rid, data, 6, seed=1) if c.origin_record_id == rid}) == len(
        [c for c in controls_for_record(rid, data, 6, seed=1) if c.origin_record_id == rid]
    )  # no sentence used twice


def test_a_single_record_run_gets_no_unrelated_control():
    records = load(BUNDLED_SAMPLE)[:1]
    data = ControlData.from_records(records)
    controls = controls_for_record(records[0].id, data, 6)
    assert controls and all(c.label != "unsupported" for c in controls)


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


def _observe(judge: str, answer) -> list[ControlObservation]:
    """Ten controls of each label (kinds as the generator makes them), answered by ``answer(label, i)``."""
    kinds = {"supported": "reworded", "contradicted": "number", "unsupported": "unrelated"}
    return [
        ControlObservation(judge=judge, control_id=f"{label}{i}", label=label, kind=kinds[label], answered=answer(label, i))
        for label in kinds
        for i in range(10)
    ]


def test_health_names_a_lenient_judge_and_fails_it():
    report = judge_health(_observe("yes-man", lambda label, i: "supported"), min_accuracy=0.6)
    (h,) = report.judges
    assert h.status == "lenient" and h.passed is False
    assert h.accuracy == pytest.approx(1 / 3)
    assert "calls 10 of 10 contradicted controls supported" in h.verdict
    assert "calls 10 of 10 unsupported controls supported" in h.verdict
    lines = report.failure_lines()
    assert len(lines) == 1 and "yes-man" in lines[0] and "contradicted" in lines[0]


def test_health_trusts_a_truthful_judge_and_calls_a_strict_one_strict():
    truthful = judge_health(_observe("oracle", lambda label, i: label), real_labels={"oracle": Counter(supported=5)}, min_accuracy=0.6)
    (h,) = truthful.judges
    assert h.status == "trustworthy" and h.passed is True and h.accuracy == 1.0 and h.accuracy_ci95 == [1.0, 1.0]
    assert h.real_labels == {"supported": 5} and not truthful.failed
    strict = judge_health(_observe("naysayer", lambda label, i: "unsupported" if label == "supported" else label), min_accuracy=0.6)
    (s,) = strict.judges
    assert s.status == "strict" and s.passed is True  # 20 of 30 right: passes, but the verdict says how it leans
    assert "calls 10 of 10 supported controls unsupported" in s.verdict


def test_health_counts_errors_as_misses_and_needs_enough_controls():
    rows = _observe("flaky", lambda label, i: "judge_error" if i < 6 else label)
    (h,) = judge_health(rows, min_accuracy=0.6).judges
    assert h.errors == 18 and h.accuracy == pytest.approx(0.4) and h.passed is False and "18 judge errors" in h.verdict
    (few,) = judge_health(rows[:2], min_accuracy=0.6).judges
    assert few.status == "too_few" and few.passed is None


def test_bootstrap_interval_brackets_the_accuracy_and_is_seeded():
    hits = [1] * 7 + [0] * 3
    ci = bootstrap_ci(hits, seed=3)
    assert ci[0] < 0.7 < ci[1] and ci == bootstrap_ci(hits, seed=3)
    assert bootstrap_ci([1]) is None
