"""Issue 50, a second hostile pass: the inputs of the trust features (the confirmation's cache, floor and
records; label sheets; scores.json's corrected block; a run directory's own files) decide no gate unchecked.
Each reproduction through the command line."""

from __future__ import annotations

import json
import os
import shutil

import pytest
import yaml

from judge.starter import EXAMPLE
from tests.test_boundary import _jsonl, cli, one_line
from tests.test_io_doors import _config, finished  # noqa: F401 (finished: a module-scoped fixture, one finished run per module)


# -- class 10: a config's path fields -----------------------------------------------------------------------


@pytest.mark.parametrize("field", ["calibration", "cache_dir"])
def test_a_nul_in_a_config_path_field_is_one_line(tmp_path, field):
    data = _jsonl(tmp_path / "data.jsonl", EXAMPLE[:1])
    config = _config(tmp_path, data, **{field: "cal\0ibration.json"})
    one_line(cli("run", config, "--runs-dir", tmp_path / "runs", "--no-progress"), field, "NUL")
    assert not (tmp_path / "runs").exists()


def test_a_calibration_file_that_is_a_link_is_refused_before_any_call(tmp_path, finished):
    real = tmp_path / "real.json"
    real.write_text("{}", encoding="utf-8")
    os.symlink(real, tmp_path / "cal.json")
    data = _jsonl(tmp_path / "data.jsonl", EXAMPLE[:1])
    config = _config(tmp_path, data, calibration="cal.json")
    one_line(cli("run", config, "--runs-dir", tmp_path / "runs", "--no-progress"), "cal.json", "link")


# -- classes 3, 1, 11: a pipe no one writes to, an endless device ----------------------------------------------


def test_a_fifo_or_an_endless_device_as_labels_models_or_a_run_config_is_one_line(tmp_path, finished):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    one_line(cli("score", finished, "--labels", "/dev/urandom"), "/dev/urandom", "not UTF-8")
    one_line(cli("score", finished, "--labels", fifo), str(fifo), "no process writes to")
    one_line(cli("compare", finished, finished, "--confirm", "3", "--models", fifo), str(fifo), "no process writes to")
    run = tmp_path / "run"
    shutil.copytree(finished, run)
    (run / "config.yaml").unlink()
    os.mkfifo(run / "config.yaml")
    for args in (("score", run), ("compare", finished, run), ("label", run, "--out", tmp_path / "sheet.jsonl", "--n", "2")):
        one_line(cli(*args), "config.yaml", "a pipe")


def test_a_pipe_with_a_writer_is_read_however_slowly_it_writes(tmp_path, finished):
    import subprocess

    sheet = tmp_path / "sheet.jsonl"
    assert cli("label", finished, "--out", sheet, "--n", "2").exit_code == 0
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"exec 3>'{fifo}'; sleep 3; cat '{sheet}' >&3"])
    try:
        result = cli("score", finished, "--labels", fifo)
    finally:
        writer.wait(timeout=30)
    assert result.exit_code in (0, 2) and "no process writes to" not in result.output, result.output


# -- classes 1, 2, 5: the confirmation's cache, noise floor and records are the user's --------------------------

from judge.testing.judges import panel_script  # noqa: E402
from judge.testing.server import ScriptedServer  # noqa: E402
from tests.conftest import cli_inproc  # noqa: E402
from tests.test_confirm_inputs import SOURCE, _runs  # noqa: E402


def _confirm(tmp_path, dirs, models="b.yaml"):
    result = cli_inproc("compare", dirs["a"], dirs["b"], "--confirm", "3", "--models", str(tmp_path / models), "--json", cwd=tmp_path)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def _edit_yaml(path, edit):
    data = yaml.safe_load(open(path, encoding="utf-8"))
    edit(data)
    open(path, "w", encoding="utf-8").write(yaml.safe_dump(data))


def _edit_results(path, edit):
    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    for r in rows:
        for a in r["answers"]:
            for c in a["claims"]:
                edit(c)
    open(path, "w", encoding="utf-8").write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def test_a_cache_named_by_run_bs_config_never_serves_the_reasks(tmp_path):
    with ScriptedServer(panel_script({"checker": "good"})) as server, ScriptedServer(panel_script({"checker": "lenient"})) as planted:
        dirs = _runs(tmp_path, server)
        # a planted cache of lenient re-asks: the same calls answered by a lenient judge, into a folder of the attacker's
        _edit_yaml(tmp_path / "b.yaml", lambda c: c.update(cache_dir=str(tmp_path / "planted")))
        lenient = tmp_path / "lenient.yaml"
        lenient.write_text((tmp_path / "b.yaml").read_text().replace(server.base_url, planted.base_url))
        assert _confirm(tmp_path, dirs, "lenient.yaml").returncode == 0  # the lenient judge would pass it
        assert (tmp_path / "planted" / "cache.db").is_file()
        _edit_yaml(tmp_path / "b.yaml", lambda c: c.update(cache_dir=str(tmp_path / "cache")))  # the user's own config again
        _edit_yaml(f"{dirs['b']}/config.yaml", lambda c: c.update(cache_dir=str(tmp_path / "planted")))  # run B names the planted one
        result = _confirm(tmp_path, dirs)
    assert result.returncode == 1, result.stdout  # the user's cache and judge: the regression confirmed


