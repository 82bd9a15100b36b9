"""Comparing judges (issue 39.4, 39.5): a panel trusts only the judges that pass their controls (a lenient judge
that fails them is left out, and the panel gives the verdicts of the panel without it), and against gold labels
a good judge is told from a mediocre one by its recall of not-grounded claims, with intervals and McNemar's
test. Scripted judges on one server: good (rule-based), mediocre (numbers only), lenient (always supported)."""

from __future__ import annotations

import json

import pytest
import yaml

from judge.testing.judges import panel_script
from tests.conftest import ROOT, cli_inproc

RECORDS = [json.loads(line) for line in (ROOT / "docs" / "ci" / "grounding" / "calibration.jsonl").read_text().splitlines()]
FAMILIES = {"good": "fam-g", "mediocre": "fam-m", "lenient": "fam-l", "credulous": "fam-c", "writer": "fam-w"}


def answer(i: int, r: dict) -> tuple[str, str]:
    """The recorded answer of record i and its gold label: a wrong year (contradicted) every 4th, another
    town's name (unsupported) every 4th from the 2nd, else the source's first sentence (supported)."""
    first = r["source"].split(". ")[0] + "."
    if i % 4 == 0:
        return first.replace(first[-5:-1], "1952"), "contradicted"
    if i % 4 == 1:
        town = first.split()[1]
        return first.replace(town, "Zanzibar"), "unsupported"
    return first, "supported"


@pytest.fixture(scope="module")
def project(tmp_path_factory, request):
    from judge.testing.server import ScriptedServer

    root = tmp_path_factory.mktemp("trust")
    server = ScriptedServer(panel_script({"good": "good", "mediocre": "mediocre", "lenient": "lenient", "credulous": "lenient"})).start()
    rows = []
    for i, r in enumerate(RECORDS):
        text, label = answer(i, r)
        rows.append({**r, "answer": text, "gold_claims": [{"text": text, "label": label}]})
    (root / "data.jsonl").write_text("".join(json.dumps(x) + "\n" for x in rows))

    def config(name: str, judges: list[str], controls: dict) -> str:
        models = {n: {"model": f"openai/{n}", "api_base": server.base_url, "family": FAMILIES[n], "timeout": 10} for n in judges}
        data = {"name": name, "dataset": {"path": "data.jsonl", "answer_model": "writer"}, "models": models,
                "decompose": {"method": "sentences"}, "adjudicate": {"judges": judges, "triage": False}, "controls": controls,
                "cache_dir": str(root / ".cache")}
        (root / f"{name}.yaml").write_text(yaml.safe_dump(data))
        return str(root / f"{name}.yaml")

    yield root, config
    server.stop()


def _run(root, config: str, code: int = 0) -> tuple[dict, list[dict]]:
    res = cli_inproc("run", config, "--runs-dir", str(root / "runs"), "--json", "--no-progress", cwd=root)
    assert res.returncode == code, res.stdout[-3000:] + res.stderr
    summary = json.loads(res.stdout)
    lines = [json.loads(x) for x in open(f"{summary['run_dir']}/results.jsonl")]
    return summary, lines


def _labels(lines: list[dict]) -> list[str]:
    return [c["label"] for r in lines for a in r["answers"] for c in a["claims"]]


