"""Models compared in one run (issue 39.3): per model under test, rates with 95% bootstrap intervals; every pair on
the same records (paired difference with its interval, sign test); a ranking that says where models are tied;
first in the terminal, report.md and report.html; and `judge compare --model-a/--model-b` across runs or within
one, with no claim diff. A scripted writer plays two models: `alpha` copies its source, `beta` states a wrong
year in half of its answers; a rule-based scripted judge rules."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
import yaml

from judge.testing.judges import panel_script
from judge.testing.scripts import user_text
from judge.testing.server import Reply, ScriptedServer
from tests.conftest import ROOT, cli_inproc

# the CI recipe's records without their recorded answers and gold (the two models under test answer them)
RECORDS = [{k: r[k] for k in ("id", "question", "source") if k in r}
           for r in map(json.loads, (ROOT / "docs" / "ci" / "grounding" / "calibration.jsonl").read_text().splitlines()[:20])]
WRONG_FOR_BETA = {r["id"] for r in RECORDS[::2]}


def writer(request: dict, n: int) -> Reply:
    text = user_text(request)
    rid = re.search(r'<source id="([^"]*)">', text).group(1)
    source = html.unescape(re.search(r"<source[^>]*>(.*?)</source>", text, re.S).group(1)).strip()
    if request.get("model") == "beta" and rid in WRONG_FOR_BETA:
        return Reply(body={"answer": "It opened in 1952."})
    return Reply(body={"answer": source.split(". ")[0] + "."})


@pytest.fixture(scope="module")
def two_models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    server = ScriptedServer(panel_script({"checker": "good"}, writer=writer)).start()
    (root / "data.jsonl").write_text("".join(json.dumps({**r, "source": r["source"]}) + "\n" for r in RECORDS))
    models = {name: {"model": f"openai/{name}", "api_base": server.base_url, "family": fam, "timeout": 10}
              for name, fam in (("alpha", "fam-a"), ("beta", "fam-b"), ("checker", "fam-j"))}
    config = {"name": "two", "dataset": {"path": "data.jsonl"}, "models": models, "generate": {"models": ["alpha", "beta"]},
              "decompose": {"method": "sentences"}, "adjudicate": {"judges": ["checker"], "triage": False},
              "controls": {"enabled": False}, "cache_dir": str(root / ".cache")}
    (root / "two.yaml").write_text(yaml.safe_dump(config))
    result = cli_inproc("run", str(root / "two.yaml"), "--runs-dir", str(root / "runs"), "--no-progress", cwd=root, env={"COLUMNS": "250"})
    yield root, result
    server.stop()


def test_a_two_model_run_leads_with_both_models_rates_intervals_and_their_paired_difference(two_models):
    root, result = two_models
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    out = result.stdout
    (run_dir,) = (root / "runs").iterdir()
    scores = json.loads((run_dir / "scores.json").read_text())
    cmp = scores["model_comparison"]
    rates = {m["model"]: m for m in cmp["models"]}
    assert rates["alpha"]["faithfulness"] == 1.0 and rates["beta"]["faithfulness"] == 0.5
    lo, hi = rates["beta"]["faithfulness_ci95"]
    assert lo < 0.5 < hi and hi < 1.0  # an interval, and one that excludes alpha's rate
    (pair,) = cmp["pairs"]
    f = pair["metrics"]["faithfulness"]
    assert pair["records"] == 20 and f["delta"] == pytest.approx(-0.5) and f["a_better"] == 10 and f["b_better"] == 0
    assert f["p_value"] == pytest.approx(2 / 2**10, abs=1e-6) and f["verdict"] == "A better" and f["ci95"][1] < 0
    assert [r["model"] for r in cmp["ranking"]] == ["alpha", "beta"] and [r["rank"] for r in cmp["ranking"]] == [1, 2]
    # the terminal as the reports: the not-grounded claims first (issue 46.1), then the comparison, then the by-model table
    at = out.index("Models under test compared on the same records")
    assert out.index("not grounded") < at < out.index("model under test")
    assert "0.500 [" in out and "alpha vs beta" in out and "A better" in out
    # no price known for the scripted models: said once, for all of them, with what to do
    assert out.count("no price known") == 1 and "openai/alpha, openai/beta, openai/checker" in out and "input_per_million" in out
    # report.md and report.html lead with the claims (issue 40.4), then the comparison leads the summary sections
    md = (run_dir / "report.md").read_text()
    assert md.index("It opened in 1952") < md.index("## Models under test compared") < md.index("## Verdicts by model under test")
    page = (run_dir / "report.html").read_text()
    assert page.index("It opened in 1952") < page.index("Models under test compared") < page.index("Verdicts by model under test")


def test_compare_two_models_of_one_run_without_claim_noise(two_models):
    root, _ = two_models
    (run_dir,) = (root / "runs").iterdir()
    res = cli_inproc("compare", str(run_dir), str(run_dir), "--model-a", "alpha", "--model-b", "beta", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["pair"]["records"] == 20 and out["pair"]["metrics"]["faithfulness"]["verdict"] == "A better"
    assert "claims" not in out and "flips" not in out  # a model comparison, no claim diff
    same = json.loads(cli_inproc("compare", str(run_dir), str(run_dir), "--model-a", "alpha", "--model-b", "alpha", "--json").stdout)
    assert same["pair"]["metrics"]["faithfulness"]["verdict"] == "tied" and same["pair"]["metrics"]["faithfulness"]["delta"] == 0
    text = cli_inproc("compare", str(run_dir), str(run_dir), "--model-a", "alpha", "--model-b", "beta", "--md", str(root / "m.md"), env={"COLUMNS": "250"})
    assert "alpha vs beta" in text.stdout and "alpha vs beta" in (root / "m.md").read_text()
    bad = cli_inproc("compare", str(run_dir), str(run_dir), "--model-a", "alpha", "--model-b", "gamma")
    assert bad.returncode == 2 and "no answer of model 'gamma' (its models under test: alpha, beta)" in bad.stderr
    assert cli_inproc("compare", str(run_dir), str(run_dir), "--model-a", "alpha").returncode == 2


def test_ranking_says_where_models_are_tied():
    from judge.scoring.models import comparison

    same = {f"r{i}": (1.0, 1, 0) for i in range(10)}
    worse_once = {**same, "r0": (0.0, 1, 1)}
    much_worse = {f"r{i}": (0.0, 1, 1) for i in range(10)}
    got = comparison({"a": same, "b": worse_once, "c": much_worse})
    ranks = {r.model: (r.rank, r.tied_with) for r in got.ranking}
    assert ranks["a"] == (1, ["b"]) and ranks["b"][0] == 1 and ranks["c"][0] == 3  # a and b cannot be told apart on one record


def test_one_flag_names_the_models_file_across_commands():
    models = str(ROOT / "configs" / "models.yaml")
    new = cli_inproc("families", "--json", "--models", models)
    old = cli_inproc("families", "--json", "--config", models)  # the old name, kept working, hidden from --help
    assert new.returncode == 0 and json.loads(new.stdout)["models"] == json.loads(old.stdout)["models"]
    helps = cli_inproc("families", "--help", env={"COLUMNS": "200"}).stdout
    assert "--models" in helps and "--config" not in helps
    assert cli_inproc("families", "--models", models, "--config", models).returncode == 2


def test_never_tied_beside_an_interval_that_excludes_zero():
    """Five records, each worse for b: the paired interval excludes 0 while the sign test (p = 2/32) cannot tell;
    the verdict says the two disagree ("unclear"), never "tied", and the pair still shares a rank. With both
    telling them apart it is "A better"; with neither, "tied" (issue 49.4)."""
    from judge.scoring.models import comparison

    good = {f"r{i}": (1.0, 1, 0) for i in range(5)}
    bad = {f"r{i}": (0.0, 1, 1) for i in range(5)}
    got = comparison({"a": good, "b": bad})
    (pair,) = got.pairs
    for metric in ("faithfulness", "hallucination_rate"):
        m = pair.metrics[metric]
        assert m.ci95 is not None and not (m.ci95[0] <= 0 <= m.ci95[1]) and m.p_value >= 0.05, m
        assert m.verdict == "unclear", m
    assert [r.rank for r in got.ranking] == [1, 1]
    many = comparison({"a": {f"r{i}": (1.0, 1, 0) for i in range(10)}, "b": {f"r{i}": (0.0, 1, 1) for i in range(10)}})
    assert many.pairs[0].metrics["faithfulness"].verdict == "A better" and [r.rank for r in many.ranking] == [1, 2]
    assert many.pairs[0].metrics["hallucination_rate"].verdict == "A better"  # lower is better there: b hallucinates
    same = comparison({"a": good, "b": dict(good)})
    assert same.pairs[0].metrics["faithfulness"].verdict == "tied"
    # whatever the data, no verdict reads "tied" beside an interval that excludes 0
    import random

    rng = random.Random(7)
    seen = set()
    for _ in range(200):
        n = rng.randint(2, 12)
        a = {f"r{i}": (1.0, 1, 0) if rng.random() < 0.8 else (0.0, 1, 1) for i in range(n)}
        b = {f"r{i}": (1.0, 1, 0) if rng.random() < 0.3 else (0.0, 1, 1) for i in range(n)}
        for metric, m in comparison({"a": a, "b": b}).pairs[0].metrics.items():
            if m.verdict == "tied":
                assert m.ci95 is None or m.ci95[0] <= 0 <= m.ci95[1], m
            if m.verdict in ("A better", "B better"):
                b_up = m.ci95[0] > 0  # B - A above 0
                assert m.p_value < 0.05 and not (m.ci95[0] <= 0 <= m.ci95[1]), m
                assert (m.verdict == "B better") == (b_up == (metric == "faithfulness")), (metric, m)
        seen.update(m.verdict for m in comparison({"a": a, "b": b}).pairs[0].metrics.values())
    assert {"A better", "tied", "unclear"} <= seen, seen