def test_a_noise_floor_in_run_bs_summary_is_never_read(tmp_path):
    with ScriptedServer(panel_script({"checker": "good"})) as server:
        dirs = _runs(tmp_path, server)
        path = f"{dirs['b']}/summary.json"
        summary = json.load(open(path, encoding="utf-8"))
        for floor in (0.99, -0.5):
            summary["judge_calibration"] = {"file": None, "key": "x", "adopted": ["checker"], "floors": {"checker": floor}}
            json.dump(summary, open(path, "w", encoding="utf-8"))
            result = _confirm(tmp_path, dirs)
            assert result.returncode in (1, 2), result.stdout
            if result.returncode == 1:
                assert json.loads(result.stdout)["confirmation"]["floor_from"].startswith("assumed")


def test_a_calibration_floor_outside_0_1_in_the_users_file_is_one_line(tmp_path):
    with ScriptedServer(panel_script({"checker": "good"})) as server:
        dirs = _runs(tmp_path, server)
        (tmp_path / "cal.json").write_text(json.dumps({"key": "k", "setup": {}, "run_dir": "r", "made_utc": "t", "floors": {"checker": -0.5}}))
        _edit_yaml(tmp_path / "b.yaml", lambda c: c.update(calibration="cal.json"))
        result = _confirm(tmp_path, dirs)
    assert result.returncode == 2 and "cal.json" in result.stderr and "floors.checker" in result.stderr, result.stderr


def test_a_dataset_forged_into_run_bs_config_never_feeds_a_reask(tmp_path):
    with ScriptedServer(panel_script({"checker": "good"})) as server:
        dirs = _runs(tmp_path, server)
        forged = tmp_path / "forged.jsonl"
        forged.write_text(json.dumps({"id": "bridge", "question": "When did the bridge open?", "source": SOURCE.replace("1937", "1952"),
                                      "answer": "The bridge opened in 1952."}) + "\n")
        for side in ("a", "b"):
            _edit_yaml(f"{dirs[side]}/config.yaml", lambda c: c["dataset"].update(path=str(forged)))

        def forge(c):
            for cand in c["candidates"]:
                for part in [cand, *cand.get("parts", [])]:
                    part["excerpt"] = part["excerpt"].replace("1937", "1952")
        _edit_results(f"{dirs['b']}/results.jsonl", forge)
        result = _confirm(tmp_path, dirs)
    assert result.returncode in (1, 2), result.stdout  # read against the user's dataset: the forged passage is refused


def test_a_claim_edited_away_from_its_answer_is_never_reasked(tmp_path):
    with ScriptedServer(panel_script({"checker": "good"})) as server:
        dirs = _runs(tmp_path, server)
        _edit_results(f"{dirs['b']}/results.jsonl", lambda c: c.update(text=c["text"].replace("1952", "1937")))
        result = _confirm(tmp_path, dirs)
    assert result.returncode == 1, result.stdout
    refused = json.loads(result.stdout)["confirmation"]["usage"]["refused_passages"]
    assert any("field text" in r and "1937" in r for r in refused), refused


def test_a_models_file_without_a_dataset_reasks_nothing_and_says_why(tmp_path):
    with ScriptedServer(panel_script({"checker": "good"})) as server:
        dirs = _runs(tmp_path, server)
        result = _confirm(tmp_path, dirs, "models.yaml")
    assert result.returncode == 1, result.stdout
    assert "names no dataset" in json.loads(result.stdout)["confirmation"]["not_reasked"]


# -- class 3: an honest sheet that leaves one model unlabelled ------------------------------------------------


def _two_models(tmp_path):
    rows = [{"id": f"r{i}", "question": f"When did place {i} open?", "source": f"Place {i} opened in {1900 + i}. It is {i + 2} km long.",
             "answers": {"model-a": f"Place {i} opened in {1900 + i}.", "model-b": f"Place {i} opened in {1900 + i + (i % 3 > 0)}."}}
            for i in range(12)]
    data = _jsonl(tmp_path / "two.jsonl", rows)
    result = cli("run", _config(tmp_path, data), "--runs-dir", tmp_path / "runs", "--no-progress")
    assert result.exit_code == 0, result.output[-2000:]
    (run,) = (tmp_path / "runs").iterdir()
    return run


