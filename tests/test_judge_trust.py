"""Judge trust (issues 39.4, 39.5, 44): a judge is trusted by its calibration on labelled real claims, and the
controls are a canary. Through the CLI with scripted judges on one server (good: rule-based; mediocre: numbers
only; lenient: always supported): the honest judge is calibrated on the shipped labelled set and shown so on
every run's first line; the lenient one is shown by the same calibration to miss real errors and refused
where the config says require: calibrated; no honest run exits 3 for want of controls; a panel goes on
without a judge that fails the canary or whose calibration shows it misses real errors; and against gold
labels a good judge is told from a mediocre one by its recall of not-grounded claims, with intervals and
McNemar's test."""

from __future__ import annotations

import json

import pytest
import yaml

from judge.testing.judges import panel_script
from tests.conftest import ROOT, cli_inproc

RECORDS = [json.loads(line) for line in (ROOT / "docs" / "ci" / "grounding" / "calibration.jsonl").read_text().splitlines()]
STARTER = ROOT / "judge" / "data" / "calibration" / "en.jsonl"  # the shipped labelled set: these records, these answers
FAMILIES = {"good": "fam-g", "mediocre": "fam-m", "lenient": "fam-l", "credulous": "fam-c", "alarmist": "fam-a", "writer": "fam-w"}


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
    server = ScriptedServer(panel_script({"good": "good", "mediocre": "mediocre", "lenient": "lenient", "credulous": "lenient",
                                           "alarmist": lambda claim, passages: "unsupported"})).start()
    rows = []
    for i, r in enumerate(RECORDS):
        text, label = answer(i, r)
        rows.append({**r, "answer": text, "gold_claims": [{"text": text, "label": label}]})
    (root / "data.jsonl").write_text("".join(json.dumps(x) + "\n" for x in rows))

    def config(name: str, judges: list[str], controls: dict, **extra) -> str:
        models = {n: {"model": f"openai/{n}", "api_base": server.base_url, "family": FAMILIES[n], "timeout": 10} for n in judges}
        data = {"name": name, "dataset": {"path": "data.jsonl", "answer_model": "writer"}, "models": models,
                "decompose": {"method": "sentences"}, "adjudicate": {"judges": judges, "triage": False}, "controls": controls,
                "cache_dir": str(root / ".cache"), **extra}
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
    # synthetic answers that copy their sources, controls up to half the claims: the lenient judge finds none of
    # its planted errors (plainly broken) and is left out; the good one caught planted errors, and that is all
    # the first line says of the canary
    root, config = project
    alone, alone_lines = _run(root, config("good-alone", ["good"], {"per_label": 24, "max_share": 0.5}))
    panel, panel_lines = _run(root, config("panel", ["good", "lenient"], {"per_label": 24, "max_share": 0.5}))
    health = {j["judge"]: j for j in panel["judge_health"]["judges"]}
    assert health["good"]["status"] == "passed" and health["lenient"]["status"] == "failed" and not health["lenient"]["gated"]
    assert health["good"]["verdict"].startswith("caught planted errors: caught ") and "(a canary, not a measure" in health["good"]["verdict"]
    assert health["lenient"]["verdict"].startswith("EXCLUDED from the panel's verdicts (failed the canary: misses")
    assert set(panel["panel_excluded"]) == {"lenient"}
    assert _labels(panel_lines) == _labels(alone_lines)  # the verdicts of the panel without it
    assert panel["overall"] == alone["overall"] and panel["overall"]["labels"]["supported"] == 24
    # its own verdicts are kept apart: every claim still carries the lenient judge's (supported) verdict
    assert all(any(v["judge"] == "lenient" and v["label"] == "supported" for v in c["verdicts"])
               for r in panel_lines for a in r["answers"] for c in a["claims"])
    assert panel["by_judge"]["lenient"]["labels"]["supported"] == 48
    # the terminal says so (the same run again, from the cache), and prints no line the user cannot act on
    again = cli_inproc("run", config("panel", ["good", "lenient"], {"per_label": 24, "max_share": 0.5}), "--runs-dir", str(root / "runs"), "--no-progress",
                       cwd=root, env={"COLUMNS": "250"})
    assert again.returncode == 0 and "lenient: " in again.stdout and "EXCLUDED from the panel's verdicts" in again.stdout, again.stdout[-2000:]
    assert "AUC" not in again.stdout and "trustworth" not in again.stdout.lower() and "verified" not in again.stdout.splitlines()[0]
    first = again.stdout.splitlines()[0]
    assert "left out of the panel: lenient (failed the canary)" in first and "good NOT CALIBRATED" in first, again.stdout[:500]
    page = (root / "runs" / sorted(p.name for p in (root / "runs").iterdir())[-1] / "report.html").read_text()
    assert "EXCLUDED from the panel" in page
    # a panel left with no judge that passes exits 3, as a single failing judge does
    only_bad, _ = _run(root, config("bad-panel", ["lenient", "credulous"], {"per_label": 24, "max_share": 0.5}), code=3)
    assert "panel_excluded" not in only_bad and {j["status"] for j in only_bad["judge_health"]["judges"]} == {"failed"}


