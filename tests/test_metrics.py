"""Every metric on tiny cases computed by hand (and alpha against the krippendorff package)."""

import json

import krippendorff
import numpy as np
import pytest

from judge.datasets.ratings import RatingTable, load_ratings
from judge.metrics.agreement import agreement, alpha, cohen_kappa
from judge.metrics.classification import classification
from judge.metrics.human import judge_vs_humans, ranks, spearman
from judge.verdicts import scale_scores
from judge.metrics.matching import match_claims
from judge.metrics.spans import overlap, overlap_scores, sentence_hit, sum_counts
from tests.conftest import cli_inproc, shared


def test_classification_by_hand():
    gold = ["supported", "supported", "unsupported", "contradicted", "partially_supported"]
    pred = ["supported", "unsupported", "unsupported", "supported", "judge_error"]
    r = classification(gold, pred)
    assert r["accuracy"] == pytest.approx(2 / 5)
    # supported: tp 1, predicted 2, gold 2 -> P .5 R .5 F1 .5
    assert r["per_label"]["supported"] == {"precision": 0.5, "recall": 0.5, "f1": 0.5, "support": 2}
    # unsupported: tp 1, predicted 2, gold 1 -> P .5 R 1 F1 2/3
    assert r["per_label"]["unsupported"]["f1"] == pytest.approx(2 / 3)
    # contradicted: tp 0, predicted 0, gold 1 -> P None, R 0, F1 0; partially: same
    assert r["per_label"]["contradicted"] == {"precision": None, "recall": 0.0, "f1": 0.0, "support": 1}
    assert r["macro_f1"] == pytest.approx((0.5 + 2 / 3 + 0 + 0) / 4)
    assert r["confusion"]["partially_supported"]["judge_error"] == 1
    assert r["confusion"]["contradicted"]["supported"] == 1


def test_span_overlap_by_hand():
    cited = [("d", 0, 10), ("d", 20, 30)]
    gold = [("d", 5, 25)]
    c = overlap(cited, gold)
    assert c == {"cited": 20, "gold": 20, "shared": 10, "union": 30}
    s = overlap_scores(c)
    assert (s["precision"], s["recall"], s["f1"], s["iou"]) == (0.5, 0.5, 0.5, pytest.approx(1 / 3))
    # another document never overlaps
    assert overlap([("e", 5, 25)], gold)["shared"] == 0
    total = sum_counts([c, overlap([("d", 0, 4)], [("d", 0, 4)])])
    assert total == {"cited": 24, "gold": 24, "shared": 14, "union": 34}
    assert overlap_scores({"cited": 0, "gold": 5, "shared": 0, "union": 5})["precision"] is None
    assert sentence_hit([("d", 40, 45)], [("d", 44, 60)]) and not sentence_hit([("d", 40, 44)], [("d", 44, 60)])


def test_claim_matching_by_offsets_then_text():
    predicted = [("A cat sat.", [(0, 10)]), ("It was red and tall", []), ("unrelated words here", [])]
    gold = [("A cat sat.", [(0, 10)]), ("it was tall and red", [(11, 30)]), ("never predicted", [(40, 55)])]
    pairs, up, ug = match_claims(predicted, gold)
    assert [(i, j) for i, j, _ in pairs] == [(0, 0), (1, 1)]
    assert up == [2] and ug == [2]


def test_the_documented_scale_rule():
    assert scale_scores(["supported", "supported"], [True, True]) == (2, 2, 1.0)
    assert scale_scores(["supported", "partially_supported"], [True, False]) == (1, 1, 0.75)
    assert scale_scores(["unsupported", "contradicted", "supported"], [False, False, True]) == (0, 0, pytest.approx(1 / 3))
    assert scale_scores(["judge_error"], [False]) == (None, None, None)


def test_spearman_and_ranks_by_hand():
    assert ranks([10, 20, 20, 5]) == [2.0, 3.5, 3.5, 1.0]
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 1, 1], [1, 2, 3]) is None


def test_alpha_equals_the_krippendorff_package():
    m = [[0, 1, 2, 2, None], [0, 1, 1, 2, 2], [1, 1, 2, 2, 2]]
    arr = np.array([[np.nan if v is None else v for v in row] for row in m], dtype=float)
    expected = krippendorff.alpha(reliability_data=arr, level_of_measurement="ordinal", value_domain=[0, 1, 2])
    assert alpha(m, "ordinal", [0, 1, 2]) == pytest.approx(expected)
    assert alpha([[2, 2, 2], [2, 2, 2]], "ordinal", [0, 1, 2]) is None  # no variation: undefined, not a crash