def test_a_sheet_leaving_one_model_unlabelled_scores_and_that_model_fails_the_gate(tmp_path):
    run = _two_models(tmp_path)
    assert cli("label", run, "--n", "24", "--out", tmp_path / "s.jsonl").exit_code == 0
    rows = [json.loads(x) for x in (tmp_path / "s.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {r["model"] for r in rows} == {"model-a", "model-b"}
    for blank in ("", "skip"):  # model-a labelled whole (its strata's variance 0), model-b not at all
        sheet = _jsonl(tmp_path / f"blank{blank}.jsonl", [{**r, "label": blank if r["model"] == "model-b" else "supported"} for r in rows])
        scored = cli("score", run, "--labels", sheet)
        assert scored.exit_code == 0, (scored.output[-2000:], scored.exception)
        claim = json.loads((run / "scores.json").read_text())["corrected"]["levels"]["claim"]["models"]
        assert claim["model-b"]["hallucination_rate"]["corrected"] is None  # no labels, no interval
        # the unlabelled half may hold any rate: the overall interval reaches from model-a's labelled 0 to 0 + its whole share
        rate, faith = (claim["all models"][m]["corrected"] for m in ("hallucination_rate", "faithfulness"))
        assert rate["low"] <= rate["estimate"] <= rate["high"] and rate["high"] >= 0.5
        assert faith["low"] <= faith["estimate"] <= faith["high"] and faith["low"] <= 0.5
        gate = cli("compare", run, run, "--gate", "corrected_hallucination_rate<=1")
        assert gate.exit_code == 1 and "model-b: no valid corrected interval" in gate.output, gate.output[-3000:]


# -- class 9: the corrected gate reads the run and its sheets, never scores.json's numbers ---------------------


def test_an_edited_corrected_block_never_passes_the_corrected_gate(tmp_path):
    run = _two_models(tmp_path)
    assert cli("label", run, "--n", "24").exit_code == 0
    sheet = run / "labels.jsonl"
    rows = [json.loads(x) for x in sheet.read_text(encoding="utf-8").splitlines()]
    truth = {}
    for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        for i, a in enumerate(r["answers"]):
            for c in a["claims"]:
                truth[f"{r['record_id']}#{i}#{c['claim_id']}"] = c["label"]
    _jsonl(sheet, [{**r, "label": truth[r["item"]]} for r in rows])  # the judge's verdicts, as a person would agree
    assert cli("score", run).exit_code == 0
    gate = ("compare", run, run, "--gate", "corrected_hallucination_rate<=0.35")
    honest = cli(*gate)
    assert honest.exit_code == 1 and "model-b" in honest.output, honest.output[-2000:]
    scores = json.loads((run / "scores.json").read_text())
    models = scores["corrected"]["levels"]["claim"]["models"]
    for edit in ("deleted", "lowered"):
        edited = json.loads(json.dumps(scores))
        mine = edited["corrected"]["levels"]["claim"]["models"]
        if edit == "deleted":
            del mine["model-b"]
        else:
            for m in mine.values():
                m["hallucination_rate"]["corrected"] = {"estimate": 0.05, "low": 0.0, "high": 0.1, "se": 0.01, "lam": 0.5}
                m["hallucination_rate"].pop("withheld", None)
        (run / "scores.json").write_text(json.dumps(edited))
        result = cli(*gate)
        assert result.exit_code in (1, 2), (edit, result.output[-2000:])
    assert models  # (the honest block had every model)


def test_a_run_labelled_in_full_still_passes_the_recomputed_corrected_gate(tmp_path):
    run = _two_models(tmp_path)
    assert cli("label", run, "--n", "24").exit_code == 0
    sheet = run / "labels.jsonl"
    rows = [json.loads(x) for x in sheet.read_text(encoding="utf-8").splitlines()]
    _jsonl(sheet, [{**r, "label": "supported"} for r in rows])
    assert cli("score", run).exit_code == 0
    result = cli("compare", run, run, "--gate", "corrected_hallucination_rate<=1")
    assert result.exit_code == 0, result.output[-2000:]  # every model labelled: it can pass


# -- class 12: a run that says complete is held to its own files ------------------------------------------------


def _cut(run, edit):
    results, selected = run / "results.jsonl", run / "selected.ids"
    lines = results.read_bytes().splitlines(keepends=True)
    ids = selected.read_text(encoding="utf-8").splitlines(keepends=True)
    new_lines, new_ids = edit(lines, ids)
    results.write_bytes(b"".join(new_lines))
    selected.write_text("".join(new_ids), encoding="utf-8")


EDITS = {
    "results cut to half": (lambda lines, ids: (lines[: len(lines) // 2], ids), "lacks"),
    "results and selected.ids cut to match": (lambda lines, ids: (lines[: len(lines) // 2], ids[: len(ids) // 2]), "summary.json counts"),
    "selected.ids emptied": (lambda lines, ids: (lines, []), "does not select"),
    "a record twice": (lambda lines, ids: (lines + lines[:1], ids), "more than once"),
    "a foreign record": (lambda lines, ids: (lines, ids[1:]), "does not select"),
    "a torn last line": (lambda lines, ids: (lines[:-1] + [lines[-1][:-10]], ids), "lacks"),
    "results emptied": (lambda lines, ids: ([], ids), "lacks"),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_complete_run_whose_files_were_cut_is_refused_naming_what_is_missing(tmp_path, finished, edit):
    change, expect = EDITS[edit]
    run = tmp_path / "run"
    shutil.copytree(finished, run)
    (run / "run.lock").unlink(missing_ok=True)
    _cut(run, change)
    for args in (("merge", run, "--runs-dir", tmp_path / "merged"), ("label", run, "--n", "2", "--out", tmp_path / "s.jsonl"),
                 ("score", run), ("baseline", "save", run, "--name", "b", "--baselines-dir", tmp_path / "bl"), ("compare", finished, run)):
        one_line(cli(*args), str(run), expect)


def test_an_untouched_complete_run_passes_the_check(tmp_path, finished):
    run = tmp_path / "run"
    shutil.copytree(finished, run)
    assert cli("compare", finished, run).exit_code == 0
    assert cli("merge", run, "--runs-dir", tmp_path / "merged").exit_code == 0



# -- class 4: confirmation re-asks stay within max_cost_usd and are recorded ------------------------------------

PRICE = {"input_per_million": 10000.0, "output_per_million": 10000.0}  # a re-ask here costs 2.67 USD, its ceiling 20.15
BUDGET = 21.0  # room for one re-ask's ceiling, not two: without the ceiling held, all ten re-asks (26.7 USD) ran at once


def _priced(tmp_path, name, **extra):
    cfg = yaml.safe_load((tmp_path / "b.yaml").read_text())
    cfg["models"]["checker"]["price"] = PRICE
    cfg.update(extra)
    (tmp_path / name).write_text(yaml.safe_dump(cfg))
    return tmp_path / name


def test_compare_confirm_never_spends_past_its_budget(tmp_path):
    with ScriptedServer(panel_script({"checker": "good"})) as server:
        dirs = _runs(tmp_path, server)
        _priced(tmp_path, "priced.yaml")
        before = server.stats.requests
        result = cli_inproc("compare", dirs["a"], dirs["b"], "--confirm", "5", "--models", str(tmp_path / "priced.yaml"),
                            "--max-cost-usd", str(BUDGET), "--json", cwd=tmp_path)
        asked = server.stats.requests - before
    usage = json.loads(result.stdout)["confirmation"]["usage"]
    assert asked == usage["calls"] - usage["cache_hits"] == 1, usage
    assert usage["cost_usd"] <= BUDGET and "max_cost_usd 21.0 reached" in usage["stopped"], usage
    assert result.returncode == 1, result.stdout  # the claims not re-asked keep their verdicts: the regression stands


def test_a_baseline_runs_reasks_are_recorded_and_within_the_runs_budget(tmp_path):
    with ScriptedServer(panel_script({"checker": "good"})) as server:
        dirs = _runs(tmp_path, server)
        config = _priced(tmp_path, "c.yaml", max_cost_usd=BUDGET)
        before = server.stats.requests
        result = cli_inproc("run", str(config), "--runs-dir", str(tmp_path / "runs" / "c"), "--baseline", dirs["a"], "--no-progress", cwd=tmp_path)
        asked = server.stats.requests - before
    (run,) = (tmp_path / "runs" / "c").iterdir()
    calls = [json.loads(line) for line in (run / "calls.jsonl").read_text().splitlines()]
    assert asked == sum(not c.get("cached") for c in calls) == 1, calls  # every call the server saw is a line of calls.jsonl
    assert sum(c.get("cost_usd") or 0 for c in calls) <= BUDGET
    assert json.loads((run / "summary.json").read_text())["usage"]["cost_usd"] <= BUDGET
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
