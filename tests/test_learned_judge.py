"""The learned no-model judge (issue 35.4-35.5): the shipped weights load and give the labels they should on
small cases of our own; the ``unsure`` verdict flows through the panel, the rates, the reports and the
cascade; and, over the shared labelled sets, the free verdicts are right."""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter

import pytest
import yaml

from judge.judges import ClaimToJudge, DeterministicThresholds, JudgeContext, Panel, deterministic_verdict, offer, panel_verdict
from judge.judges.deterministic import NoModelWeights, load_weights, probability
from judge.stages.evidence import FEATURES, read_evidence
from judge.judges.triage import triage
from judge.models import Source
from judge.report.markdown import render
from judge.results import JudgeVerdict
from judge.search import Index
from judge.stages.evidence import check_claim
from judge.testing.scripts import pipeline_model
from judge.verdicts import CLAIM_LABELS, SEVERITY, UNSURE, rates, scale_scores, unsure_line
from tests.conftest import ROOT, cli_inproc, shared

SOURCE = ("The Golden Gate Bridge opened to traffic in 1937 after four years of construction. The bridge is 2,737 metres "
          "long and was designed by Joseph Strauss. Fog often covers it in summer.")
CONTEXT = JudgeContext("", "en", [Source(doc_id="d", text=SOURCE)])


def judged(text: str, weights: NoModelWeights | None = None) -> JudgeVerdict:
    found = Index(SOURCE, "d").search(text, 5)
    claim = ClaimToJudge("1", text, offer(found, "1"), check_claim(text, found, {"d": SOURCE}))
    return deterministic_verdict(claim, DeterministicThresholds().profile("en", weights), context=CONTEXT, weights=weights)


# -- the shipped weights ----------------------------------------------------------------------------------------------
def test_the_shipped_weights_load_and_meet_the_featuriser():
    w = load_weights()
    assert tuple(w.features) == FEATURES and w.trees
    for profile in (w.thresholds.default, w.thresholds.he):
        assert 0 < profile.unsure_from <= profile.supported_from <= 1
    used = {node["f"] for t in w.trees for node in _nodes(t) if "f" in node}
    assert used <= set(FEATURES) and len(used) >= 5  # the trees read several features, all of them known


def _nodes(tree: dict):
    yield tree
    for k in ("l", "r"):
        if k in tree:
            yield from _nodes(tree[k])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Golden Gate Bridge opened to traffic in 1937 after four years of construction.", {"supported"}),
        # one clause of a longer source sentence: the trees give 0.46 against 0.475, but its span keeps it whole
        ("The bridge was designed by Joseph Strauss.", {"supported"}),
        # a slot the span fills otherwise is never supported (where the trees would say so, the judge is unsure)
        ("The Golden Gate Bridge opened to traffic in 1952 after four years of construction.", {"contradicted", UNSURE, "unsupported", "partially_supported"}),
        ("The bridge was designed by Frank Lloyd Wright.", {"contradicted", UNSURE, "unsupported", "partially_supported"}),
        ("Whales sing in the deep ocean at night near Hawaii.", {"unsupported"}),
    ],
)
def test_the_shipped_judge_labels_small_cases(text, expected):
    v = judged(text)
    assert v.label in expected, v.rationale
    assert v.how == "deterministic" and (bool(v.evidence) == (v.label not in ("unsupported", UNSURE)))
    for s in v.evidence:
        assert SOURCE[s.start_char : s.end_char] == s.excerpt


def test_probability_walks_the_trees_and_the_features_are_named():
    found = Index(SOURCE, "d").search("The bridge is 2,737 metres long.", 5)
    x = read_evidence("The bridge is 2,737 metres long.", found, check_claim("The bridge is 2,737 metres long.", found), "", (SOURCE,)).features()
    assert set(x) == set(FEATURES) and all(isinstance(v, float) for v in x.values())
    stump = NoModelWeights(features=list(FEATURES), kind="gbt", base=0.0, thresholds=load_weights().thresholds,
                           trees=[{"f": "align_aligned_share", "t": 0.5, "l": {"v": -2.0}, "r": {"v": 2.0}}])
    assert probability(stump, x) == pytest.approx(1 / (1 + 2.718281828 ** -2.0), rel=1e-6)  # every word aligned: the right leaf


# -- unsure -----------------------------------------------------------------------------------------------------------
def test_low_confidence_is_unsure_and_cites_nothing():
    w = load_weights()
    band = w.thresholds.model_copy(update={"default": w.thresholds.default.model_copy(update={"supported_from": 0.7, "unsure_from": 0.3})})
    even = NoModelWeights(features=list(FEATURES), kind="gbt", base=0.0, trees=[], thresholds=band)  # p = 0.5 for every claim
    v = judged("The long bridge was designed by Joseph Strauss.", even)  # out of the span's order: not kept whole
    assert v.label == UNSURE and not v.evidence and "too close to call: unsure from 0.30" in v.rationale
    v = judged("The long bridge was designed by Joseph Strauss.", even.model_copy(update={"base": 3.0}))
    assert v.label == "supported"


