"""Issue 28.1, property-based, the commands that read run directories (score, compare, rejudge, agreement,
merge, baseline) and the flags and paths of every command. A finished run is made once; each example damages
one of its files (a JSON tree edit or byte-level damage: deep nesting, a lone surrogate, junk, a cut) or gives
a hostile flag value, and drives one command. Whatever the input: exit 0 to 3, no exception escapes, no
traceback, and a refused command (exit 2) leaves every file it was given as it was and writes nothing.

The examples are derandomized (CI sees the same cases); JUDGE_PROPERTY_EXAMPLES=N runs a longer set."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from judge.starter import EXAMPLE
from tests.conftest import BUNDLED_SAMPLE
from tests.test_boundary import cli
from tests.test_property_cli import mutate_bytes, mutate_tree

EXAMPLES = int(os.environ.get("JUDGE_PROPERTY_EXAMPLES", "0")) or None
SETTINGS = dict(deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
RUN_FILES = ("results.jsonl", "summary.json", "run.json", "config.yaml", "calls.jsonl", "scores.json", "selected.ids")
# flag values users and attackers write: huge and non-finite numbers, surrogates, bidi and escape sequences, paths
HOSTILE_FLAGS = ["9" * 40, "-1", "0", "nan", "inf", "1e309", "-0", "", " ", "\udcff", "a\ud800", "\u202eevil", "\x1b[2J",
                 "../../x", "/dev/null", "x" * 5000, "faithfulness:nan", "new_not_grounded:-1", "hallucination_rate:inf",
                 "accuracy:1e999", "nope:1", ":", "new_contradicted:99999999999999999999"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """One finished deterministic run (controls on, as the defaults have them) of the starter's three records."""
    tmp = tmp_path_factory.mktemp("finished")
    data = tmp / "data.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in EXAMPLE), encoding="utf-8")
    config = tmp / "run.yaml"
    config.write_text(yaml.safe_dump({"name": "p", "dataset": {"path": str(data)}, "decompose": {"method": "sentences"},
                                      "adjudicate": {"judges": ["deterministic"]}, "cache_dir": str(tmp / "cache")}), encoding="utf-8")
    result = cli("run", config, "--runs-dir", tmp / "runs", "--no-progress")
    assert result.exit_code == 0, result.output[-2000:]
    (run,) = (tmp / "runs").iterdir()
    return run


