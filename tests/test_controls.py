"""Control claims: made only from claims whose support is certain by alignment, each label holding by
construction (a contradicted one never found in its source, an unsupported one with nothing the source could
contradict); the rules per language; and the gate: exact intervals, a lower bound per label, a canary
that fails only a plainly broken judge (one label to everything, no planted error of a label found), never an
honest or merely noisy one for want of controls, and the tells detector (bench/) gating nothing."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from judge.controls import ControlData, Verified, certain, control_answer
from bench.detector import auc, grouped_cv_auc
from judge.controls.health import ControlObservation, GateConfig, exact_interval, judge_health, lower_bound, min_per_label
from judge.controls.make import kept_whole, source_bases
from judge.stages.alignment import align
from judge.controls.mix import chance, draw
from judge.controls.make import ControlsConfig
from judge.controls.perturb import flip_negation
from judge.controls.reword import move_lead_in, reword, swap_synonyms
from judge.stages.numbers import NUMBER as _NUMBER, canon_number as _canon_number
from judge.datasets import load
from judge.judges import offer
from judge.judges.triage import VERBATIM_METHODS
from judge.search import Index
from judge.stages.evidence import check_claim
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
    return [v for c in to_judge(record, texts) if (v := certain(c.text, c.candidates, c.checks)) is not None]


def answer_sentences(records, answers) -> dict[str, list[list[str]]]:
    """Each record's recorded answers, each split into sentences (the deterministic decomposer's claims)."""
    out: dict[str, list[list[str]]] = {}
    for a in answers:
        out.setdefault(a.record_id, []).append([s.text for s in split_sentences(a.answer)])
    return out


def check_controls(records, answers: dict[str, list[list[str]]], size: int = 6) -> Counter:
    """A control answer for every answer; assert that each control's label holds; returns the kinds made."""
    data = ControlData.from_records(records)
    kinds: Counter = Counter()
    for r in records:
        own = [normalize(s.text).text for s in r.sources]
        for index, claims in enumerate(answers.get(r.id, [])):
            bases = bases_of(r, claims) or source_bases(r.id, claims, data, size, triage=False)
            made = control_answer(r.id, bases, data, size, seed=7, key=str(index))
            origins = [c.origin.excerpt for c in made if c.origin is not None]
            assert len(origins) == len(set(origins)), "two controls of one call made from one claim"
            for c in made:
                kinds[(c.label, c.kind)] += 1
                assert c.origin_record_id == r.id
                if c.origin is not None:
                    assert r.source(c.origin.doc_id).text[c.origin.start_char : c.origin.end_char] == c.origin.excerpt  # offsets are sacred
                best = data.best_match(r.id, c.text)
                if c.label == "supported":
                    assert c.text in {b.text for b in bases} or c.kind == "reworded", c
                    if c.kind == "reworded":
                        assert any(not _numbers(c.text) - _numbers(b.text) for b in bases)  # rewording adds or changes no number
                    continue
                norm = normalize(c.text).text.strip(" .")
                assert not any(norm in s for s in own), c  # found nowhere in the record's sources
                assert best is None or best.method not in VERBATIM_METHODS, c
                assert c.text not in {t for other in answers.get(r.id, []) for t in other}, "never a real claim verbatim"
                if c.kind in ("recombined", "number"):
                    old, new = (x.strip() for x in c.change.split("(")[0].split("->"))
                    stated = _numbers(c.origin.excerpt) if any(ch.isdigit() for ch in old) else None
                    if stated is not None:  # the aligned sentence states the slot otherwise
                        assert stated[_canon_number(old).rstrip("%")] and not stated[_canon_number(new).rstrip("%")], c
                    else:
                        assert old in c.origin.excerpt and new not in c.origin.excerpt, c
                if c.kind == "recombined":
                    assert any(new in s.text for s in r.sources), c  # the source's own value, in the wrong slot
                if c.kind == "detail":
                    # nothing the source could contradict: the only number added is a report's year no source writes
                    added = _numbers(c.text) - _numbers(c.origin.excerpt)
                    assert len(added) == 1 and all(n not in " ".join(s.text for s in r.sources) for n in added), c
                if c.kind == "about":  # no number but the subjects' own ("Apollo 11")
                    assert not _numbers(c.text) - _numbers(c.change), c
    return kinds


def test_bundled_sample_controls_hold_and_make_every_label():
    records = load(BUNDLED_SAMPLE)
    kinds = check_controls(records, answer_sentences(records, load(BUNDLED_ANSWERS, "answers")))
    assert {label for label, _ in kinds} == set(CONTROL_LABELS), kinds