def _calibrate(root, config: str, out: str, *extra: str, code: int = 0) -> dict:
    res = cli_inproc("calibrate", config, "--dataset", str(STARTER), "--out", str(root / out), "--runs-dir", str(root / "cal-runs"),
                     "--no-progress", "--json", *extra, cwd=root)
    assert res.returncode == code, res.stdout[-3000:] + res.stderr
    return json.loads(res.stdout) if code == 0 else {}


def test_an_honest_judge_is_calibrated_on_labelled_claims_and_trusted_with_no_control_to_spare(project):
    """Issue 44: the good judge, calibrated on the shipped labelled set (48 real claims, 24 not grounded):
    recall 24/24 with its exact interval, no flag on a grounded claim, balanced accuracy 1 on answers; a run of
    ten records with the default canary (too few controls to tell) exits 0 and its first line is the
    calibration's, even with require: calibrated."""
    root, config = project
    cal = _calibrate(root, config("cal-good", ["good"], {}), "good.json")
    good = cal["judges"]["good"]
    assert (good["not_grounded_recall"]["k"], good["not_grounded_recall"]["n"]) == (24, 24) and good["not_grounded_recall"]["ci95"][0] > 0.85
    assert good["noise"]["k"] == 0 and good["noise_floor"] < 0.15 and good["more_wanted"] == 0 and good["balanced_accuracy"] == 1.0
    assert good["recall"]["contradicted"]["k"] == 12 and good["precision"]["supported"]["value"] == 1.0
    assert cal["origin"] == "gold labels of en.jsonl" and cal["floors"]["good"] == good["noise_floor"]
    small = root / "small.jsonl"
    small.write_text("".join(line + "\n" for line in (root / "data.jsonl").read_text().splitlines()[:10]))
    cfg = config("run-good", ["good"], {}, calibration=str(root / "good.json"), require="calibrated")
    text = yaml.safe_load(open(cfg))
    text["dataset"]["path"] = str(small)
    open(cfg, "w").write(yaml.safe_dump(text))
    res = cli_inproc("run", cfg, "--runs-dir", str(root / "runs"), "--no-progress", cwd=root, env={"COLUMNS": "250"})
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr
    first = res.stdout.splitlines()[0]
    assert first.startswith("good calibrated on 48 labelled claims: not-grounded recall 24/24 [0.86, 1.00] (good.json: gold labels of en.jsonl)"), first
    assert "verified" not in first.lower() and "trustworth" not in first.lower()
    summary = json.loads(cli_inproc("run", cfg, "--runs-dir", str(root / "runs"), "--json", "--no-progress", cwd=root).stdout)
    (h,) = [j for j in summary["judge_health"]["judges"] if j["judge"] == "good"]
    assert h["status"] in ("unchecked", "passed") and summary["judge_calibration"]["adopted"] == ["good"]


def test_an_uncalibrated_judge_says_so_in_one_line_and_passes_unless_calibration_is_required(project):
    root, config = project
    res = cli_inproc("run", config("plain-good", ["good"], {}), "--runs-dir", str(root / "runs"), "--no-progress", cwd=root, env={"COLUMNS": "250"})
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr
    assert "good NOT CALIBRATED (no calibration: in the config" in res.stdout.splitlines()[0]
    strict = cli_inproc("run", config("strict-good", ["good"], {}, require="calibrated"), "--runs-dir", str(root / "runs"), "--no-progress", cwd=root)
    assert strict.returncode == 3 and "judge good refused (require: calibrated): not calibrated" in strict.stderr, strict.stderr
    bad = cli_inproc("run", config("bad-require", ["good"], {}, require="verified"), "--runs-dir", str(root / "runs"), cwd=root)
    assert bad.returncode == 2 and "require" in bad.stderr


