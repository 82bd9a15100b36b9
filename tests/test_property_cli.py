"""Issue 17.3, property-based: random and mutated datasets (plain JSONL, Hebrew-QA JSON), answers files and run
configs fed to the real CLI (in-process, error boundary included). Whatever the input, the command ends with
exit 0, 2 or 3, no exception escapes (no traceback), and a refused run leaves nothing behind that looks
finished (no summary.json, scores.json or report).

The examples are derandomized, so CI sees the same cases each time; JUDGE_PROPERTY_EXAMPLES=N runs a longer
set outside CI (bench/README.md gives the count and the time)."""

from __future__ import annotations

import copy
import json
import os
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from judge.cli import app
from judge.starter import EXAMPLE
from tests.conftest import ROOT

EXAMPLES = int(os.environ.get("JUDGE_PROPERTY_EXAMPLES", "0")) or None
HEBREW = json.loads((ROOT / "judge" / "data" / "he_sample.json").read_text(encoding="utf-8"))
ANSWERS = [json.loads(line) for line in (ROOT / "judge" / "data" / "he_sample_answers.jsonl").read_text(encoding="utf-8").splitlines()]
FINISHED = ("summary.json", "scores.json", "report.md", "report.html")
SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# strings users and attackers write: markup, HTML, bidi overrides, Hebrew, control characters, path tricks
NASTY = ["", " ", "[/x]", "[bold]", "<script>x</script>", "\u202eevil", "מכתש רמון", "\x00", "\t\n", "../../etc", "-1", "1e309",
         "NaN", "null", "{}", "x" * 300]
texts = st.one_of(st.sampled_from(NASTY), st.text(max_size=12))
leaves = st.one_of(st.none(), st.booleans(), st.integers(-(10**12), 10**12), st.floats(allow_nan=False), texts)
values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3), max_leaves=6)


def _slots(obj, keep: frozenset = frozenset()) -> list[tuple]:
    """Every (container, key) in a JSON tree, except under keys in ``keep``."""
    out = []
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for k, v in items:
        if k in keep:
            continue
        out.append((obj, k))
        out.extend(_slots(v, keep))
    return out


def mutate_tree(data, obj, keep: frozenset = frozenset()):
    """A few random edits of a JSON tree: replace a value, delete a key or item, duplicate an item (a repeated
    id), or swap in a nasty string."""
    obj = copy.deepcopy(obj)
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        slots = _slots(obj, keep)
        if not slots:
            break
        container, key = data.draw(st.sampled_from(slots), label="where")
        op = data.draw(st.sampled_from(["replace", "delete", "duplicate", "nasty"]), label="op")
        if op == "replace":
            container[key] = data.draw(values, label="value")
        elif op == "delete":
            del container[key]
        elif op == "duplicate" and isinstance(container, list):
            container.append(copy.deepcopy(container[key]))
        else:
            container[key] = data.draw(st.sampled_from(NASTY), label="nasty") if isinstance(container[key], str) or not data.draw(
                st.booleans(), label="nasty anywhere") else container[key]  # mostly where a string was: the record stays well-typed
    return obj


def mutate_bytes(data, raw: bytes) -> bytes:
    """Byte-level damage: cut the file, splice in junk (invalid UTF-8, a lone surrogate escape, deep nesting)."""
    op = data.draw(st.sampled_from(["none", "none", "truncate", "splice"]), label="bytes")
    if op == "none" or not raw:
        return raw
    at = data.draw(st.integers(0, len(raw)), label="at")
    if op == "truncate":
        return raw[:at]
    junk = data.draw(st.sampled_from([b"\xff\xfe", b"\\ud800", b'"\\udfff"', b"[" * 100, b"\n\n{", b"\x00", b"}]"]), label="junk")
    return raw[:at] + junk + raw[at:]