@pytest.mark.slow
def test_a_panel_leaves_out_a_judge_that_fails_its_controls(project):
    # synthetic answers that copy their sources: controls up to half the claims, the run's detector bar lifted
    # (it tells any control from such claims; judge.testing.ci_sim.synthetic says the same)
    root, config = project
    alone, alone_lines = _run(root, config("good-alone", ["good"], {"per_label": 24, "max_share": 0.5, "detector_bar": 1}))
    panel, panel_lines = _run(root, config("panel", ["good", "lenient"], {"per_label": 24, "max_share": 0.5, "detector_bar": 1}))
    health = {j["judge"]: j for j in panel["judge_health"]["judges"]}
    assert health["good"]["status"] == "passed" and health["lenient"]["status"] == "failed" and not health["lenient"]["gated"]
    assert health["lenient"]["verdict"].startswith("EXCLUDED from the panel's verdicts (failed on its controls): misses")
    assert set(panel["panel_excluded"]) == {"lenient"}
    assert _labels(panel_lines) == _labels(alone_lines)  # the verdicts of the panel without it
    assert panel["overall"] == alone["overall"] and panel["overall"]["labels"]["supported"] == 24
    # its own verdicts are kept apart: every claim still carries the lenient judge's (supported) verdict
    assert all(any(v["judge"] == "lenient" and v["label"] == "supported" for v in c["verdicts"])
               for r in panel_lines for a in r["answers"] for c in a["claims"])
    assert panel["by_judge"]["lenient"]["labels"]["supported"] == 48
    # the terminal says so (the same run again, from the cache), and prints no line the user cannot act on
    again = cli_inproc("run", config("panel", ["good", "lenient"], {"per_label": 24, "max_share": 0.5, "detector_bar": 1}), "--runs-dir", str(root / "runs"), "--no-progress",
                    cwd=root, env={"COLUMNS": "250"})
    assert again.returncode == 0 and "lenient: " in again.stdout and "EXCLUDED from the panel's verdicts" in again.stdout, again.stdout[-2000:]
    assert "AUC" not in again.stdout
    assert "left out of the panel: lenient (failed on its controls)" in again.stdout.splitlines()[0], again.stdout[:500]
    page = (root / "runs" / sorted(p.name for p in (root / "runs").iterdir())[-1] / "report.html").read_text()
    assert "EXCLUDED from the panel" in page
    # a panel left with no judge that passes exits 3, as a single failing judge does. (Not with mediocre: on these
    # records every unsupported control is an added year, which a judge of numbers calls contradicted, and that
    # counts as caught; a numbers-only judge passes controls that hold no other kind: see judge_health.by_kind.)
    only_bad, _ = _run(root, config("bad-panel", ["lenient", "credulous"], {"per_label": 24, "max_share": 0.5, "detector_bar": 1}), code=3)
    assert "panel_excluded" not in only_bad and {j["status"] for j in only_bad["judge_health"]["judges"]} == {"failed"}


def test_judges_against_gold_tell_good_from_mediocre_by_recall_of_not_grounded_claims(project):
    root, config = project
    summary, _ = _run(root, config("gold", ["good", "mediocre"], {"enabled": False}))
    res = cli_inproc("score", summary["run_dir"], "--json")
    assert res.returncode == 0, res.stderr
    vs = {j["judge"]: j for j in json.loads(res.stdout)["judges_vs_gold"]["judges"]}
    good, mediocre = vs["good"]["not_grounded_recall"], vs["mediocre"]["not_grounded_recall"]
    assert (good["k"], good["n"]) == (24, 24) and (mediocre["k"], mediocre["n"]) == (12, 24)
    assert good["ci95"][0] > mediocre["ci95"][1]  # the intervals do not overlap: told apart, not by chance
    assert vs["good"]["flag_precision"]["value"] == 1.0 and vs["good"]["accuracy"]["ci95"] is not None
    assert vs["good"]["kappa"] > vs["mediocre"]["kappa"] and vs["good"]["kappa_ci95"] and vs["good"]["macro_f1_ci95"]
    assert vs["mediocre"]["recall_by_label"]["unsupported"]["k"] == 0
    (pair,) = json.loads(res.stdout)["judges_vs_gold"]["pairs"]
    assert {pair["a"], pair["b"]} == {"good", "mediocre"} and pair["better"] == "good" and pair["p_value"] < 0.001
    text = cli_inproc("score", summary["run_dir"], env={"COLUMNS": "250"}).stdout
    assert "not-grounded recall" in text and "1.000 [0.86, 1.00] (24/24)" in text and "0.500 [0.29, 0.71] (12/24)" in text
    # the disagreement list shows the gold label
    rep = json.loads(cli_inproc("agreement", summary["run_dir"], "--json", "--out", str(root / "agreement.json")).stdout)
    assert rep["disagreements"] and all(d["gold"] == "unsupported" for d in rep["disagreements"])