def _tree(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with its content's hash (run.lock is a lock, its content nothing)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.is_symlink()}


def _damage(data, path: Path) -> None:
    raw = path.read_bytes()
    if data.draw(st.booleans(), label="tree edit") and path.suffix in (".json", ".jsonl", ".yaml"):
        text = raw.decode("utf-8")
        if path.suffix == ".jsonl":
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
            rows = mutate_tree(data, rows) if rows else rows
            rows = rows if isinstance(rows, list) else [rows]
            raw = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8", "surrogatepass")
        elif path.suffix == ".json":
            raw = json.dumps(mutate_tree(data, json.loads(text)), ensure_ascii=False).encode("utf-8", "surrogatepass")
        else:
            tree = mutate_tree(data, yaml.safe_load(text))
            raw = yaml.safe_dump(tree, allow_unicode=True).encode("utf-8", "surrogatepass")
    path.write_bytes(mutate_bytes(data, raw))


def _check(args, result, before: dict[str, str], after: dict[str, str]) -> None:
    event(f"{args[0]} exit {result.exit_code}")
    assert result.exit_code in (0, 1, 2, 3), (args, result.exit_code, result.output[-1500:], repr(result.exception))
    assert result.exception is None or isinstance(result.exception, SystemExit), (args, repr(result.exception))
    assert "Traceback" not in result.output, (args, result.output[-1500:])
    if result.exit_code == 2:
        changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
        assert not changed, f"{args[0]} refused (exit 2) but changed {sorted(changed)}: {result.output[-400:]}"


COMMANDS = ("score", "compare", "compare-self", "rejudge", "agreement", "merge", "baseline", "resume")


def _argv(command: str, a: Path, b: Path, work: Path, flag: str | None) -> list:
    f = flag if flag is not None else None
    return {
        "score": ["score", a] + (["--json"] if f is None else []),
        "compare": ["compare", a, b, "--md", work / "cmp.md"] + (["--gate", f] if f is not None else []),
        "compare-self": ["compare", a, a] + (["--prompt-a", f] if f is not None else []),
        "rejudge": ["rejudge", a, "--judge", "deterministic", "--runs-dir", work / "runs", "--no-cache"]
        + (["--name", f] if f is not None else []),
        "agreement": ["agreement", a, b, "--out", work / ("agreement.json" if f is None else f"{f[:40]}.json")],
        "merge": ["merge", a, b, "--runs-dir", work / "runs"] + (["--name", f] if f is not None else []),
        "baseline": ["baseline", "save", a, "--name", f if f is not None else "main", "--baselines-dir", work / "baselines"],
        "resume": ["run", b / "config.yaml", "--resume", a, "--no-progress"] + (["--limit", f] if f is not None else []),
    }[command]


@settings(max_examples=EXAMPLES or 60, **SETTINGS)
@given(st.data())
def test_property_run_directory_commands_take_any_damaged_run(finished, tmp_path_factory, data):
    """One file of run A damaged (or none), run B intact, one command; a hostile flag value in a third of the
    cases."""
    work = tmp_path_factory.mktemp("w")
    a, b = work / "a", work / "b"
    shutil.copytree(finished, a)
    shutil.copytree(finished, b)
    damaged = data.draw(st.sampled_from([None, *RUN_FILES]), label="damaged file")
    if damaged is not None and (a / damaged).exists():
        _damage(data, a / damaged)
    command = data.draw(st.sampled_from(COMMANDS), label="command")
    flag = data.draw(st.sampled_from(HOSTILE_FLAGS), label="flag") if data.draw(st.integers(0, 2), label="hostile flag?") == 0 else None
    args = _argv(command, a, b, work, flag)
    before = _tree(work)
    result = cli(*args)
    _check(args, result, before, _tree(work))


@settings(max_examples=EXAMPLES or 40, **SETTINGS)
@given(flag=st.one_of(st.sampled_from(HOSTILE_FLAGS), st.text(max_size=30)), where=st.integers(0, 14))
def test_property_hostile_flag_values_in_every_command(finished, tmp_path_factory, flag, where):
    """A hostile value in a flag of each kind (a number, a name, a path, a gate) of the commands that take one."""
    work = tmp_path_factory.mktemp("f")
    a = work / "a"
    shutil.copytree(finished, a)
    config = a / "config.yaml"
    cases = [
        ["run", config, "--runs-dir", work / "runs", "--no-progress", "--limit", flag],
        ["run", config, "--runs-dir", work / "runs", "--no-progress", "--shard", flag],
        ["run", config, "--runs-dir", work / "runs", "--no-progress", "--name", flag],
        ["compare", a, a, "--gate", flag],
        ["compare", a, a, "--baselines-dir", work / "none", "--prompt-b", flag],
        ["rejudge", a, "--judge", flag, "--runs-dir", work / "runs"],
        ["rejudge", a, "--judge", "deterministic", "--runs-dir", work / "runs", "--controls-per-label", flag],
        ["run", config, "--runs-dir", work / "runs", "--no-progress", "--min-faithfulness", flag],
        ["run", config, "--runs-dir", work / "runs", "--no-progress", "--max-hallucination", flag],
        ["run", config, "--runs-dir", work / "runs", "--no-progress", "--baseline", flag, "--baselines-dir", work / "none"],
        ["run", config, "--runs-dir", work / "runs", "--no-progress", "--engine", flag],
        ["search-eval", BUNDLED_SAMPLE, "--k", flag],
        ["baseline", "save", a, "--name", flag, "--baselines-dir", work / "baselines"],
        ["init", work / "new" / flag[:60]],
        ["merge", a, "--name", flag, "--runs-dir", work / "runs"],
    ]
    args = cases[where]
    before = _tree(work)
    result = cli(*args)
    _check(args, result, before, _tree(work))


@pytest.mark.parametrize("edit", ["delete overall.claims", "by_model a string", "judge_health.judges a number"])
def test_a_hand_edited_summary_is_one_line_naming_the_file_and_field(finished, tmp_path, edit):
    """Found by the property test above: `judge score` of a run whose summary.json lost a key raised a raw
    pydantic ValidationError (exit 1, a dump). Every part of summary.json that is read as a typed value goes
    through Run.summary_part: exit 2, one line naming the file and the field, nothing written."""
    run = tmp_path / "a"
    shutil.copytree(finished, run)
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    if edit == "delete overall.claims":
        del summary["overall"]["claims"]
        field = "overall.claims"
    elif edit == "by_model a string":
        summary["by_model"] = "x"
        field = "by_model"
    else:
        summary["judge_health"]["judges"] = 5
        field = "judge_health.judges"
    (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    before = _tree(tmp_path)
    readers = [["score", run]] + ([["compare", run, run]] if field.startswith("judge_health") else [])  # compare reads judge health
    for args in readers:
        result = cli(*args)
        assert result.exit_code == 2 and isinstance(result.exception, SystemExit), (args, result.output, result.exception)
        out = result.output.strip()
        assert "\n" not in out and "summary.json" in out and f"field {field}" in out, out
        assert _tree(tmp_path) == before


@settings(max_examples=EXAMPLES or 40, **SETTINGS)
@given(st.data())
def test_property_the_python_api_returns_a_run_or_raises_the_projects_error(tmp_path_factory, data):
    """judge.evaluate given mutated records, answers and config dicts (deep nesting, surrogates, huge numbers,
    wrong types, control and bidi characters): it returns a Run or raises judge.InputError (one line), never
    another exception, and a refusal writes no run directory."""
    import judge

    work = tmp_path_factory.mktemp("api")
    records = [dict(r) for r in EXAMPLE]
    answers = None
    config: object = {"adjudicate": {"judges": ["deterministic"]}, "decompose": {"method": "sentences"}}
    target = data.draw(st.sampled_from(["records", "answers", "config", "nothing"]), label="mutated")
    if target == "records":
        records = mutate_tree(data, records)
    elif target == "answers":
        answers = mutate_tree(data, {r["id"]: r.pop("answer") for r in records if isinstance(r, dict) and "answer" in r})
    elif target == "config":
        config = mutate_tree(data, config)
    if isinstance(config, dict):
        config["cache_dir"] = str(work / "cache")  # never the user's cache
    runs = work / "runs"
    try:
        run = judge.evaluate(config, records=records, answers=answers, runs_dir=runs, reports=False)
    except judge.InputError as e:
        event(f"api refused ({target})")
        for line in str(e).strip().splitlines():  # one line per problem, each naming what the caller gave
            assert line and "Traceback" not in line and ".inputs" not in line, str(e)
        assert not runs.exists() or not any(runs.glob("*/summary.json")), "refused, but a run was written"
    else:
        event(f"api ran ({target})")
        assert run.summary["run"]["complete"]