def dataset(data, mutate: bool = True) -> tuple[str, bytes]:
    """(file name, bytes): the plain JSONL starter example or the Hebrew-QA sample, mutated or not."""
    if not mutate:
        plain = data.draw(st.booleans(), label="plain")
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in EXAMPLE) if plain else json.dumps(HEBREW, ensure_ascii=False)
        return ("data.jsonl" if plain else "data.json"), text.encode("utf-8")
    if data.draw(st.booleans(), label="plain"):
        rows = mutate_tree(data, EXAMPLE)
        lines = [json.dumps(r, ensure_ascii=False) if isinstance(r, dict) else json.dumps(r) for r in rows] if isinstance(rows, list) else [json.dumps(rows)]
        return "data.jsonl", mutate_bytes(data, ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass"))
    records = mutate_tree(data, HEBREW)
    return "data.json", mutate_bytes(data, json.dumps(records, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def answers_file(data, mutate: bool = True) -> bytes:
    if not mutate:
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ANSWERS).encode("utf-8")
    rows = mutate_tree(data, ANSWERS)
    rows = rows if isinstance(rows, list) else [rows]
    return mutate_bytes(data, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8", "surrogatepass"))


def run_config(data, dataset_name: str, tmp: Path, with_answers: bool, mutate: bool = True) -> dict:
    """A deterministic run config (no model is called), mutated. Paths, the cache and the engine are kept out
    of the edits so that a case cannot write outside its folder or start Ray."""
    config = {
        "name": "prop",
        "dataset": {"path": dataset_name},
        "decompose": {"method": "sentences"},
        "adjudicate": {"judges": ["deterministic"]},
        "search": {"k": 5},
        "record_concurrency": 2,
    }
    if with_answers:
        config["answers"] = {"path": "answers.jsonl"}
    if mutate:
        config = mutate_tree(data, config, keep=frozenset({"path", "cache_dir", "engine", "ray", "models", "models_file", "generate", "dataset"}))
    if not isinstance(config, dict):
        config = {"config": config}
    config["cache_dir"] = str(tmp / "cache")
    config.pop("engine", None)
    return config


def check(result, runs: Path | None = None) -> None:
    event(f"{'run' if runs else 'validate'} exit {result.exit_code}")
    assert result.exit_code in (0, 2, 3), (result.exit_code, result.output[-2000:], repr(result.exception))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    if runs is None:
        return
    finished = [p for name in FINISHED for p in runs.glob(f"*/{name}")] if runs.exists() else []
    if result.exit_code == 2:
        assert not finished, f"refused (exit 2) but left {finished}: {result.output[-500:]}"
    else:
        (run_dir,) = runs.iterdir()
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
        assert summary["run"]["complete"] and (run_dir / "scores.json").exists()


@pytest.mark.slow
@settings(max_examples=EXAMPLES or 200, **SETTINGS)
@given(st.data())
def test_validate_any_dataset_or_answers_file(data):
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        name, raw = dataset(data)
        (tmp / name).write_bytes(raw)
        check(runner.invoke(app, ["validate", str(tmp / name)]))
        if data.draw(st.booleans(), label="answers"):
            (tmp / "answers.jsonl").write_bytes(answers_file(data))
            check(runner.invoke(app, ["validate", str(tmp / "answers.jsonl"), "--records", str(tmp / name)]))


@pytest.mark.slow
@settings(max_examples=EXAMPLES or 120, **SETTINGS)
@given(st.data())
def test_run_any_dataset_answers_and_config(data):
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        # one input broken at a time (a sixth of the cases none), so that a fair share of runs get to the end
        broken = data.draw(st.sampled_from(["nothing", "dataset", "dataset", "answers", "config", "config"]), label="broken")
        name, raw = dataset(data, broken == "dataset")
        (tmp / name).write_bytes(raw)
        with_answers = name == "data.json"  # the Hebrew-QA records carry no answers of their own
        if with_answers:
            (tmp / "answers.jsonl").write_bytes(answers_file(data, broken == "answers"))
        config = tmp / "config.yaml"
        config.write_text(yaml.safe_dump(run_config(data, name, tmp, with_answers, broken == "config"), allow_unicode=True), encoding="utf-8")
        runs = tmp / "runs"
        check(runner.invoke(app, ["run", str(config), "--runs-dir", str(runs), "--no-progress", "--limit", "3"]), runs)
