"""The confirmation's re-asks read only what the user gave (issue 50.1, 50.5), end to end through `judge run`
and `judge compare --confirm` with a scripted judge on 127.0.0.1: a passage forged into a stored run is never
shown to the judge (it would settle a real error as noise), and the judges come from the user's models file,
never from the run directory's config.yaml."""

from __future__ import annotations

import json

import yaml

from judge.testing.judges import panel_script
from judge.testing.server import ScriptedServer
from tests.conftest import cli_inproc

SOURCE = "The bridge opened in 1937. It is 2.7 km long and was designed by Joseph Strauss."


def _runs(tmp_path, server):
    models = {"checker": {"model": "openai/checker", "api_base": server.base_url, "family": "fam-j", "timeout": 10}}
    (tmp_path / "models.yaml").write_text(yaml.safe_dump({"models": models}))
    dirs = {}
    for side, answer in (("a", "The bridge opened in 1937."), ("b", "The bridge opened in 1952.")):
        (tmp_path / f"{side}.jsonl").write_text(json.dumps({"id": "bridge", "question": "When did the bridge open?", "source": SOURCE,
                                                            "answer": answer}) + "\n")
        config = {"name": side, "dataset": {"path": f"{side}.jsonl"}, "models": models, "decompose": {"method": "sentences"},
                  "adjudicate": {"judges": ["checker"], "triage": False}, "controls": {"enabled": False},
                  "cache_dir": str(tmp_path / "cache")}
        (tmp_path / f"{side}.yaml").write_text(yaml.safe_dump(config))
        result = cli_inproc("run", str(tmp_path / f"{side}.yaml"), "--runs-dir", str(tmp_path / "runs" / side), "--json", "--no-progress",
                            cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        dirs[side] = json.loads(result.stdout)["run_dir"]
    return dirs


def _compare(tmp_path, dirs, *extra, models="b.yaml"):
    """--models: the user's own run config (its models, dataset, calibration and cache are what the re-asks read)."""
    return cli_inproc("compare", dirs["a"], dirs["b"], "--confirm", "3", "--models", str(tmp_path / models), "--json", *extra,
                      cwd=tmp_path)


def test_a_real_error_is_confirmed_and_a_forged_passage_is_never_shown(tmp_path):
    with ScriptedServer(panel_script({"checker": "good"})) as server:
        dirs = _runs(tmp_path, server)
        honest = _compare(tmp_path, dirs)
        assert honest.returncode == 1, honest.stdout + honest.stderr  # 1952 against 1937: a regression, confirmed
        # forge the candidate's passage so that a re-ask would read "1952" and call the claim supported
        path = f"{dirs['b']}/results.jsonl"
        lines = [json.loads(line) for line in open(path, encoding="utf-8")]
        for c in lines[0]["answers"][0]["claims"]:
            for cand in c["candidates"]:
                cand["excerpt"] = cand["excerpt"].replace("1937", "1952")
                for part in cand.get("parts", []):
                    part["excerpt"] = part["excerpt"].replace("1937", "1952")
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines))
        forged = _compare(tmp_path, dirs)
    assert forged.returncode == 1, forged.stdout + forged.stderr  # never a PASS bought with a forged passage
    assert "Traceback" not in forged.stderr
    confirmation = json.loads(forged.stdout)["confirmation"]
    (refused,) = confirmation["usage"]["refused_passages"]  # named, with the claim and the field
    assert "The bridge opened in 1952." in refused and "candidates[0]" in refused and "not re-asked" in refused
    (b,) = [c for c in confirmation["claims"] if c["side"] == "b"]
    assert b["label"] == "contradicted" and not b["decided"] and b["answered"] == 0  # kept as it was, never shown


def test_the_reasking_judge_comes_from_the_users_models_file_not_the_run_directory(tmp_path):
    with ScriptedServer(panel_script({"checker": "good"})) as server, ScriptedServer(panel_script({"checker": "lenient"})) as planted:
        dirs = _runs(tmp_path, server)
        # an edited run directory points its judge at another server, one that would call the regression supported
        for side in ("a", "b"):
            cfg_path = f"{dirs[side]}/config.yaml"
            cfg = yaml.safe_load(open(cfg_path, encoding="utf-8"))
            cfg["models"]["checker"]["api_base"] = planted.base_url
            open(cfg_path, "w", encoding="utf-8").write(yaml.safe_dump(cfg))
        result = _compare(tmp_path, dirs)
        planted_requests = planted.stats.requests
    assert result.returncode == 1, result.stdout + result.stderr  # the regression confirmed by the user's judge
    assert "Traceback" not in result.stderr
    assert planted_requests == 0  # the planted server was never asked
