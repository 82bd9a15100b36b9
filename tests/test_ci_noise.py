"""A CI gate that judge noise does not block (issue 39.1, 39.2): the judge verified once by `judge calibrate` and
adopted while its setup is unchanged; changed verdicts re-asked as distinct calls and settled against the
judge's noise floor; compare.md leading with the verdict. The recipe of docs/ci runs end to end with a scripted
rule-based judge with 5% of its labels random, unseeded (bench/gates_sim.py --end-to-end measures 10 pull
requests of each kind at 5% and 12%)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import pytest

from judge.results import AnswerResult, ClaimResult, Decomposition, RecordResult
from judge.scoring.confirm import DEFAULT_FLOOR, samples_for, settle_changes, settle_label
from judge.testing.ci_sim import Recipe, script
from judge.testing.server import ScriptedServer
from tests.conftest import ROOT


def test_a_changed_verdict_counts_only_when_the_reasks_tell_it_from_noise():
    # a real error: every re-ask says so
    assert settle_label(["contradicted"] * 5, "contradicted", 0.2, 0.05)[0] == "contradicted"
    # one dissent of six still holds at a floor of 0.2; two of five do not
    assert settle_label(["contradicted"] * 5 + ["supported"], "contradicted", 0.2, 0.05)[0] == "contradicted"
    assert settle_label(["supported"] * 3 + ["unsupported"] * 2, "unsupported", 0.2, 0.05)[0] == "supported"
    # the most common not-grounded label, ties to the most severe
    assert settle_label(["unsupported", "contradicted"] * 3, "unsupported", 0.05, 0.05)[0] == "contradicted"
    # a floor so high that even all re-asks could not pass: the verdict stands, undecided
    label, _, _, p, decided = settle_label(["contradicted"] * 5, "contradicted", 0.6, 0.05)
    assert (label, p, decided) == ("contradicted", None, False)
    # enough re-asks that one dissent still passes: more where the floor or the claims tested ask for it
    assert samples_for(0.05, 0.05) == 5 and samples_for(0.29, 0.05 / 6) == 7 and samples_for(0.4, 0.05 / 12) == 9


def _result(rid: str, claims: list[tuple[str, str]]) -> RecordResult:
    answer = AnswerResult(model="w", family="f", answer=" ".join(t for t, _ in claims), decomposition=Decomposition(method="sentences"),
                          claims=[ClaimResult(claim_id=i, text=t, label=lbl) for i, (t, lbl) in enumerate(claims)])
    return RecordResult(record_id=rid, question="q", language="en", answers=[answer])


def test_settling_a_noise_flag_and_a_real_error_between_baseline_and_candidate():
    a = {"r1": _result("r1", [("The bridge opened in 1937.", "supported")]), "r2": _result("r2", [("The zoo opened in 1899.", "contradicted")]),
         "r3": _result("r3", [("The tower opened in 1889.", "supported")])}
    b = {"r1": _result("r1", [("The bridge opened in 1937.", "unsupported")]),  # the judge flipped: noise
         "r2": _result("r2", [("The zoo opened in 1899.", "supported")]),  # the baseline's noise flag, gone
         "r3": _result("r3", [("It opened in 1952.", "contradicted")])}  # a real error
    truth = {"The bridge opened in 1937.": "supported", "The zoo opened in 1899.": "supported", "The tower opened in 1889.": "supported",
             "It opened in 1952.": "contradicted"}
    asked = []

    def reask(claims, k):
        asked.append((len(claims), k))
        return {i: [truth[c.text]] * k for i, (_, c) in enumerate(claims)}

    a2, b2, settled = settle_changes(a, b, list(a), reask)
    assert asked == [(3, 5)]  # a claim both runs ask the same question about is asked once; B's new claim (no partner in A) too
    assert b2["r1"].answers[0].claims[0].label == "supported" and a2["r2"].answers[0].claims[0].label == "supported"
    assert b2["r3"].answers[0].claims[0].label == "contradicted" and a2["r3"].answers[0].claims[0].label == "supported"
    assert Counter(s.side for s in settled) == {"a": 2, "b": 3}
    from judge.scoring.compare import compare_results, parse_gates

    out = compare_results(a, b, parse_gates(None), bootstrap=0, reask=reask)
    assert out["new_claims"]["not_grounded"] == 1 and out["failed"]
    assert "1 claims newly not grounded" in out["gates"][0]["why"] or "1 claim" in out["gates"][0]["why"]
    assert compare_results(a, b, parse_gates(None), bootstrap=0, reask=None)["new_claims"]["not_grounded"] == 2  # unconfirmed: the flip counts


def test_paired_deltas_never_contradict_the_records():
    """'worse by 0.0045' beside '0 of 10 records worse' cannot happen: the delta is the mean of per-record B - A."""
    from judge.scoring.compare import compare_results, parse_gates

    a = {f"r{i}": _result(f"r{i}", [(f"c{i} a", "supported")] * (1 + i % 3)) for i in range(10)}
    b = {f"r{i}": _result(f"r{i}", [(f"c{i} a", "supported")] * (3 - i % 3)) for i in range(10)}  # other claim counts, same rates
    m = compare_results(a, b, parse_gates(None), bootstrap=200)["metrics"]["faithfulness"]
    assert m["delta"] == 0 and m["records"]["worse"] == 0 and m["ci95"] == [0.0, 0.0]


def test_a_reask_is_a_distinct_call_with_its_own_cache_entry(tmp_path, scripted_server):
    from judge.judges import ClaimToJudge, JudgeContext
    from judge.judges.model import ModelJudge
    from judge.llm import LLM, CallCache, ModelConfig
    from judge.models import Source
    from judge.prompts import load_prompt

    server = scripted_server(script("good", 0.0))
    cfg = ModelConfig(model="openai/checker", api_base=server.base_url, family="fam-j", timeout=5)
    judge = ModelJudge(LLM(CallCache(tmp_path)), cfg, load_prompt("judge"), batch=True, context_chars=40)
    claim = ClaimToJudge("1", "The zoo opened in 1899.", [])

    def ask(sample: int) -> str:
        ctx = JudgeContext("When?", "en", [Source(doc_id="d", text="The zoo opened in 1899.")], sample=sample)
        return asyncio.run(judge.judge([claim], ctx))["1"].label

    labels = [ask(s) for s in (0, 1, 2, 3)]
    assert server.stats.requests == 4 and len(set(labels)) >= 1
    [ask(s) for s in (0, 1, 2, 3)]
    assert server.stats.requests == 4  # each sample cached under its own key


@pytest.fixture(scope="module")
def recipe(tmp_path_factory):
    server = ScriptedServer(script("good", 0.05), keep_bodies=False).start()
    yield Recipe(tmp_path_factory.mktemp("ci"), server, ROOT / "docs" / "ci")
    server.stop()


@pytest.mark.slow
def test_the_recipe_with_a_noisy_judge_passes_rewordings_and_reruns_and_fails_a_regression(recipe):
    assert recipe.push() == (0, 0)
    cal = json.loads((recipe.root / "baselines" / "judge-calibration.json").read_text())
    assert cal["health"]["judges"][0]["status"] in ("passed", "unchecked") and 0 < cal["floors"]["checker"] < 0.3
    assert recipe.push() == (0, 0)  # --if-stale: the calibration is current, nothing is called again for it
    assert len(list((recipe.root / "artifacts" / "calibration").glob("*"))) == 0
    for kind in ("unchanged", "reworded"):
        assert recipe.pull_request(kind) == 0, (recipe.root / "artifacts" / "compare.md").read_text()
    summary = json.loads(next((recipe.root / "artifacts" / "runs").glob("*/summary.json")).read_text())
    checker = summary["judge_health"]["judges"][0]
    assert checker["status"] in ("passed", "unchecked")  # the canary: never a failure for want of controls
    (trust,) = summary["judge_health"]["trust"]  # the recipe's set is labelled (issue 49.2): calibrated on its real claims
    assert trust["calibrated"] and not trust.get("refused") and trust["recall"][1] == 24 and summary["judge_calibration"]["floors"]["checker"] > 0
    assert cal["origin"].startswith("gold labels of calibration.jsonl") and cal["judges"]["checker"]["noise"]["n"] == 24
    assert summary["judge_health"]["cost"]["shown"] <= 6  # the run's own controls: a smoke alarm, a few
    assert recipe.pull_request("broken") == 1
    md = (recipe.root / "artifacts" / "compare.md").read_text()
    assert md.startswith("# judge compare: FAIL: ") and "claims newly not grounded" in md.split("\n\n")[1]
    assert md.index("FAIL") < md.index("Newly ungrounded in B") and "It opened in 1952." in md and "Changed verdicts re-asked" in md


def test_a_changed_judge_setup_is_not_calibrated_by_an_old_calibration(recipe):
    assert recipe.push() == (0, 0)  # the calibration and baseline this test changes the judge under (a no-op when current)
    models = recipe.root / "grounding" / "models.yaml"
    text = models.read_text()
    models.write_text(text.replace("timeout: 10", "timeout: 10\n    temperature: 0.3", 1) if "checker" in text.split("timeout: 10")[0] else
                      text.replace("family: fam-j", "family: fam-j\n    temperature: 0.3"))
    try:
        assert recipe.pull_request("unchanged") == 3  # the recipe's require: calibrated: an old calibration calibrates no other setup
        summary = json.loads(next((recipe.root / "artifacts" / "runs").glob("*/summary.json")).read_text())
        (trust,) = summary["judge_health"]["trust"]
        assert not trust["calibrated"] and "judges.checker.temperature" in trust["why"]  # what changed since the calibration
        assert summary["judge_calibration"]["floors"] == {}  # an old floor is not adopted for another setup
    finally:
        models.write_text(text)


def test_a_noise_flag_of_the_baseline_does_not_hide_a_real_error_of_the_candidate():
    """The zoo's claim flagged by chance in the baseline, really wrong (reworded) in the candidate: both re-asked."""
    from judge.scoring.compare import compare_results, parse_gates

    a = {"zoo": _result("zoo", [("The Bronx Zoo opened in 1899.", "contradicted")])}
    b = {"zoo": _result("zoo", [("The Bronx Zoo opened in 1952.", "contradicted")])}
    truth = {"The Bronx Zoo opened in 1899.": "supported", "The Bronx Zoo opened in 1952.": "contradicted"}

    def reask(claims, k):
        return {i: [truth[c.text]] * k for i, (_, c) in enumerate(claims)}

    assert not compare_results(a, b, parse_gates(None), bootstrap=0)["failed"]  # unconfirmed: the baseline's flag hides it
    out = compare_results(a, b, parse_gates(None), bootstrap=0, reask=reask)
    assert out["failed"] and out["new_claims"]["not_grounded"] == 1
    assert {(c["side"], c["label"]) for c in out["confirmation"]["claims"]} == {("a", "supported"), ("b", "contradicted")}


