"""``judge agreement`` (issue 13.4): every claim the judges disagree on with each judge's label and rationale;
cost "n/a" where the price is unknown; one new output file per call, never overwriting."""

import json
from pathlib import Path

from judge.testing.scripts import claim_text, pipeline_model
from tests.conftest import cli_inproc
from tests.test_compare import BUNDLED_ANSWERS, run, two_judge_panel


def test_agreement_lists_disagreements_and_never_overwrites(scripted_server, tmp_path):
    rule_b = lambda t: "unsupported" if "5" in t or "2019" in t else "supported"  # noqa: E731
    rule_c = lambda t: "contradicted" if "2,000" in t or "5 דקות" in t else "supported"  # noqa: E731
    server = scripted_server(pipeline_model(lambda cid, req: (rule_b if "judge-b" in req["model"] else rule_c)(claim_text(req, cid))))
    run_dir = run(two_judge_panel(tmp_path, server, "panel", BUNDLED_ANSWERS, {"judges": ["judge-b", "judge-c"], "triage": False}), tmp_path)
    results = [json.loads(line) for line in Path(run_dir, "results.jsonl").read_text().splitlines()]
    expected = []
    for r in results:
        for a in r["answers"]:
            for c in a["claims"]:
                by = {v["judge"]: v for v in c["verdicts"]}
                if by["judge-b"]["label"] != by["judge-c"]["label"]:
                    expected.append((r["record_id"], a["model"], c["text"], by["judge-b"]["label"], by["judge-c"]["label"], by["judge-c"]["rationale"]))
    assert expected  # the two rules differ on some claims

    first = cli_inproc("agreement", run_dir)
    assert first.returncode == 0, first.stderr
    second = cli_inproc("agreement", run_dir, "--json")
    rep = json.loads(second.stdout)
    got = [(d["record_id"], d["model"], d["claim"], d["judges"]["judge-b"]["label"], d["judges"]["judge-c"]["label"], d["judges"]["judge-c"]["rationale"])
           for d in rep["disagreements"]]
    assert sorted(got) == sorted(expected) and all(x[5] == f"scripted {x[4]}" for x in got)
    for record_id, _, claim, label_b, label_c, _ in expected:  # the terminal names each claim with both labels
        assert claim in first.stdout and f"judge-b: {label_b}" in first.stdout and f"judge-c: {label_c}" in first.stdout
    # the scripted server's models have no price: their cost is unknown, not zero
    calls = [json.loads(line) for line in Path(run_dir, "calls.jsonl").read_text().splitlines()]
    assert calls and all(c["cost_usd"] is None for c in calls if c["model"] == "judge-b")
    assert rep["per_judge"]["judge-b"]["cost_usd"] is None and rep["per_judge"]["judge-b"]["unknown_cost_calls"] > 0
    row = next(line for line in first.stdout.splitlines() if line.startswith("│ judge-b") and "fam-b" in line)
    assert "n/a" in row and "0.0000" not in row
    # one new file per call, named after the run, never overwritten
    name = Path(run_dir).name
    assert {p.name for p in Path(run_dir).glob("agreement-*.html")} == {f"agreement-{name}.html", f"agreement-{name}-2.html"}
    page = Path(run_dir, f"agreement-{name}.html").read_text()
    assert "Claims the judges disagree on" in page and expected[0][2] in page
    out = tmp_path / "agreement.json"
    assert cli_inproc("agreement", run_dir, "--out", str(out)).returncode == 0 and json.loads(out.read_text())["disagreements"]
    before = out.read_text()
    again = cli_inproc("agreement", run_dir, "--out", str(out))
    assert again.returncode == 2 and "never overwrites" in again.stderr and out.read_text() == before
