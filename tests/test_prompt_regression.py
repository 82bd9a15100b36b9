"""Regression-testing prompts (issue 26): prompt variants as inputs, gates that catch a regression on ten
questions, pinned baselines, absolute thresholds, and the pytest plugin's short failure, all over real HTTP
(a scripted OpenAI-compatible server plays the model under test and the judge).

Ten questions; prompt v1 makes the writer copy its source's sentence; prompt v2 makes three answers contradict
their source ("It opened in 1952." where the source says otherwise). The scripted judge calls a claim
contradicted when it carries that wrong year, supported otherwise; triage settles verbatim claims free.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
import yaml

from judge.testing.scripts import claim_text, pipeline_model, user_text
from judge.testing.server import Reply, ScriptedServer, schema_of
from tests.conftest import ROOT, cli_inproc

PLACES = [
    ("bridge", "The Golden Gate Bridge", 1937), ("tower", "The Eiffel Tower", 1889), ("opera", "The Sydney Opera House", 1973),
    ("museum", "The Guggenheim Museum Bilbao", 1997), ("station", "Grand Central Terminal", 1913), ("stadium", "Wembley Stadium", 2007),
    ("library", "The New York Public Library", 1911), ("park", "Central Park", 1858), ("market", "Pike Place Market", 1907),
    ("zoo", "The Bronx Zoo", 1899),
]
BROKEN_BY_V2 = {"opera", "station", "zoo"}  # v2 makes these three answers contradict their sources
WRONG = "It opened in 1952."

V1 = """{% block system %}
You answer from the sources only. Reply with JSON: {"answer": "..."}.
{% endblock %}
{% block user %}
{% for source in sources %}<source id="{{ source.doc_id | attr }}">{{ source.text | data }}</source>
{% endfor %}<question>{{ question | data }}</question>
{% endblock %}
"""
V2 = V1.replace("You answer from the sources only.", "Answer briefly and confidently, from memory if you must.")


def records() -> list[dict]:
    return [{"id": rid, "question": f"When did {name} open?", "source": f"{name} opened in {year}. It is visited by many people every year."}
            for rid, name, year in PLACES]


def writer_and_judge(request: dict, n: int) -> Reply:
    """The model under test (copies its source's first sentence; with v2, three answers state a wrong year)
    and the judge (contradicted when a claim states the wrong year)."""
    props = (schema_of(request) or {}).get("properties", {})
    if "answer" in props:
        system = " ".join(m.get("content") or "" for m in request["messages"] if m["role"] == "system")
        source = html.unescape(re.search(r"<source[^>]*>(.*?)</source>", user_text(request), re.S).group(1)).strip()
        name, first = next((p for p in PLACES if p[1] in source), ("other",)), source.split(". ")[0] + "."  # other: a calibration record
        return Reply(body={"answer": WRONG if "confidently" in system and name[0] in BROKEN_BY_V2 else first})
    return pipeline_model(lambda cid, req: "contradicted" if "1952" in claim_text(req, cid) else "supported")(request, n)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A user's project: ten records, prompts v1 and v2, a scripted writer and judge; configs crossing the
    two variants, or with one variant ("main", its file edited in place as a pull request would)."""
    root = tmp_path_factory.mktemp("project")
    server = ScriptedServer(writer_and_judge).start()
    (root / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records()))
    (root / "prompts").mkdir()
    (root / "prompts" / "answer_v1.j2").write_text(V1)
    (root / "prompts" / "answer_v2.j2").write_text(V2)
    (root / "prompts" / "answer.j2").write_text(V1)  # the prompt under test in CI: edited by the "pull request"

    def config(name: str, prompts: dict, **extra) -> Path:
        data = {
            "name": name, "dataset": {"path": "data.jsonl"},
            "models": {"writer": {"model": "openai/writer", "api_base": server.base_url, "family": "fam-w", "timeout": 5},
                       "checker": {"model": "openai/checker", "api_base": server.base_url, "family": "fam-j", "timeout": 5},
                       "second": {"model": "openai/second", "api_base": server.base_url, "family": "fam-k", "timeout": 5}},
            "generate": {"models": ["writer"], "prompts": prompts},
            "decompose": {"method": "sentences"}, "adjudicate": {"judges": ["checker"]},
            "controls": {"enabled": False},  # a scripted judge: these tests are about prompts and gates, not controls
            "cache_dir": str(root / ".cache"), **extra,
        }
        path = root / f"{name}.yaml"
        path.write_text(yaml.safe_dump(data))
        return path

    yield root, config
    server.stop()