def test_unsure_counts_as_not_verified_in_every_rate_and_is_no_vote():
    r = rates(Counter(["supported", "supported", UNSURE, "judge_error"]))
    assert r["labels"][UNSURE] == 1 and r["faithfulness"] == pytest.approx(2 / 3) and r["hallucination_rate"] == 0
    assert "unsure" not in rates(Counter(["supported"]))["labels"]  # the tables of runs with none keep their columns
    assert scale_scores(["supported", UNSURE], [True, False]) == (1, 1, 0.5)
    assert UNSURE in CLAIM_LABELS and SEVERITY["partially_supported"] < SEVERITY[UNSURE] < SEVERITY["unsupported"]
    model = JudgeVerdict(judge="m", model="m", family="f", label="supported")
    mine = JudgeVerdict(judge="deterministic", model="deterministic", family="deterministic", label=UNSURE)
    failed = JudgeVerdict(judge="m", model="m", family="f", label="judge_error")
    assert panel_verdict([mine, model])[0] == "supported"  # the model judge decides an unsure claim
    assert panel_verdict([mine])[0] == UNSURE and panel_verdict([mine, failed])[0] == UNSURE
    assert panel_verdict([failed])[0] == "judge_error"


def test_reports_say_how_many_claims_were_unsure():
    labels = {"supported": 3, "partially_supported": 0, "unsupported": 1, "contradicted": 0, "judge_error": 0, UNSURE: 2}
    line = unsure_line(labels)
    assert line.startswith("unsure: 2 claims") and "not verified" in line
    assert unsure_line({**labels, UNSURE: 0}) is None
    scores = {"name": "t", "run_dir": "runs/t", "judges": ["deterministic"], "records": 1,
              "overall": {"claims": 6, "labels": labels, "faithfulness": 0.5, "hallucination_rate": 1 / 6}}
    assert line in render(scores)


def test_cascade_asks_the_model_judge_only_about_unsure_claims(scripted_server, tmp_path):
    server = scripted_server(pipeline_model())
    answers = ["The Golden Gate Bridge opened to traffic in 1952 after four years of construction. The bridge was designed by Joseph Strauss.",
               "The bridge is 2,737 metres long. Whales sing in the deep ocean at night near Hawaii. Fog often covers it in winter and spring."]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"id": f"r{n}", "question": "Tell me about the bridge.", "source": SOURCE, "answer": a}) + "\n"
                            for n, a in enumerate(answers)), encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({
        "name": "cascade", "dataset": {"path": str(data)},
        "models": {"judge-b": {"model": "openai/judge-b", "api_base": server.base_url, "family": "fam-b"}},
        "decompose": {"method": "sentences"}, "adjudicate": {"judges": ["deterministic", "judge-b"], "cascade": True, "batch_claims": False,
                       "deterministic": {"profiles": {"default": {"unsure_from": 0.0}}}},  # every claim short of supported and not contradicted: unsure
        "controls": {"enabled": False}, "cache_dir": str(tmp_path / "cache"),
    }, allow_unicode=True))
    result = cli_inproc("run", str(config), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress")
    assert result.returncode in (0, 1), result.stderr[-2000:]
    results = [json.loads(line) for line in next((tmp_path / "runs").glob("*/results.jsonl")).read_text(encoding="utf-8").splitlines()]
    claims = [c for r in results for a in r["answers"] for c in a["claims"]]
    asked = [c for c in claims if any(v["judge"] == "judge-b" for v in c["verdicts"])]
    unsure = [c for c in claims if any(v["judge"] == "deterministic" and v["label"] == UNSURE for v in c["verdicts"])]
    assert unsure and asked == unsure  # only the unsure claims went to the model judge, and every one of them did
    assert all(c["label"] != UNSURE for c in asked)  # the model judge decided them
    assert len(claims) > len(asked)  # the others kept the no-model verdict at no cost
    calls = [b for b in server.stats.bodies if "judge-b" in json.dumps(b)]
    assert len(calls) == len(asked)  # one call a claim (batch_claims off): none for the decided claims


# -- free verdicts over the shared sets ----------------------------------------------------------------------------------
@pytest.mark.slow
def test_free_verdicts_are_right_on_the_shared_sets():
    """Triage's free ``supported`` on the claim-labelled sets at hand (and DialSummEval's correct summaries):
    right >= 98% of the time on each (bench/README.md: held out, >= 0.99)."""
    data = shared("he_qa_sample.json").parent
    sys.path.insert(0, str(ROOT / "bench"))
    import grounding_sets as g

    total = 0
    for name, items in (("hebrew answers", g.hebrew_answers(data)), ("WiCE", g.wice(data)[:150]), ("FaithBench", g.faithbench(data)[:250])):
        settled = right = 0
        for i in items:
            found = [c for ix in (Index(t, d) for d, t in i.sources.items()) for c in ix.search(i.text, 5)]
            claim = ClaimToJudge("1", i.text, offer(sorted(found, key=lambda c: -c.score)[:5], "1"), check_claim(i.text, found, dict(i.sources)))
            v = triage(claim, JudgeContext(i.question, i.language, [Source(doc_id=d, text=t) for d, t in i.sources.items()]))
            if v is not None:
                settled += 1
                right += i.label == "supported"
        assert settled == 0 or right / settled >= 0.98, (name, right, settled)
        total += settled
    assert total > 0  # some claims were settled: the precision above measured something
