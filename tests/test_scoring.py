"""judge score on real runs: gold labels, evidence, humans; reports written."""

import json
from pathlib import Path

import pytest

from judge.datasets import load
from tests.conftest import ROOT, cli_inproc, shared

BUNDLED_ANSWERS = ROOT / "judge" / "data" / "he_sample_answers.jsonl"


def _run(config: Path, runs: Path) -> dict:
    result = cli_inproc("run", str(config), "--runs-dir", str(runs), "--json", "--no-progress")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_score_against_gold_labels_and_spans_recounted_independently(tmp_path):
    summary = _run(ROOT / "configs" / "deterministic.yaml", tmp_path / "runs")
    run_dir = Path(summary["run_dir"])
    for name in ("scores.json", "report.md", "report.html"):
        assert (run_dir / name).exists()
    result = cli_inproc("score", str(run_dir), "--json")
    assert result.returncode == 0, result.stderr
    scores = json.loads(result.stdout)
    answers = load(BUNDLED_ANSWERS, "answers")
    results = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    gold, predicted = [], []
    for r in results:
        for a in r["answers"]:
            g = next(x for x in answers if x.record_id == r["record_id"] and x.model == a["model"])
            assert [c["text"] for c in a["claims"]] == [c.text for c in g.gold_claims]  # sentences == gold claims here
            gold += [c.label for c in g.gold_claims]
            predicted += [c["label"] for c in a["claims"]]
    panel = scores["gold_labels"]["panel"]
    assert panel["n"] == len(gold) == 13
    assert panel["accuracy"] == pytest.approx(sum(x == y for x, y in zip(gold, predicted)) / len(gold))
    assert sum(sum(row.values()) for row in panel["confusion"].values()) == 13
    assert scores["claim_matching"] == {"predicted": 0, "gold": 0, "matched": 13}
    ev = scores["evidence"]
    assert ev["claims"] == 11 and 0 <= ev["precision"] <= 1 and 0 <= ev["recall"] <= 1 and 0 <= ev["sentence_hit_rate"] <= 1
    assert "reason" in scores["human"]  # recorded model answers were never rated by humans
    md = (run_dir / "report.md").read_text()
    assert "Against gold claim labels" in md and "| panel |" in md


def test_judging_reference_answers_compares_the_judge_with_human_raters(tmp_path):
    data = shared("he_qa_sample.json")
    config = tmp_path / "ref.yaml"
    config.write_text(
        f"name: ref\ndataset: {{path: {data}}}\nanswers: {{reference: true}}\ndecompose: {{method: sentences}}\n"
        f"adjudicate: {{judges: [deterministic]}}\ncache_dir: {tmp_path / 'cache'}\n"
    )
    summary = _run(config, tmp_path / "runs")
    scores = json.loads((Path(summary["run_dir"]) / "scores.json").read_text())
    for dim in ("faithfulness", "attribution"):
        h = scores["human"][dim]
        assert h["items"] == 16
        assert -1 <= h["alpha_judge"] <= 1 and h["alpha_judge_ci95"][0] <= h["alpha_judge_ci95"][1]
        assert h["alpha_human_ceiling"] is not None and len(h["alpha_each_human"]) == 4
    assert scores["evidence"]["claims"] == 42  # every reference claim has gold attribution spans
    assert set(scores["by_genre"]) == {"dialogue", "encyclopedic", "journalistic"}