def run(config: Path, *args: str, code: int = 0) -> tuple[str, dict]:
    result = cli_inproc("run", str(config), "--runs-dir", str(config.parent / "runs"), "--json", "--no-progress", *args, cwd=config.parent)
    assert result.returncode == code, result.stdout[-3000:] + result.stderr
    out = json.loads(result.stdout)
    summary = out.get("summary", out)
    return summary["run_dir"], out


def answers(run_dir: str) -> list[dict]:
    return [a for line in Path(run_dir, "results.jsonl").read_text().splitlines() for a in json.loads(line)["answers"]]


@pytest.fixture(scope="module")
def crossed(project):
    root, config = project
    run_dir, out = run(config("crossed", {"v1": "prompts/answer_v1.j2", "v2": "prompts/answer_v2.j2"}))
    return root, config, run_dir, out


def test_two_prompt_variants_of_one_model_from_one_config(crossed):
    root, _, run_dir, summary = crossed
    got = answers(run_dir)
    assert [a["model"] for a in got] == ["writer+v1", "writer+v2"] * 10
    hashes = {a["prompt"]: a["prompt_hash"] for a in got}
    assert set(hashes) == {"v1", "v2"} and hashes["v1"] != hashes["v2"] and hashes["v1"].startswith("v1@")
    assert summary["prompts"]["answer:v1"] == hashes["v1"] and summary["prompts"]["answer:v2"] == hashes["v2"]
    by_model = summary["by_model"]
    assert by_model["writer+v1"]["hallucination_rate"] == 0 and by_model["writer+v2"]["labels"]["contradicted"] == 3
    wrong = [a for a in got if a["answer"] == WRONG]
    assert len(wrong) == 3 and {a["model"] for a in wrong} == {"writer+v2"}
    # a report read later says which prompts it judged, with their hashes
    md, page = (Path(run_dir, name).read_text(encoding="utf-8") for name in ("report.md", "report.html"))
    for text in (md, page):
        assert f"answer:v1 {hashes['v1']}" in text and f"answer:v2 {hashes['v2']}" in text