def test_only_the_same_judge_is_re_asked():
    """Re-asking settles a judge's noise, never a change of judge: another model, another temperature (a
    neighbour of the model change) or another judge prompt is measured, not re-asked; a price, a timeout or
    another server for the same model is the same judge."""
    from types import SimpleNamespace

    from judge.config import RunConfig
    from judge.scoring.confirm import same_judges

    def run(prompt="judge@1", **judge):
        cfg = RunConfig.model_validate({"dataset": {"path": "d.jsonl"}, "adjudicate": {"judges": ["j", "deterministic"]},
                                        "models": {"j": {"model": "openai/judge-a", **judge}}})
        return SimpleNamespace(config=cfg, manifest={"prompts": {"judge": prompt, "decompose": "decompose@1"}})

    assert same_judges(run(), run()) is None
    assert same_judges(run(), run(price={"input_per_million": 1, "output_per_million": 2}, timeout=5, api_base="http://127.0.0.1:9/v1")) is None
    assert "different judges" in same_judges(run(), run(model="openai/judge-b"))
    assert "other settings" in same_judges(run(), run(temperature=0.7))
    assert "judge prompts" in same_judges(run(), run(prompt="judge@2"))


def test_a_partial_flip_the_judge_does_not_repeat_moves_no_delta():
    """Issue 49.1: a metric delta counts only re-ask-confirmed changes, as the claim-level gate does."""
    from judge.scoring.compare import compare_results, parse_gates

    a = {f"r{i}": _result(f"r{i}", [(f"The place {i} opened in 19{i}0.", "supported")]) for i in range(10)}
    b = dict(a, r4=_result("r4", [("The place 4 opened in 1940.", "partially_supported")]))  # the judge flipped once

    def reask(claims, k):
        return {i: ["supported"] * k for i, _ in enumerate(claims)}

    out = compare_results(a, b, parse_gates(["faithfulness:0", "hallucination_rate:0", "accuracy:0"]), bootstrap=0, reask=reask, allow_missing=True)
    assert out["metrics"]["faithfulness"]["delta"] == 0 and not out["failed"], out["gates"]
    unconfirmed = compare_results(a, b, parse_gates(["faithfulness:0"]), bootstrap=0)
    assert unconfirmed["metrics"]["faithfulness"]["delta"] < 0 and unconfirmed["failed"]  # the same flip, not re-asked, moves it