def test_cohen_kappa_by_hand():
    # observed 3/4; expected: a says x 2/4, b says x 1/4 -> .5*.25 + .5*.75 = .5 ; kappa = (.75-.5)/.5
    assert cohen_kappa(["x", "x", "y", "y"], ["x", "y", "y", "y"]) == pytest.approx(0.5)


def test_judge_vs_humans_a_judge_that_copies_a_consensus_beats_a_contrarian():
    humans = [[0, 1, 2, 2, 1, 0, 2, 1], [0, 1, 2, 2, 1, 0, 2, 2], [0, 1, 2, 1, 1, 0, 2, 1]]
    consensus = [0, 1, 2, 2, 1, 0, 2, 1]
    contrarian = [2, 1, 0, 0, 1, 2, 0, 1]
    good = judge_vs_humans(consensus, humans, [0, 1, 2], bootstrap=50)
    bad = judge_vs_humans(contrarian, humans, [0, 1, 2], bootstrap=50)
    assert good["alpha_judge"] > 0.8 > bad["alpha_judge"]
    assert bad["alpha_judge"] < 0
    assert good["alpha_judge_ci95"][0] <= good["alpha_judge"] <= good["alpha_judge_ci95"][1]
    # by hand: human 1 against the lower median of humans 2 and 3
    pool = [min(a, b) for a, b in zip(humans[1], humans[2])]
    assert good["alpha_each_human"][0] == pytest.approx(alpha([humans[0], pool], "ordinal", [0, 1, 2]))
    assert good["spearman_rho"] > 0.9


def test_agreement_table_perfect_agreement_by_hand():
    table = RatingTable(
        name="t", dimensions=["a", "b"], scale=[1, 2, 3], items=["i1", "i2", "i3"], annotators=["x", "y"],
        values={"a": [[1, 2, 3], [1, 2, 2]], "b": [[3, 3, 3], [3, 1, 3]]},
    )
    r = agreement(table)
    assert r["perfect_agreement_items"] == 1  # only i1 agrees on both dimensions
    assert r["perfect_agreement_by_dimension"] == {"a": pytest.approx(2 / 3), "b": pytest.approx(2 / 3)}
    assert r["perfect_agreement_units"] == pytest.approx(4 / 6)
    pooled = krippendorff.alpha(reliability_data=np.array([[1, 2, 3, 3, 3, 3], [1, 2, 2, 3, 1, 3]], dtype=float), level_of_measurement="ordinal", value_domain=[1, 2, 3])
    assert r["alpha_pooled"] == pytest.approx(pooled)


def test_agreement_humans_on_dialsummeval_matches_the_package():
    path = shared("external/dialsummeval/human_judgment.jsonl")
    result = cli_inproc("agreement-humans", str(path), "--json")
    assert result.returncode == 0, result.stderr
    rep = json.loads(result.stdout)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert rep["items"] == 1400 and rep["annotators"] == 3 and rep["scale"] == [1, 2, 3, 4, 5]
    m = np.array([[row["annotations"][k]["consistency"] for row in rows] for k in range(3)], dtype=float)
    expected = krippendorff.alpha(reliability_data=m, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5])
    assert rep["alpha_by_dimension"]["consistency"] == pytest.approx(expected)


def test_agreement_humans_on_faithbench_infers_consistent_votes():
    table = load_ratings(shared("external/faithbench"))
    assert len(table.items) == 200
    raw = json.loads(shared("external/faithbench/batch_1.json").read_text())["samples"]
    pool = {a["annotator_id"] for s in raw for a in s["annotations"]}
    clean = next(i for i, s in enumerate(raw) if not s["annotations"])
    for k, who in enumerate(table.annotators):
        if who in pool:
            assert table.values["hallucination"][k][clean] == 0  # inferred: reviewed, saw nothing wrong
        else:
            assert table.values["hallucination"][k][clean] is None  # never saw batch 1
    result = cli_inproc("agreement-humans", str(shared("external/faithbench")), "--json")
    rep = json.loads(result.stdout)
    assert rep["items"] == 200 and -1 <= rep["alpha_pooled"] <= 1 and rep["notes"]


def test_agreement_humans_on_the_hebrew_fixture_matches_its_readme():
    result = cli_inproc("agreement-humans", str(shared("he_qa_sample.json")), "--json")
    rep = json.loads(result.stdout)
    expected = json.loads(shared("he_ratings_agreement.json").read_text())["files"]["he_qa_sample.json"]
    assert rep["alpha_pooled"] == pytest.approx(expected["pooled"]["alpha_ordinal"], abs=1e-6)
    assert rep["perfect_agreement_units"] == pytest.approx(expected["pooled"]["perfect_agreement"])
    assert rep["perfect_agreement"] == pytest.approx(expected["perfect_agreement_records"])