def test_the_variants_compared_in_one_run_fail_the_default_gates_naming_each_claim(crossed):
    _, _, run_dir, _ = crossed
    result = cli_inproc("compare", run_dir, run_dir, "--prompt-a", "v1", "--prompt-b", "v2", "--json")
    assert result.returncode == 1, result.stderr
    out = json.loads(result.stdout)
    gates = {g["gate"]: g for g in out["gates"]}
    assert list(gates) == ["hallucination_rate:0.0", "faithfulness:0.0", "judges of run A", "judges of run B"]  # the defaults
    for metric in ("hallucination_rate:0.0", "faithfulness:0.0"):
        g = gates[metric]  # three records worse of ten: no sign test can tell, and it never says "within noise"
        assert g["too_few_records"] and g["decided_by"] == "claims" and g["failed"]
        assert "too few records to tell (10 records, 3 changed" in g["why"] and "within noise" not in g["why"]
        assert "the claim-level gate new_not_grounded:0 decides: 3 claims newly not grounded (allowed 0)" in g["why"]
    assert out["new_claims"] == {"not_grounded": 3, "hallucinated": 3, "contradicted": 3, "unsupported": 0, "partially_supported": 0, "unsure": 0, "judge_error": 0}
    # a claim-level gate given explicitly is checked as given, and is the one the undecided delta gates follow
    lenient = json.loads(cli_inproc("compare", run_dir, run_dir, "--prompt-a", "v1", "--prompt-b", "v2", "--gate", "new_contradicted:3",
                                 "--gate", "new_not_grounded:3", "--gate", "hallucination_rate:0", "--json").stdout)
    assert not lenient["failed"] and lenient["gates"][0]["count"] == 3 and "new_not_grounded:3 decides" in lenient["gates"][2]["why"]
    assert out["metrics"]["hallucination_rate"]["records"] == {"worse": 3, "better": 0, "ties": 7, "p_value": 0.125}
    new = out["claims"]["newly_ungrounded"]
    assert sorted(c["record_id"] for c in new) == sorted(BROKEN_BY_V2)
    # a four-word answer is read with its question (issue 24.1): "When did ... open? It opened in 1952."
    assert all(c["model"] == "writer" and c["b"] == "contradicted" and c["claim"].endswith(" " + WRONG) and "?" in c["claim"] for c in new)
    assert all(c["reason"] == "scripted contradicted" and " opened in " in c["passage"] and "numbers not in the evidence: 1952" in c["flags"] for c in new)
    # the terminal names them too, with the reason and the passage
    text = cli_inproc("compare", run_dir, run_dir, "--prompt-a", "v1", "--prompt-b", "v2", env={"COLUMNS": "250"}).stdout
    assert "FAIL hallucination_rate:0.0: " in text and "scripted contradicted" in text and "report: " in text
    # the same variant against itself passes; a variant that does not exist is one plain line
    assert cli_inproc("compare", run_dir, run_dir, "--prompt-a", "v1", "--prompt-b", "v1").returncode == 0
    bad = cli_inproc("compare", run_dir, run_dir, "--prompt-a", "v1", "--prompt-b", "v3")
    assert bad.returncode == 2 and "no answer of prompt 'v3' (its prompt variants: v1, v2)" in bad.stderr


def test_runs_that_share_no_model_say_so(crossed, project):
    root, config = project
    _, _, crossed_dir, _ = crossed
    only_v2, _ = run(config("only-v2", {"v2": "prompts/answer_v2.j2"}))
    out = json.loads(cli_inproc("compare", crossed_dir, only_v2, "--gate", "none", "--prompt-a", "v1", "--json").stdout)
    assert out["note"] is not None and "share no model" in out["note"] and "writer+v2" in out["note"] and "--prompt-a" in out["note"]
    assert out["gates"] == [] and not out["failed"]


def test_agreement_counts_only_claims_both_judges_ruled_on(project):
    """Triage settles the verbatim claims with no judge call: they are counted apart, never as agreement."""
    root, config = project
    run_dir, summary = run(config("panel", {"v1": "prompts/answer_v1.j2", "v2": "prompts/answer_v2.j2"},
                                  adjudicate={"judges": ["checker", "second"]}))
    assert summary["claims_triaged"] == 17  # every claim but the three wrong ones is a verbatim sentence of its source
    rep = json.loads(cli_inproc("agreement", run_dir, "--json", "--out", str(root / "agreement.json")).stdout)
    assert rep["triaged_claims"] == 17
    (pair,) = rep["pairwise"]
    assert pair["claims"] == 3 and pair["raw_agreement"] == 1.0  # each judge saw the three, and nothing else
    assert rep["per_judge"]["checker"]["claims"] == 3 and rep["per_judge"]["second"]["claims"] == 3
    assert rep["per_judge"]["checker"]["controls"] is None  # controls off in these configs: no verdict to show
    text = cli_inproc("agreement", run_dir, "--out", str(root / "agreement.html")).stdout
    assert "17 claims settled by triage (verbatim, no judge call) are left out of every judge's numbers" in text


