"""A run finishes in flat memory (issue 29.1): the summary's judge health from counted control verdicts, scores
from counts, scores.json written piece by piece with its per-answer rows read back from disk. Each streamed
form must give exactly what the whole-list form gave."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judge.controls import health as H
from judge.controls.health import ControlObservation, ControlTally, GateConfig, judge_health
from judge.jsonstream import DiskList, iter_json, json_parts
from judge.metrics.classification import classification, classification_counts
from judge.verdicts import CONTROL_LABELS, DETERMINISTIC, JUDGE_ERROR, LABELS, TRIAGE
from tests.conftest import ROOT


# -- judge health: the counted form against the list form it replaced ------------------------------------------
def _reference_recalls(rows, key, order, confidence):
    """judge.controls.health._recalls as it was over every observation (commit 40a0490)."""
    out = []
    for value in order:
        mine = [r for r in rows if getattr(r, key) == value]
        if not mine:
            continue
        correct = sum(H.caught(r.label, r.answered) for r in mine)
        instead = Counter(r.answered for r in mine if r.answered != r.label)
        out.append(H.LabelRecall(
            label=value, controls=len(mine), correct=correct, recall=correct / len(mine),
            ci95=list(H.exact_interval(correct, len(mine))), lower=H.lower_bound(correct, len(mine), confidence),
            answered_instead=dict(instead.most_common()),
        ))
    return out


def _reference_health(observations, real_labels=None, gate=None, enabled=True):
    """judge.controls.health.judge_health as it was, holding every observation (commit 40a0490; the verdict of a
    judge no control reached is taken from the module, whose wording has changed since)."""
    gate = gate or GateConfig()
    by_judge = {}
    for o in observations:
        by_judge.setdefault(o.judge, []).append(o)
    real_labels = real_labels or {}
    judges = []
    for name in sorted(set(by_judge) | set(real_labels)):
        rows = by_judge.get(name, [])
        n = len(rows)
        correct = sum(H.caught(r.label, r.answered) for r in rows)
        errors = sum(r.answered == JUDGE_ERROR for r in rows)
        by_label = _reference_recalls(rows, "label", CONTROL_LABELS, gate.confidence)
        by_kind = _reference_recalls(rows, "kind", sorted({r.kind for r in rows}), gate.confidence)
        blind = [H._miss(k, H._KIND_NAMES.get(k.label, k.label)) for k in by_kind if k.recall < H.WEAK and k.controls >= 2]
        rule = name == TRIAGE or name == DETERMINISTIC or (rows and all(r.how in H.RULE_HOWS for r in rows))
        gated = enabled and gate.gate and not rule
        if not gated:
            status = "reported"
            why = "a rule with no model: reported, not gated" if rule else "not gated"
            if rows:
                weak = [r for r in by_label if r.recall < H.WEAK]
                why = "; ".join([why] + [H._miss(r, r.label) for r in weak])
        elif not n:  # the words for a judge with no control are the module's own (they change; counting is not in them)
            status, why = "unchecked", judge_health([], {name: Counter()}, gate, enabled).judges[0].verdict
        else:
            status, why = H._assess(by_label, errors, gate)
        if blind and status != "failed":
            why += "; blind spots: " + "; ".join(blind)
        judges.append(H.JudgeHealth(
            judge=name, gated=gated, controls=n, correct=correct, errors=errors,
            accuracy=correct / n if n else None, accuracy_ci95=list(H.exact_interval(correct, n)) if n else None,
            by_label=by_label, by_kind=by_kind, real_labels=dict(sorted(real_labels.get(name, Counter()).items())),
            blind_spots=blind, status=status, verdict=why,
        ))
    return H.HealthReport(enabled=enabled, gate=gate.gate, floor=gate.floor, confidence=gate.confidence, judges=judges)


observation = st.builds(
    ControlObservation,
    judge=st.sampled_from(["judge-a", "judge-b", TRIAGE, DETERMINISTIC]),
    control_id=st.text(min_size=1, max_size=3),
    label=st.sampled_from(CONTROL_LABELS),
    kind=st.sampled_from(["number", "date", "entity", "negation", "subject", "claim", "odd"]),
    answered=st.sampled_from([*LABELS, JUDGE_ERROR]),
    how=st.sampled_from(["model", "deterministic", "triage", "error"]),
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    rows=st.lists(observation, max_size=120),
    gate=st.builds(GateConfig, gate=st.booleans(), floor=st.sampled_from([0.2, 0.4, 0.6, 0.9]), confidence=st.sampled_from([0.9, 0.95])),
    enabled=st.booleans(),
    real=st.dictionaries(st.sampled_from(["judge-a", "judge-c"]), st.dictionaries(st.sampled_from(LABELS), st.integers(0, 5)).map(Counter), max_size=2),
)
def test_health_from_counted_controls_is_the_health_from_every_control(rows, gate, enabled, real):
    expected = _reference_health(rows, real, gate, enabled).model_dump()
    assert judge_health(rows, real, gate, enabled).model_dump() == expected  # a list: counted inside
    tally = ControlTally()
    half = ControlTally.of(rows[: len(rows) // 2])  # two shards' tallies add up to the whole run's
    tally.update(half)
    tally.update(ControlTally.of(rows[len(rows) // 2:]))
    assert judge_health(tally, real, gate, enabled).model_dump() == expected


def test_a_tally_holds_one_entry_per_kind_of_verdict_not_per_control():
    tally = ControlTally.of(ControlObservation(judge="j", control_id=str(i), label="supported", kind="claim", answered="supported")
                            for i in range(10_000))
    assert tally.counts == {("j", "supported", "claim", "supported", "model"): 10_000}


# -- scores from counts -------------------------------------------------------------------------------------------
@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.sampled_from([*LABELS, "odd"]), st.sampled_from([*LABELS, JUDGE_ERROR, "other"])), max_size=60))
def test_classification_from_pair_counts_is_classification_from_the_lists(pairs):
    gold, predicted = [g for g, _ in pairs], [p for _, p in pairs]
    assert classification_counts(Counter(pairs)) == classification(gold, predicted)


# -- JSON written piece by piece -----------------------------------------------------------------------------------
json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(json_value, st.integers(1, 64))
def test_streamed_json_is_json_dumps_to_the_byte(value, size):
    assert "".join(json_parts(value, size=size)) == json.dumps(value, ensure_ascii=False, indent=1) + "\n"
    parts = list(json_parts(value, size=size))
    assert all(p.endswith("\n") for p in parts)  # whole lines: a secret is never cut between two parts


def test_pinned_scores_files_stream_to_the_same_bytes():
    for path in sorted((ROOT / "tests" / "fixtures" / "pinned").glob("*/*.json")):
        text = path.read_text(encoding="utf-8")
        value = json.loads(text)
        assert "".join(json_parts(value, size=256)) == json.dumps(value, ensure_ascii=False, indent=1) + "\n"


def test_a_disk_list_spills_to_a_file_and_reads_back_in_order(monkeypatch):
    import judge.jsonstream as js

    monkeypatch.setattr(js, "SPILL_BYTES", 200)
    rows = [{"record_id": f"r{i}", "s": "\ud800 \u05d0 \"q\"\n", "x": i / 7} for i in range(500)]
    d = DiskList(rows)
    assert d._file is not None and not d._lines  # on disk, nothing held
    assert len(d) == 500 and list(d) == rows and d == rows
    a, b = iter(d), iter(d)  # two readers at once
    assert next(a) == next(b) == rows[0]
    value = {"per_answer": d, "n": 1}
    assert "".join(iter_json(value)) == json.dumps({"per_answer": rows, "n": 1}, ensure_ascii=False, indent=1)
    assert not DiskList() and "".join(iter_json(DiskList())) == "[]"


@pytest.mark.parametrize("key, text", [(1, "1"), (2.5, "2.5"), (None, "null"), (False, "false")])
def test_streamed_json_writes_keys_as_json_does(key, text):
    assert "".join(iter_json({key: 1})) == json.dumps({key: 1}, indent=1)


# -- merge streams its runs ----------------------------------------------------------------------------------------
def test_merge_streams_two_runs_of_the_same_records_and_refuses_one_that_differs(tmp_path):
    from tests.conftest import cli_inproc

    config = ROOT / "configs" / "deterministic.yaml"
    dirs = []
    for name in ("a", "b"):
        out = cli_inproc("run", str(config), "--runs-dir", str(tmp_path / "runs"), "--name", name, "--json", "--no-progress")
        assert out.returncode in (0, 3), out.stderr
        dirs.append(Path(json.loads(out.stdout)["run_dir"]))
    merged = cli_inproc("merge", *map(str, dirs), "--runs-dir", str(tmp_path / "merged"), "--json")
    assert merged.returncode in (0, 3), merged.stderr
    merged_dir = Path(json.loads(merged.stdout)["run_dir"])
    assert (merged_dir / "results.jsonl").read_bytes() == (dirs[0] / "results.jsonl").read_bytes()  # each record once, in order
    lines = (dirs[1] / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    changed = json.loads(lines[1])
    changed["question"] = changed["question"] + " (edited)"
    lines[1] = json.dumps(changed, ensure_ascii=False, separators=(",", ":")) + "\n"
    (dirs[1] / "results.jsonl").write_text("".join(lines), encoding="utf-8")
    refused = cli_inproc("merge", *map(str, dirs), "--runs-dir", str(tmp_path / "merged2"), "--json")
    assert refused.returncode == 2 and f"record {changed['record_id']} differs between the runs" in refused.stderr
