"""Regression gates, flips, judge agreement across families, and the pytest plugin in a user's project."""

import json
from pathlib import Path

import krippendorff
import numpy as np
import pytest
import yaml

from judge.verdicts import LABELS
from judge.testing.scripts import claim_text, pipeline_model
from tests.conftest import BUNDLED_SAMPLE, ROOT, cli_inproc, tree_digest

BUNDLED_ANSWERS = ROOT / "judge" / "data" / "he_sample_answers.jsonl"


def config_with_judge(tmp_path: Path, server, name: str, judge_model: str, family: str, judges=None) -> Path:
    config = {
        "name": name,
        "dataset": {"path": str(BUNDLED_SAMPLE)},
        "answers": {"path": str(BUNDLED_ANSWERS)},
        "models": {judge_model: {"model": f"openai/{judge_model}", "api_base": server.base_url, "family": family, "timeout": 3}},
        "decompose": {"method": "sentences"},
        "adjudicate": {"judges": judges or [judge_model], "triage": False},
        "cache_dir": str(tmp_path / f"cache-{name}"),
        "controls": {"gate": False},  # scripted judges that call most claims supported: not a test of controls
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True))
    return path


def run(config: Path, tmp_path: Path) -> str:
    result = cli_inproc("run", str(config), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["run_dir"]


def labeller(rule):
    """A scripted judge whose label depends on the claim text: rule(text) -> label."""
    return pipeline_model(lambda cid, req: rule(claim_text(req, cid)))


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory):
    """A baseline (all supported), a regression (all unsupported), a near-copy (one claim flipped). Built once for
    the module: the tests only read these runs (a test that writes works on its own copy)."""
    from judge.testing.server import ScriptedServer

    tmp_path = tmp_path_factory.mktemp("three_runs")

    def judged(rule, name: str) -> str:
        server = ScriptedServer(labeller(rule)).start()
        try:
            return run(config_with_judge(tmp_path, server, name, "judge-x", "fam-x"), tmp_path)
        finally:
            server.stop()

    base = judged(lambda t: "supported", "base")
    worse = judged(lambda t: "unsupported", "worse")
    flip_text = "קו המטרונית החדש בחיפה יפעל כל 10 דקות בשעות השיא."
    near = judged(lambda t: "contradicted" if t == flip_text else "supported", "near")
    before = tree_digest(base, worse, near)
    yield base, worse, near, flip_text
    assert tree_digest(base, worse, near) == before, "a test wrote into a shared run"


def test_gate_fails_on_a_real_regression_and_passes_otherwise(three_runs):
    base, worse, near, flip_text = three_runs
    regression = cli_inproc("compare", base, worse, "--gate", "faithfulness:0.05", "--json")
    assert regression.returncode == 1
    out = json.loads(regression.stdout)
    assert out["metrics"]["faithfulness"]["delta"] == pytest.approx(-1.0)
    assert out["gates"][0]["failed"]
    same = cli_inproc("compare", base, base, "--gate", "faithfulness:0.05", "--gate", "hallucination_rate:0.05", "--json")
    assert same.returncode == 0 and json.loads(same.stdout)["flips"] == []
    noise = cli_inproc("compare", base, near, "--gate", "faithfulness:0.01", "--json")
    out = json.loads(noise.stdout)
    drop = -out["metrics"]["faithfulness"]["delta"]
    assert drop > 0.01  # bigger than the threshold...
    assert out["metrics"]["faithfulness"]["ci95"][1] >= 0  # ...and the interval includes zero: one flip in 3 records
    # which is never "within noise": no sign test can decide on 3 records, so the claim-level gate does (issue 26)
    gate = out["gates"][0]
    assert noise.returncode == 1 and gate["failed"] and gate["decided_by"] == "claims" and "within noise" not in gate["why"]
    assert "too few records to tell (3 records, 1 changed" in gate["why"] and "the claim-level gate new_not_grounded:0 decides" in gate["why"]
    allowed = json.loads(cli_inproc("compare", base, near, "--gate", "faithfulness:0.01", "--gate", "new_not_grounded:1", "--json").stdout)
    assert not allowed["failed"] and [g["decided_by"] for g in allowed["gates"][:1]] == ["claims"]
    flips = out["flips"]
    assert [(f["claim"], f["a"], f["b"]) for f in flips] == [(flip_text, "supported", "contradicted")]