def test_a_pinned_baseline_catches_an_edited_prompt_and_an_unchanged_rerun_passes(project):
    root, config = project
    path = config("ci", {"main": "prompts/answer.j2"})
    base, _ = run(path)
    saved = cli_inproc("baseline", "save", base, "--name", "main", cwd=root)
    assert saved.returncode == 0 and "--baseline main" in saved.stdout, saved.stderr
    listed = cli_inproc("baseline", "list", "--json", cwd=root)
    assert [b["name"] for b in json.loads(listed.stdout)] == ["main"]
    again, out = run(path, "--baseline", "main")  # an unchanged rerun (from the cache): passes the default gates
    assert not out["compare"]["failed"] and out["compare"]["run_a"] == str(Path("baselines") / "main")
    (root / "prompts" / "answer.j2").write_text(V2)  # the pull request edits the prompt
    try:
        _, out = run(path, "--baseline", "main", code=1)
        new = out["compare"]["claims"]["newly_ungrounded"]
        assert len(new) == 3 and {c["model"] for c in new} == {"writer+main"}
        hashes = {a["prompt_hash"] for a in answers(out["summary"]["run_dir"])}
        assert len(hashes) == 1 and hashes != {a["prompt_hash"] for a in answers(base)}  # the edited prompt's hash
        # absolute thresholds on the run itself: 3 of 10 claims hallucinated
        _, out = run(path, "--max-hallucination", "0.1", code=1)
        assert out["thresholds"]["failed"] == ["max hallucination rate 0.1: overall is 0.3000 (3 hallucinated of 10 judged claims)"]
        run(path, "--max-hallucination", "0.3")
    finally:
        (root / "prompts" / "answer.j2").write_text(V1)
    missing = cli_inproc("run", str(path), "--baseline", "nope", cwd=root)
    assert missing.returncode == 2 and "neither a run directory nor a baseline pinned in baselines (pinned: main)" in missing.stderr