def test_a_lenient_judge_is_shown_by_its_calibration_to_miss_real_errors_and_refused(project):
    """The same calibration shows the lenient judge's not-grounded recall 0/24 (upper bound below 0.5); a run
    that requires a calibrated judge refuses it (exit 3) whatever its controls; a panel leaves it out by its
    calibration, controls off."""
    root, config = project
    cal = _calibrate(root, config("cal-lenient", ["lenient"], {"enabled": False}), "lenient.json")
    r = cal["judges"]["lenient"]["not_grounded_recall"]
    assert (r["k"], r["n"]) == (0, 24) and r["ci95"][1] < 0.5
    res = cli_inproc("run", config("run-lenient", ["lenient"], {"enabled": False}, calibration=str(root / "lenient.json"), require="calibrated"),
                     "--runs-dir", str(root / "runs"), "--no-progress", cwd=root)
    assert res.returncode == 3 and "judge lenient refused (require: calibrated): misses real errors: not-grounded recall 0/24" in res.stderr, res.stderr
    both = _calibrate(root, config("cal-panel", ["good", "lenient"], {"enabled": False}), "panel.json")
    assert set(both["judges"]) == {"good", "lenient"}
    panel, lines = _run(root, config("run-panel", ["good", "lenient"], {"enabled": False}, calibration=str(root / "panel.json")))
    assert set(panel["panel_excluded"]) == {"lenient"} and "misses real errors" in panel["panel_excluded"]["lenient"]
    assert panel["overall"]["labels"]["supported"] == 24  # the good judge's verdicts


def test_a_judge_that_flags_everything_is_shown_unfit_and_refused(project):
    """A judge that calls every claim unsupported finds every real error (recall 24/24) and hides every
    regression (a claim broken by a pull request was flagged already): its calibration's noise, 24/24 grounded
    claims flagged, is surely above one half, so require: calibrated refuses it and a panel leaves it out."""
    root, config = project
    cal = _calibrate(root, config("cal-alarmist", ["alarmist"], {"enabled": False}), "alarmist.json")
    j = cal["judges"]["alarmist"]
    assert j["not_grounded_recall"]["k"] == j["not_grounded_recall"]["n"] == 24 and j["noise"]["k"] == j["noise"]["n"] == 24
    res = cli_inproc("run", config("run-alarmist", ["alarmist"], {"enabled": False}, calibration=str(root / "alarmist.json"), require="calibrated"),
                     "--runs-dir", str(root / "runs"), "--no-progress", cwd=root)
    assert res.returncode == 3, res.stdout[-2000:] + res.stderr
    assert "judge alarmist refused (require: calibrated): flags grounded claims as often as not: 24/24 flagged" in res.stderr, res.stderr
    _calibrate(root, config("cal-panel2", ["good", "alarmist"], {"enabled": False}), "panel2.json")
    panel, _ = _run(root, config("run-panel2", ["good", "alarmist"], {"enabled": False}, calibration=str(root / "panel2.json")))
    assert set(panel["panel_excluded"]) == {"alarmist"} and "flags grounded claims" in panel["panel_excluded"]["alarmist"]
    good = _calibrate(root, config("cal-good2", ["good"], {"enabled": False}), "good2.json")["judges"]["good"]
    ok = cli_inproc("run", config("run-good2", ["good"], {"enabled": False}, calibration=str(root / "good2.json"), require="calibrated"),
                    "--runs-dir", str(root / "runs"), "--no-progress", cwd=root)
    assert good["noise"]["k"] == 0 and ok.returncode == 0, ok.stderr  # the honest judge passes the same rule


def test_a_calibration_file_is_checked_before_any_model_call(project):
    """Issue 50.2, 50.10: a floor outside [0, 1] or not a number, a file that is not JSON, a device: one line
    naming the file and field, exit 2, and the server is never asked."""
    root, config = project
    cal = _calibrate(root, config("cal-check", ["good"], {}), "check.json")
    good = json.loads((root / "check.json").read_text())
    for name, floor in (("neg", -0.5), ("big", 1.5), ("text", "low"), ("nan", "NaN")):
        bad = root / f"floor-{name}.json"
        bad.write_text(json.dumps({**good, "floors": {"good": floor}}).replace('"NaN"', "NaN"))
        res = cli_inproc("run", config(f"floor-{name}", ["good"], {}, calibration=str(bad)), "--runs-dir", str(root / "runs-bad"), cwd=root)
        assert res.returncode == 2 and f"floor-{name}.json" in res.stderr and len(res.stderr.strip().splitlines()) == 1, (name, res.stderr)
        assert "floors" in res.stderr or "JSON" in res.stderr, res.stderr
    (root / "garbage.json").write_text("{not json")
    res = cli_inproc("run", config("garbage", ["good"], {}, calibration=str(root / "garbage.json")), "--runs-dir", str(root / "runs-bad"), cwd=root)
    assert res.returncode == 2 and "garbage.json" in res.stderr
    res = cli_inproc("run", config("device", ["good"], {}, calibration="/dev/zero"), "--runs-dir", str(root / "runs-bad"), cwd=root)
    assert res.returncode == 2 and "not a plain file" in res.stderr, res.stderr
    assert not (root / "runs-bad").exists() or not any((root / "runs-bad").rglob("calls.jsonl")) or all(
        not p.read_text().strip() for p in (root / "runs-bad").rglob("calls.jsonl"))
    assert cal["floors"]["good"] is not None


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