def test_hebrew_sample_controls_hold():
    records = load(shared("he_qa_sample.json"))
    kinds = check_controls(records, answer_sentences(records, load(shared("he_model_answers_sample.jsonl"), "answers")))
    assert {label for label, _ in kinds} == set(CONTROL_LABELS), kinds
    assert kinds[("contradicted", "recombined")] >= 5 and kinds[("unsupported", "detail")] >= 5, kinds


def test_wice_controls_hold():
    records = load(shared("external/wice/claim_test.jsonl"), "wice")[:120]
    kinds = check_controls(records, {r.id: [[c.text for c in r.claims]] for r in records}, size=1)
    assert kinds[("contradicted", "recombined")] and kinds[("unsupported", "about")], kinds


def test_support_is_certain_only_when_every_word_aligns_in_order_within_one_sentence():
    record = load(BUNDLED_SAMPLE)[1]
    first = split_sentences(record.sources[0].text)[0].text
    assert bases_of(record, [first])  # a sentence of the source, verbatim
    assert not bases_of(record, ["The weather on Mars is mild in the afternoon."])
    assert not bases_of(record, [first.rstrip(".") + "?"])  # a question is no claim
    # the same words in another order may say another thing: a role swap is no base
    assert kept_whole(align("Peter played Norman Dike.", "Peter played Norman Dike in the film."))
    assert not kept_whole(align("Norman Dike played Peter.", "Peter played Norman Dike."))
    assert not kept_whole(align("Peter did not play Norman Dike.", "Peter played Norman Dike."))  # a denial added
    words = first.rstrip(".").split()
    if len(words) >= 6:
        swapped = " ".join(words[len(words) // 2 :] + words[: len(words) // 2]) + "."
        assert not bases_of(record, [swapped])


def test_gold_labelled_claims_are_never_bases_unless_the_answer_says_them():
    """The record's reference statements make no control (they leaked gold): only the answer's claims do."""
    records = load(shared("he_qa_sample.json"))
    answers = answer_sentences(records, load(shared("he_model_answers_sample.jsonl"), "answers"))
    data = ControlData.from_records(records)
    for r in records:
        said = {t for a in answers.get(r.id, []) for t in a}
        for index, claims in enumerate(answers.get(r.id, [])):
            for c in control_answer(r.id, bases_of(r, claims), data, 6, key=str(index)):
                if c.label == "supported" and c.kind == "claim":
                    assert c.text in said


def test_controls_are_seeded_and_the_choice_of_answers_reads_no_label():
    records = load(BUNDLED_SAMPLE)
    claims = answer_sentences(records, load(BUNDLED_ANSWERS, "answers"))
    data = ControlData.from_records(records)
    r = records[1]
    bases = bases_of(r, claims[r.id][0])
    first = control_answer(r.id, bases, data, 3, seed=1)
    assert first == control_answer(r.id, bases, ControlData.from_records(records), 3, seed=1)
    assert control_answer(r.id, [], data, 0) == []
    # which answers get a control answer: a hash of record and answer, uniform, monotone in the chance
    draws = [draw(f"record-{k}", 0) for k in range(4000)]
    assert 0.45 < sum(d < 0.5 for d in draws) / len(draws) < 0.55
    assert 0.08 < sum(d < 0.1 for d in draws) / len(draws) < 0.12
    cfg = ControlsConfig()
    assert chance(cfg, 10) == pytest.approx(cfg.max_share / (1 - cfg.max_share))  # small data: the cap binds
    assert chance(cfg, 100_000) == pytest.approx(cfg.per_label * 3 * cfg.margin / 100_000)  # large data: what the gate asks


def test_labels_of_control_answers_are_balanced_over_a_run():
    from judge.controls.make import label_turn

    turns = Counter(label_turn(f"record-{k}", "0") % 3 for k in range(3000))
    assert all(900 < n < 1100 for n in turns.values()), turns


@pytest.mark.parametrize(
    "language,text,expected",
    [
        ("en", "The bridge was built in 1932.", "The bridge was not built in 1932."),
        ("en", "The museum did not open on Mondays.", "The museum did open on Mondays."),
        ("en", "The plan isn't final.", "The plan is final."),
        ("pt", "O projeto não foi aprovado pela câmara.", "O projeto foi aprovado pela câmara."),
        ("pt", "A ponte foi construída em 1932.", "A ponte não foi construída em 1932."),
        ("he", "הגשר לא נבנה בשנת 1932.", "הגשר נבנה בשנת 1932."),
        ("he", "בעיר יש שלושה גשרים.", "בעיר אין שלושה גשרים."),
        ("he", "המחיר עלה בשנה שעברה.", "המחיר לא עלה בשנה שעברה."),
        ("ar", "كان الجسر مفتوحا للسيارات.", "لم يكن الجسر مفتوحا للسيارات."),
        ("ar", "لا يعمل المتحف يوم الاثنين.", "يعمل المتحف يوم الاثنين."),
    ],
)
def test_negation_flips(language, text, expected):
    out, change = flip_negation(text, language)
    assert out == expected and "negation" in change


@pytest.mark.parametrize(
    "language,text",
    [
        ("en", "It is not only the bridge that closed."),
        ("he", "זה לא רק הגשר שנסגר."),
        ("pt", "Não só a ponte fechou."),
    ],
)
def test_idioms_are_not_negations(language, text):
    assert flip_negation(text, language) is None


def test_lead_in_moves_both_ways_and_keeps_the_words():
    out = move_lead_in("According to the ministry, 1,450 trips were added last year.", "en")
    assert out == "1,450 trips were added last year, according to the ministry."
    assert move_lead_in(out, "en") == "According to the ministry, 1,450 trips were added last year."
    assert move_lead_in("Segundo o relatório, a ponte foi reaberta.", "pt") == "A ponte foi reaberta, segundo o relatório."
    assert move_lead_in("לפי משרד התחבורה, נוספו 1,450 נסיעות בשבוע.", "he") == "נוספו 1,450 נסיעות בשבוע, לפי משרד התחבורה."
    assert move_lead_in("The bridge, which is old, still stands.", "en") is None
    assert move_lead_in("In 4,000 cases nothing changed at all.", "en") is None  # a thousands comma is no clause


def test_an_aside_is_dropped():
    from judge.controls.reword import drop_parenthetical

    assert drop_parenthetical("Irene Hervey (born 1909) was an American film actress.") == "Irene Hervey was an American film actress."
    assert drop_parenthetical("It (a) is short.") is None  # too little left to state anything
    assert drop_parenthetical("No aside here at all.") is None


def test_synonyms_and_number_forms():
    assert swap_synonyms("Approximately 40 people began the race.", "en") == "About 40 people started the race."
    assert reword("כ־12% מהנסיעות בוטלו אולם הקו נשאר.", "he") == "בערך 12 אחוזים מהנסיעות בוטלו אך הקו נשאר."
    assert reword("Cerca de 12% dos alunos começaram o curso.", "pt") == "Cerca de 12 por cento dos alunos iniciaram o curso."
    assert reword("Nothing here has a rule.", "en") is None


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


def _rate(p: float, status: str, runs: int = 400, per_label: int = 24) -> float:
    hit = 0
    for seed in range(runs):
        h = judge_health(_observe("j", _noisy(p, random.Random(seed)), per_label)).judges[0]
        hit += h.status == status
    return hit / runs


def test_the_canary_never_fails_an_honest_or_noisy_judge_and_fails_broken_ones():
    """The canary fails only the plainly broken: over 400 seeded runs, a judge right with probability 0.4 to 1
    is never failed at 24 controls a label, nor one right 0.8 or more at the fewest the canary reads (6); it is told whether it caught
    planted errors, nothing more. One label to everything, or a label whose planted errors it never finds, fails."""
    from judge.controls.health import canary_min

    assert canary_min(0.4) == 6 and canary_min(0.5) == 5
    for p in (0.4, 0.6, 0.8, 1.0):
        assert _rate(p, "failed") == 0.0
        assert _rate(p, "passed") == 1.0  # 24 planted errors a label: it found some
    assert _rate(0.8, "failed", per_label=6) == _rate(1.0, "failed", per_label=6) == 0.0
    assert _rate(0.4, "failed", per_label=6) <= 0.06  # a judge at the floor misses all 6 of a label in <= 5% of runs
    for one in ("supported", "contradicted", "unsupported", "partially_supported"):
        h = judge_health(_observe("j", lambda label, i, one=one: one, per_label=6)).judges[0]
        assert h.status == "failed" and h.passed is False and "plainly broken" in h.verdict, (one, h.verdict)


def test_a_judge_that_fails_one_label_fails_and_the_verdict_names_it():
    h = judge_health(_observe("lenient", lambda label, i: "supported" if label == "contradicted" else label)).judges[0]
    assert h.status == "failed" and h.passed is False
    assert "misses contradicted: 0 of 24, calls 24 supported" in h.verdict
    always = judge_health(_observe("yes", lambda label, i: "supported")).judges[0]
    assert always.status == "failed" and "unsupported" in always.verdict and "contradicted" in always.verdict
    # finding a few is not broken: 3 of 24 contradicted caught is a weak judge, for its calibration to show
    weak = judge_health(_observe("weak", lambda label, i: "supported" if label == "contradicted" and i > 2 else label)).judges[0]
    assert weak.status == "passed" and weak.verdict.startswith("caught planted errors: caught 24 of 24 planted supported, 3 of 24 contradicted")


def test_an_unrelated_statement_called_unsupported_is_caught_not_missed():
    """Issue 49.5: a planted contradicted claim the judge calls unsupported (a name the record never mentions
    is a statement the source does not make) is found, as an unsupported one called contradicted is."""
    h = judge_health(_observe("j", lambda label, i: "unsupported" if label == "contradicted" else label)).judges[0]
    assert h.status == "passed" and all(r.correct == r.controls for r in h.by_label)


def test_too_few_controls_is_unchecked_never_a_failure():
    """3 of 3 right is not [1.00, 1.00] evidence, and 3 missed is not proof of a broken judge: the canary says it
    is too few to tell, and that is no failure (exit 0): the calibration on labelled claims decides."""
    h = judge_health(_observe("j", lambda label, i: label, per_label=2)).judges[0]
    assert h.status == "passed"  # 4 planted errors, found: caught, whatever their number
    none_found = judge_health(_observe("j", lambda label, i: "supported", per_label=2))
    (j,) = none_found.judges
    assert j.status == "unchecked" and j.passed is None and not none_found.failed and not none_found.failure_lines()
    assert "too few controls for the canary to tell" in j.verdict and "not a failure" in j.verdict
    (r,) = [x for x in h.by_label if x.label == "supported"]
    assert r.ci95[0] < 0.3 and r.ci95[1] == 1.0
    only_supported = [o for o in _observe("j", lambda label, i: label) if o.label == "supported"]
    report = judge_health(only_supported)
    assert report.judges[0].status == "unchecked" and not report.failed
    assert "too few controls to tell for j (not a failure)" in report.headline()
    nothing = judge_health([], model_judges=["j"])
    assert nothing.judges[0].status == "unchecked" and not nothing.failed


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
    assert off.judges[0].status == "reported" and not off.failed and off.headline().startswith("JUDGES UNCHECKED")
    assert judge_health([], enabled=False).headline().startswith("JUDGES UNCHECKED: controls are off")


def test_a_passing_judge_caught_planted_errors_and_nothing_more_and_no_detector_unverifies_it():
    """Honest words: "caught N of M planted ...", planted errors are easier than real ones, the calibration and
    the corrected rate are the estimates to trust; never the old upper-case word, nor "trust" said of a judge.
    Tells read back from an older run's summary gate nothing."""
    rows = _observe("j", lambda label, i: label if i else "supported")
    report = judge_health(rows)
    (j,) = report.judges
    assert j.status == "passed" and "caught 24 of 24 planted supported, 23 of 24 contradicted, 23 of 24 unsupported" in j.verdict
    text = " ".join([report.headline(), *report.lines()])
    assert "planted errors are easier" in text and "human labels" in text and "calibration" in text
    assert "VERIFIED" not in text and "trustworth" not in text.lower() and "verified" not in report.headline()
    assert report.headline().startswith("canary: j caught 24 of 24 planted supported")
    told = judge_health(rows, tells={"real": 500, "controls": 72, "auc": {}, "detector_auc": 0.99},
                        gate=GateConfig(detector_bar=0.7))
    assert told.judges[0].status == "passed" and not told.failed


def test_an_unknown_price_is_unknown_never_zero():
    from judge.results import ControlCost

    cost = ControlCost(shown=3, calls=3, prompt_tokens=900, completion_tokens=90, cost_usd=0.0, priced=False)
    lines = judge_health(_observe("j", lambda label, i: label), cost=cost, judge_tokens=9000).lines()
    (line,) = [x for x in lines if x.startswith("controls cost")]
    assert "unknown" in line and "$0.0000" not in line and "11.0% of judge tokens" in line
    priced = judge_health(_observe("j", lambda label, i: label), cost=cost.model_copy(update={"priced": True, "cost_usd": 0.5})).lines()
    assert any("$0.5000" in x for x in priced)


def test_errors_are_misses():
    h = judge_health(_observe("j", lambda label, i: "judge_error" if i % 3 else label)).judges[0]
    assert h.errors == 48 and h.status == "passed" and "8 of 24 contradicted" in h.verdict  # misses, counted, not broken
    assert "misses numbers: 8 of 24, calls 16 judge error" in h.verdict  # named as a blind spot
    dead = judge_health(_observe("j", lambda label, i: "judge_error")).judges[0]
    assert dead.errors == 72 and dead.status == "failed" and "calls 24 judge error" in dead.verdict


# -- no tells -------------------------------------------------------------------------------------------


def test_the_detector_finds_a_planted_tell_and_none_in_noise():
    rng = random.Random(0)
    rows = [{"a": rng.random(), "b": rng.random()} for _ in range(400)]
    labels = [int(i < 100) for i in range(400)]
    groups = [f"r{i // 2}" for i in range(400)]
    noise = grouped_cv_auc(rows, labels, groups, ["a", "b"])
    assert noise is not None and noise < 0.62
    told = [{**r, "a": r["a"] + (0.6 if y else 0.0)} for r, y in zip(rows, labels)]
    assert grouped_cv_auc(told, labels, groups, ["a", "b"]) > 0.8
    assert grouped_cv_auc(rows[:10], labels[:10], groups[:10], ["a"]) is None  # too few to train and test on
    assert auc([1, 3, 2, 0], [1, 1, 0, 0]) == pytest.approx(0.75) and auc([0, 0], [1, 0]) == 0.5


def test_control_calls_are_shaped_like_real_calls_and_never_hold_their_base():
    """On the Hebrew answers (every answer given a control answer): the call features (claims per call, place,
    the nearest other claim and what it shares) tell nothing, where controls put beside their bases (round 2)
    were told apart by the nearest claim alone."""
    from bench.tells import measure

    by = answer_sentences([], load(shared("he_model_answers_sample.jsonl"), "answers"))
    result = measure(load(shared("he_qa_sample.json")), lambda r: by.get(r.id, []), config=ControlsConfig(max_share=0.5), keep=True)
    assert result["controls"] >= 30 and result["detector_auc"] is not None, result
    for feature in ("call_claims", "place", "nearest", "nearest_shared"):
        assert result["auc"][feature] <= 0.7, (feature, result["auc"])
    # round 2 put each control in its base's call: its nearest other claim was its base
    from bench.tells import auc as feature_auc, call_features

    real_near = [f["nearest"] for answers in by.values() for claims in answers for f in call_features(claims)]
    beside = []
    for m in result["made"]:
        claims = max(by[m["record_id"]], key=lambda a: max((len(set(c.split()) & set(m["text"].split())) for c in a), default=0))
        beside.append(call_features([m["text"], *claims])[0]["nearest"])
    assert feature_auc(beside, real_near) > 0.7 > result["auc"]["nearest"]


def test_a_supported_control_of_an_answer_some_judge_flagged_is_withdrawn_and_not_counted():
    from judge.controls.health import ControlTally, observations
    from judge.pipeline import withdraw
    from judge.results import ClaimResult, ControlClaim, ControlResult, JudgeVerdict, RecordResult

    def verdict(label, judge="j"):
        return JudgeVerdict(judge=judge, model="m", family="f", label=label)

    controls = [ControlResult(control=ControlClaim(id=f"c{i}", record_id="r", text=f"t{i}", label=lbl, kind="claim", origin_record_id="r"),
                              answer=0, position=i, verdicts=[verdict(lbl)], label=lbl) for i, lbl in enumerate(CONTROL_LABELS)]
    clean = [ClaimResult(claim_id=0, text="a", verdicts=[verdict("supported"), verdict("judge_error", "k")])]
    assert withdraw(controls, clean) == controls  # an error is no flag
    flagged = [ClaimResult(claim_id=0, text="a", verdicts=[verdict("supported"), verdict("unsupported", "k")])]
    out = withdraw(controls, flagged)
    assert [c.withdrawn != "" for c in out] == [lbl == "supported" for lbl in CONTROL_LABELS] and "k flagged" in out[0].withdrawn
    result = RecordResult(record_id="r", question="q", language="en", controls=out)
    assert {o.label for o in observations(result)} == set(CONTROL_LABELS) - {"supported"}
    tally = ControlTally()
    tally.add(result)
    assert sum(tally.counts.values()) == 2