def test_flips_are_listed_exactly(three_runs):
    base, worse, _, _ = three_runs
    out = json.loads(cli_inproc("compare", base, worse, "--json").stdout)
    results = [json.loads(line) for line in Path(base, "results.jsonl").read_text().splitlines()]
    expected = sorted(c["text"] for r in results for a in r["answers"] for c in a["claims"])
    assert sorted(f["claim"] for f in out["flips"]) == expected
    assert {(f["a"], f["b"]) for f in out["flips"]} == {("supported", "unsupported")}


def test_runs_over_different_records_compare_the_intersection(three_runs, tmp_path):
    base, worse, _, _ = three_runs
    cut = tmp_path / "cut"
    cut.mkdir()
    for name in ("config.yaml", "run.json"):
        (cut / name).write_text(Path(worse, name).read_text())
    lines = Path(worse, "results.jsonl").read_text().splitlines()
    (cut / "results.jsonl").write_text(lines[0] + "\n")
    out = json.loads(cli_inproc("compare", base, str(cut), "--json").stdout)
    assert out["records_compared"] == 1 and len(out["records_only_in_a"]) == 2 and "different records" in out["note"]


def test_run_with_baseline_and_gate_in_one_command(three_runs, scripted_server, tmp_path):
    base, _, _, _ = three_runs
    config = config_with_judge(tmp_path, scripted_server(labeller(lambda t: "unsupported")), "again", "judge-y", "fam-y")
    result = cli_inproc("run", str(config), "--runs-dir", str(tmp_path / "runs"), "--no-progress", "--baseline", base, "--gate", "faithfulness:0.1")
    assert result.returncode == 1 and "FAIL faithfulness" in result.stdout
    # B's judge asked about A's claims would have erased the drop its own verdicts made: another judge is not re-asked
    assert "not re-asked: the runs were judged by different judges" in result.stdout
    result = cli_inproc("run", str(config), "--runs-dir", str(tmp_path / "runs"), "--no-progress", "--baseline", base, "--gate", "bogus:1")
    assert result.returncode == 2 and "METRIC:MAX_DROP" in result.stderr


def _independent_kappa(a, b):
    labels = sorted(set(a) | set(b))
    n = len(a)
    m = np.zeros((len(labels), len(labels)))
    for x, y in zip(a, b):
        m[labels.index(x), labels.index(y)] += 1
    po = np.trace(m) / n
    pe = (m.sum(axis=1) * m.sum(axis=0)).sum() / n / n
    return (po - pe) / (1 - pe)


def two_judge_panel(tmp_path: Path, server, name: str, answers: Path, adjudicate: dict) -> Path:
    """A config with two scripted judges of families fam-b and fam-c over the bundled sample."""
    config = {
        "name": name,
        "dataset": {"path": str(BUNDLED_SAMPLE)},
        "answers": {"path": str(answers)},
        "models": {
            "judge-b": {"model": "openai/judge-b", "api_base": server.base_url, "family": "fam-b", "timeout": 3},
            "judge-c": {"model": "openai/judge-c", "api_base": server.base_url, "family": "fam-c", "timeout": 3},
        },
        "decompose": {"method": "sentences"},
        "adjudicate": adjudicate,
        "cache_dir": str(tmp_path / "cache"),
        "controls": {"gate": False},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True))
    return path