def test_every_standing_flag_is_confirmed_on_both_sides_asked_once():
    """Issue 49.5: a not-grounded claim is re-asked whether or not its verdict changed. A noise flag both runs
    hold (unchanged, never re-asked before) is dismissed on both sides, asked once, and the candidate's verdicts
    are the confirmed ones on every claim that bears on a gate; its real error on another record still fails."""
    from judge.scoring.compare import compare_results, parse_gates

    truth = {}
    a, b = {}, {}
    for i in range(10):
        text = f"The place {i} opened in 19{i}0."
        truth[text] = "supported"
        a[f"r{i}"] = b[f"r{i}"] = _result(f"r{i}", [(text, "supported")])
    a["r1"] = b["r1"] = _result("r1", [("The place 1 opened in 1910.", "unsupported")])  # a noise flag, unchanged in both runs
    b["r2"] = _result("r2", [("It opened in 1952.", "contradicted")])  # the candidate's one real error
    truth["It opened in 1952."] = "contradicted"
    asked = []

    def reask(claims, k):
        asked.extend(c.text for _, c in claims)
        return {i: [truth[c.text]] * k for i, (_, c) in enumerate(claims)}

    out = compare_results(a, b, parse_gates(["hallucination_rate:0.05", "new_not_grounded:0"]), bootstrap=0, reask=reask)
    assert asked.count("The place 1 opened in 1910.") == 1  # one question for both sides
    settled = {(s["side"], s["claim"]): s["label"] for s in out["confirmation"]["claims"]}
    assert settled[("a", "The place 1 opened in 1910.")] == settled[("b", "The place 1 opened in 1910.")] == "supported"
    m = out["metrics"]["hallucination_rate"]
    assert m["delta"] == 0.1 and m["records"]["worse"] == 1 and m["records"]["better"] == 0
    assert out["failed"] and out["new_claims"]["not_grounded"] == 1