@pytest.mark.slow
def test_the_plugin_fails_short_naming_each_claim_and_writes_runs_where_ci_looks(project, pytester, monkeypatch):
    root, config = project
    base = config("plugin-base", {"main": "prompts/answer_v1.j2"})
    cand = config("plugin-cand", {"main": "prompts/answer_v2.j2"})
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makeini(f"[pytest]\njudge_runs_dir = artifacts/judge-runs\njudge_baselines_dir = {root / 'plugin-baselines'}\n")
    pytester.makepyfile(test_prompts=f"""
        from judge.runs.baseline import save_baseline

        def test_pin(judge_grounding):
            save_baseline(judge_grounding.run({str(base)!r}), "main", {str(root / 'plugin-baselines')!r})

        def test_candidate_prompt(judge_grounding):
            judge_grounding.assert_no_regression({str(cand)!r}, baseline="main")
        """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    errors = [line for line in out.splitlines() if line.startswith("E ")]
    assert len(errors) <= 12, out
    for rid in BROKEN_BY_V2:
        # the base's claim "When did ... open? It opened in 1937." and the candidate's "... 1952." are one claim changed
        assert any(f"{rid} / writer+main: supported -> contradicted" in line and "reason: scripted contradicted" in line and "passage: nearest candidate" in line
                   for line in errors), out
    assert any(line.startswith("E   ") and "hallucination_rate:0.0: " in line and "3 claims newly not grounded" in line for line in errors)
    assert "__tracebackhide__" not in out and "def assert_no_regression" not in out and "pytest_plugin.py" not in out
    runs = list((pytester.path / "artifacts" / "judge-runs").iterdir())
    assert len(runs) == 2 and all((r / "report.html").exists() for r in runs)


def test_a_users_prompt_that_cannot_render_is_refused_before_any_call(project):
    root, config = project
    (root / "prompts" / "bad.j2").write_text("{% block user %}{{ questoin }}{% endblock %}")
    (root / "prompts" / "nouser.j2").write_text("{% block system %}Hi{% endblock %}")
    for file, expected in (("bad.j2", "'questoin' is undefined; the variables are question, sources, language"),
                           ("nouser.j2", "it has no {% block user %}"), ("absent.j2", "is not a file")):
        result = cli_inproc("run", str(config("bad", {"v1": f"prompts/{file}"})), "--runs-dir", str(root / "bad-runs"), cwd=root)
        assert result.returncode == 2 and expected in result.stderr and "generate.prompts" in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    assert not (root / "bad-runs").exists()


def test_sign_test_and_gate_specs():
    from judge.scoring.compare import DEFAULT_GATES, Gate, decidable, min_changed, parse_gates, sign_test

    assert sign_test(3, 0) == 0.125 and sign_test(0, 0) == 1.0 and sign_test(5, 0) == 1 / 32
    assert sign_test(8, 6) == pytest.approx(sum(__import__("math").comb(14, k) for k in range(8, 15)) / 2**14)
    assert not decidable(4) and decidable(5) and min_changed() == 5
    assert [g.spec for g in parse_gates(None)] == ["hallucination_rate:0.0", "faithfulness:0.0"] and len(DEFAULT_GATES) == 2
    assert parse_gates(["none"]) == [] and Gate.parse("new_ungrounded:2").claims == "not_grounded"
    for bad in ("new_bogus:1", "new_contradicted:-1", "new_contradicted:x", "faithfulness:-1", "faithfulness:nan", "bogus:1"):
        with pytest.raises(ValueError):
            Gate.parse(bad)
    with pytest.raises(ValueError):
        parse_gates(["none", "faithfulness:0"])


@pytest.mark.slow
def test_the_ci_recipe_as_written(tmp_path, scripted_server):
    """docs/ci/grounding.yml's steps, run in order in a fresh copy of docs/ci (the models swapped for the
    scripted server, the judge a rule-based one that is honest on controls): the main branch calibrates the judge
    and pins a baseline; a pull request that breaks the prompt fails (exit 1), its comparison is written for a
    comment, verdict first, its runs are where the upload step looks; an unchanged one passes; a second push
    calibrates nothing again."""
    import os
    import shutil
    import subprocess
    import sys

    from judge.testing.judges import judge_script

    good = judge_script("good")

    def writer_and_good_judge(request: dict, n: int) -> Reply:
        props = (schema_of(request) or {}).get("properties", {})
        return writer_and_judge(request, n) if "answer" in props else good(request, n)

    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "docs" / "ci", repo)
    server = scripted_server(writer_and_good_judge)
    models = {"models": {name: {"model": f"openai/{name}", "api_base": server.base_url, "family": fam, "timeout": 5}
                         for name, fam in (("writer", "fam-w"), ("checker", "fam-j"))}}
    (repo / "grounding" / "models.yaml").write_text(yaml.safe_dump(models))
    workflow = yaml.safe_load((repo / "grounding.yml").read_text())
    job = workflow["jobs"]["grounding"]
    env = {**os.environ, **{k: v for k, v in job["env"].items() if "${{" not in str(v)},
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}

    def steps(event: str) -> list[int]:
        codes = []
        for step in job["steps"]:
            cond = step.get("if", "")
            if "run" not in step or step["name"] == "Install judge" or (cond and f"== '{event}'" not in cond):
                continue
            done = subprocess.run(["bash", "-c", step["run"]], cwd=repo, env=env, capture_output=True, text=True, timeout=600)
            codes.append(done.returncode)
            outputs.append(done.stdout + done.stderr)
        return codes

    outputs: list[str] = []

    assert steps("push") == [0, 0], outputs  # calibrate the judge; run, then pin
    assert (repo / "baselines" / "main" / "BASELINE.json").exists() and (repo / "baselines" / "judge-calibration.json").exists()
    shutil.rmtree(repo / "artifacts")
    answer = repo / "grounding" / "answer.j2"
    answer.write_text(answer.read_text().replace("You answer questions using only", "Answer confidently, using only"))
    assert steps("pull_request") == [1], outputs[-1:]  # the gate fails; the comparison is written all the same
    compare_md = (repo / "artifacts" / "compare.md").read_text()
    assert compare_md.startswith("# judge compare: FAIL") and "Newly ungrounded in B (3)" in compare_md and WRONG in compare_md
    (run_dir,) = (repo / "artifacts" / "runs").iterdir()
    assert (run_dir / "report.html").exists()
    shutil.rmtree(repo / "artifacts")
    shutil.copy(ROOT / "docs" / "ci" / "grounding" / "answer.j2", answer)  # the pull request reverted
    assert steps("pull_request") == [0]
    assert (repo / "artifacts" / "compare.md").read_text().startswith("# judge compare: PASS")
    shutil.rmtree(repo / "artifacts")  # each workflow run starts from a fresh checkout
    assert steps("push") == [0, 0] and "is current" in outputs[-2] and not (repo / "artifacts" / "calibration").exists()