def test_judge_agreement_across_families_against_reference_implementations(scripted_server, tmp_path):
    rule_b = lambda t: "unsupported" if "5" in t or "2019" in t else "supported"  # noqa: E731
    rule_c = lambda t: "contradicted" if "2,000" in t or "5 דקות" in t else "supported"  # noqa: E731
    server = scripted_server(pipeline_model(lambda cid, req: (rule_b if "openai/judge-b" in req["model"] or req["model"] == "judge-b" else rule_c)(claim_text(req, cid))))
    path = two_judge_panel(tmp_path, server, "panel", BUNDLED_ANSWERS, {"judges": ["judge-b", "judge-c", "deterministic"], "triage": False})
    run_dir = run(path, tmp_path)
    result = cli_inproc("agreement", run_dir, "--json")
    assert result.returncode == 0, result.stderr
    rep = json.loads(result.stdout)
    assert rep["judges"] == ["deterministic", "judge-b", "judge-c"]
    results = [json.loads(line) for line in Path(run_dir, "results.jsonl").read_text().splitlines()]
    claims = [c for r in results for a in r["answers"] for c in a["claims"]]
    b = [next(v["label"] for v in c["verdicts"] if v["judge"] == "judge-b") for c in claims]
    c_ = [next(v["label"] for v in c["verdicts"] if v["judge"] == "judge-c") for c in claims]
    pair = next(p for p in rep["pairwise"] if (p["a"], p["b"]) == ("judge-b", "judge-c"))
    assert pair["claims"] == len(claims)
    assert pair["cohen_kappa"] == pytest.approx(_independent_kappa(b, c_))
    codes = {lbl: i for i, lbl in enumerate(LABELS)}
    expected_alpha = krippendorff.alpha(reliability_data=np.array([[codes[x] for x in b], [codes[x] for x in c_]], dtype=float), level_of_measurement="nominal", value_domain=list(range(4)))
    assert pair["alpha_nominal"] == pytest.approx(expected_alpha)
    per = rep["per_judge"]
    assert per["judge-b"]["family"] == "fam-b" and per["judge-b"]["calls"] == 6 and per["judge-b"]["mean_latency_s"] > 0
    assert per["judge-b"]["vs_gold"]["n"] == 13
    page = Path(run_dir, f"agreement-{Path(run_dir).name}.html")
    assert page.exists() and "<svg" in page.read_text()
    assert "Agreement between judges" in Path(run_dir, "report.html").read_text()


def test_self_preference_compares_own_family_answers_with_other_judges(scripted_server, tmp_path):
    answers = tmp_path / "answers.jsonl"
    records = json.loads(BUNDLED_SAMPLE.read_text(encoding="utf-8"))
    answers.write_text("".join(json.dumps({"record_id": r["id"], "model": "writer-b", "family": "fam-b", "answer": r["reference_answer"]}, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    server = scripted_server(pipeline_model(lambda cid, req: "supported" if req["model"] == "judge-b" else "unsupported"))
    path = two_judge_panel(tmp_path, server, "selfpref", answers, {"judges": ["judge-b", "judge-c"], "triage": False, "allow_same_family": True})
    run_dir = run(path, tmp_path)
    rep = json.loads(cli_inproc("agreement", run_dir, "--json").stdout)
    pref = {p["judge"]: p for p in rep["self_preference"]}
    assert pref["judge-b"]["own_family_answers"] == 3
    assert pref["judge-b"]["self_preference"] == pytest.approx(1.0)  # it gives its own family 1.0, the other judge 0.0
    assert pref["judge-c"]["own_family_answers"] == 0


def test_the_pytest_plugin_from_a_users_project(pytester):
    config = pytester.path / "grounding.yaml"
    config.write_text(
        f"name: users-prompt\ndataset: {{path: {BUNDLED_SAMPLE}}}\nanswers: {{path: {BUNDLED_ANSWERS}}}\n"
        f"decompose: {{method: sentences}}\nadjudicate: {{judges: [deterministic]}}\ncache_dir: {pytester.path / 'cache'}\n"
    )
    pytester.makepyfile(
        test_prompts=f"""
        import pytest
        from judge.pytest_plugin import GroundingError, assert_grounded

        def test_grounded_enough(judge_grounding):
            run = judge_grounding.run({str(config)!r})
            overall = judge_grounding.assert_grounded(run, min_faithfulness=0.05)  # overall and each model (hallucinator 0.07 since the Hebrew profile applies)
            assert overall["claims"] == 13

        def test_too_strict_fails(judge_grounding):
            run = judge_grounding.run({str(config)!r})
            with pytest.raises(GroundingError, match="faithfulness"):
                assert_grounded(run, min_faithfulness=0.99)

        def test_no_regression_against_itself(judge_grounding):
            base = judge_grounding.run({str(config)!r})
            judge_grounding.assert_no_regression({str(config)!r}, baseline=base, gates=["faithfulness:0.0"])
        """
    )
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