def test_a_single_error_survives_its_reasks_with_one_dissent_at_the_floor_the_calibration_gives():
    """The rule's miss rate on one-error regressions (issue 49.5): with re-asks enough for one dissent
    (samples_for), a real error a 12%-noise judge sees is missed only when the first verdict or two re-asks
    call it supported. Exact, for the recipe's floor (<= 0.3) and ten claims tested."""
    from scipy.stats import binom

    each = 0.05 / 10
    for floor in (0.1, 0.2, 0.3):
        n = samples_for(floor, each)
        assert settle_label(["contradicted"] * (n - 1) + ["supported"], "contradicted", floor, each)[0] == "contradicted"
        miss_one_reask = 0.12 / 4  # a random label, one of four, is supported
        miss = miss_one_reask + (1 - miss_one_reask) * binom.sf(1, n, miss_one_reask)
        assert miss < 0.05, (floor, n, miss)


@pytest.mark.slow
def test_a_push_that_cannot_calibrate_says_why_and_still_pins_a_baseline_marked_not_calibrated(tmp_path):
    """Issue 49.2: the user's own questions without labels in grounding/calibration.jsonl. The push's calibrate step
    says why it calibrates no judge, the run is refused by require: calibrated, and the baseline is pinned all the
    same, marked; a pull request then exits 3 saying the judge is not calibrated, never 2 for want of a baseline."""
    server = ScriptedServer(script("good", 0.0), keep_bodies=False).start()
    try:
        recipe = Recipe(tmp_path, server, ROOT / "docs" / "ci")
        calibration = recipe.root / "grounding" / "calibration.jsonl"
        rows = [json.loads(line) for line in calibration.read_text().splitlines()]
        calibration.write_text("".join(json.dumps({k: r[k] for k in ("id", "question", "source")}) + "\n" for r in rows))
        assert recipe.push() == (0, 0)
        assert recipe.codes[-2:] == [3, 0]  # the run refused (require: calibrated), the pin made all the same
        cal = json.loads((recipe.root / "baselines" / "judge-calibration.json").read_text())
        assert cal["judges"] == {} and cal["origin"] is None  # planted controls calibrate no judge
        marker = json.loads((recipe.root / "baselines" / "main" / "BASELINE.json").read_text())
        assert "not calibrated" in marker["judge_not_calibrated"]
        assert recipe.pull_request("unchanged") == 3
        summary = json.loads(next((recipe.root / "artifacts" / "runs").glob("*/summary.json")).read_text())
        (trust,) = summary["judge_health"]["trust"]
        assert trust["refused"].startswith("not calibrated")
    finally:
        server.stop()


@pytest.mark.slow
def test_the_recipe_refuses_a_lenient_judge_by_its_calibration(tmp_path):
    """Issue 44.4: a judge that calls everything supported passes no planted-control test it need not, but its
    calibration on the recipe's labelled questions shows it misses real errors: require: calibrated refuses it,
    and a pull request that breaks three answers exits 3, never 0."""
    server = ScriptedServer(script("lenient", 0.0), keep_bodies=False).start()
    try:
        recipe = Recipe(tmp_path, server, ROOT / "docs" / "ci")
        assert recipe.push() == (0, 0)
        cal = json.loads((recipe.root / "baselines" / "judge-calibration.json").read_text())
        assert cal["judges"]["checker"]["not_grounded_recall"]["k"] == 0 and cal["judges"]["checker"]["not_grounded_recall"]["ci95"][1] < 0.5
        assert "misses real errors" in json.loads((recipe.root / "baselines" / "main" / "BASELINE.json").read_text())["judge_not_calibrated"]
        assert recipe.pull_request("broken") == 3
    finally:
        server.stop()
