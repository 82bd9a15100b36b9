"""Issue 48.2: every label a claim can end with (judge.verdicts.CLAIM_LABELS, unsure and judge_error included)
through every path that reads labels: judge score and its three reports, judge label (and its rerun), the
corrected rates from a filled sheet, judge compare with every claim gate, and the pytest plugin's asserts.

Runs are built as users build them (judge run of the deterministic judge on the bundled Hebrew sample with
gold claim labels, on its reference answers with human ratings, and on plain records with no gold whose ids
hold '#'), then each example gives every claim a drawn label (a run directory is an input: results.jsonl
edited as a person or a tool could) and `judge merge` makes the edited run whole (its summary from those
results). Whatever the labels: no traceback, no exception escapes, and each command exits as documented.
Also the reproductions of issue 48.2 (KeyError 'unsure' in scoring), 47.4 (sheet ids of the wrong level)
and 50.7-8 (record ids with '#', sheet lines that pass validate but crashed score)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judge.verdicts import CLAIM_LABELS, JUDGE_ERROR, LABELS, UNSUPPORTED, UNSURE
from tests.conftest import BUNDLED_SAMPLE, ROOT, cli_inproc

EXAMPLES = int(os.environ.get("JUDGE_PROPERTY_EXAMPLES", "0")) or None
SETTINGS = dict(deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
ANSWERS = ROOT / "judge" / "data" / "he_sample_answers.jsonl"
PLAIN = [  # ids that collided before item ids escaped '#': answer 0 of "q#0" and claim 0 of answer 0 of "q"
    {"id": "q", "question": "What is the capital of Peru?", "source": "Lima is the capital and largest city of Peru.", "answer": "Lima is the capital of Peru."},
    {"id": "q#0", "question": "Who wrote Hamlet?", "source": "Hamlet is a tragedy written by William Shakespeare.", "answer": "William Shakespeare wrote Hamlet. He wrote it in 1850."},
]


def _ok(result, *codes: int) -> None:
    out = result.stdout + result.stderr
    assert "Traceback" not in out, out[-3000:]
    assert result.returncode in codes, (result.args[3:6], result.returncode, out[-1500:])


def _run(tmp: Path, name: str, **fields) -> Path:
    config = tmp / f"{name}.yaml"
    config.write_text(yaml.safe_dump({"name": name, "decompose": {"method": "sentences"}, "adjudicate": {"judges": ["deterministic"]},
                                      "cache_dir": str(tmp / "cache"), **fields}, allow_unicode=True), encoding="utf-8")
    result = cli_inproc("run", str(config), "--runs-dir", str(tmp / name), "--no-progress")
    _ok(result, 0, 3)
    (run,) = (tmp / name).iterdir()
    return run


@pytest.fixture(scope="module")
def bases(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("bases")
    plain = tmp / "plain.jsonl"
    plain.write_text("".join(json.dumps(r) + "\n" for r in PLAIN), encoding="utf-8")
    return {
        "gold claims": _run(tmp, "gold", dataset={"path": str(BUNDLED_SAMPLE)}, answers={"path": str(ANSWERS)}),
        "human ratings": _run(tmp, "reference", dataset={"path": str(BUNDLED_SAMPLE)}, answers={"reference": True}),
        "no gold": _run(tmp, "plain", dataset={"path": str(plain)}),
    }


def _relabel(run: Path, labels) -> int:
    """Every claim of the run given the next label of ``labels`` (cycled); its verdicts say the same."""
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    k = 0
    for r in rows:
        for a in r["answers"]:
            for c in a["claims"]:
                label = labels[k % len(labels)]
                k += 1
                c["label"] = label
                if label in (JUDGE_ERROR, UNSURE, UNSUPPORTED):
                    c["evidence"] = []
                for v in c["verdicts"]:
                    v.update(label=label)
                    if label == JUDGE_ERROR:
                        v.update(how="error", error="RuntimeError: the scripted judge failed", evidence=[], evidence_ids=[])
    (run / "results.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return k


def _made(base: Path, work: Path, labels) -> Path:
    edited = work / "edited"
    shutil.copytree(base, edited)
    for name in ("labels.jsonl", "labels-answers.jsonl"):
        (edited / name).unlink(missing_ok=True)
    assert _relabel(edited, labels) > 0
    _ok(cli_inproc("merge", str(edited), "--runs-dir", str(work / "m")), 0, 3)  # 3: judge errors over max_error_rate
    (run,) = (work / "m").iterdir()
    return run


def _fill(sheet: Path, labels, level: str) -> None:
    """A person's labels on every line of a sheet (a ruling for a claim, grounded or not for an answer)."""
    rows = [json.loads(line) for line in sheet.read_text(encoding="utf-8").splitlines() if line.strip()]
    for i, r in enumerate(rows):
        r["label"] = labels[i % len(labels)] if level == "claim" else ("grounded" if i % 2 else "not_grounded")
    sheet.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


@settings(max_examples=EXAMPLES or 8, **SETTINGS)
@given(base=st.sampled_from(["gold claims", "human ratings", "no gold"]),
       labels=st.lists(st.sampled_from(CLAIM_LABELS), min_size=1, max_size=12),
       sheets=st.sampled_from(["none", "claim", "answer", "both"]),
       human=st.lists(st.sampled_from(LABELS), min_size=1, max_size=4))
def test_property_every_label_through_every_path(bases, tmp_path_factory, base, labels, sheets, human):
    from judge.pytest_plugin import GroundingError, assert_grounded, assert_no_regression

    work = tmp_path_factory.mktemp("labels")
    run = _made(bases[base], work, labels)
    scored = cli_inproc("score", str(run), "--json")
    _ok(scored, 0)
    scores = json.loads(scored.stdout)
    assert all((run / f).is_file() for f in ("scores.json", "report.md", "report.html"))
    assert sum(scores["overall"]["labels"].values()) == scores["overall"]["claims"]
    assert set(scores["overall"]["labels"]) <= set(CLAIM_LABELS)
    for name, g in (scores.get("gold_labels") or {}).items():  # unsure and judge_error: columns of their own, counted wrong
        assert set(g["confusion"]) == set(LABELS) and list(next(iter(g["confusion"].values())))[:4] == list(LABELS), name
    given = []
    for level in ("claim", "answer") if sheets == "both" else (sheets,) if sheets != "none" else ():
        args = ["label", str(run), "--n", "4", "--level", level]
        made = cli_inproc(*args)
        if made.returncode == 2 and "has no" in made.stderr:  # every claim a judge error: nothing to sample at this level
            continue
        _ok(made, 0)
        _ok(cli_inproc(*args), 0)  # a rerun of the same draw takes the sheet it wrote
        sheet = run / ("labels.jsonl" if level == "claim" else "labels-answers.jsonl")
        _fill(sheet, human, level)
        given += ["--labels", str(sheet)]
    if given:
        _ok(cli_inproc("score", str(run), *given), 0)
        assert (run / "scores.json").is_file() and (run / "report.html").is_file()
    for gate in (None, "new_unsure:0", "new_judge_error:0", "new_not_grounded:0", "corrected_hallucination_rate<=0.5"):
        _ok(cli_inproc("compare", str(bases[base]), str(run), *(["--gate", gate] if gate else []), "--md", str(work / "c.md")), 0, 1)
        _ok(cli_inproc("compare", str(run), str(bases[base]), *(["--gate", gate] if gate else [])), 0, 1)
    try:
        assert_grounded(run, max_hallucination=0.5)
    except GroundingError as e:
        assert str(e).strip()
    try:
        assert_no_regression(run, baseline=bases[base], gates=["new_unsure:0", "hallucination_rate:0"])
    except GroundingError as e:
        assert str(e).strip()


def test_a_gold_labelled_unsure_claim_is_scored_and_reported(bases, tmp_path):
    """The reproduction of issue 48.2: claims the no-model judge is unsure of, against gold claim labels,
    scored with intervals (a bootstrap draw with no unsure claim raised KeyError 'unsure'); the run wrote
    no scores.json and no reports, and exited 0."""
    run = _made(bases["gold claims"], tmp_path, [UNSURE, "supported", UNSURE, "contradicted"])
    result = cli_inproc("score", str(run), "--json")
    _ok(result, 0)
    scores = json.loads(result.stdout)
    panel = scores["gold_labels"]["panel"]
    assert list(next(iter(panel["confusion"].values()))) == [*LABELS, UNSURE]
    unsure = sum(row[UNSURE] for row in panel["confusion"].values())
    assert unsure == scores["overall"]["labels"][UNSURE] > 0
    right = sum(panel["confusion"][g][g] for g in LABELS)
    assert panel["accuracy"] == pytest.approx(right / panel["n"])  # an unsure claim counts as wrong
    assert "unsure" in (run / "report.md").read_text(encoding="utf-8")


def test_a_scoring_failure_is_one_line_and_exit_3(bases, tmp_path):
    """A finished run whose scoring fails (here: its gold answers file became a directory) exits 3 with one
    line saying so, never 0 with scores.json and the reports missing (judge merge scores as judge run does);
    judge score on it names the file in one line (exit 2: its input is wrong), never a traceback."""
    run = tmp_path / "shard"
    shutil.copytree(bases["gold claims"], run)
    config = yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8"))
    moved = tmp_path / "answers-moved.jsonl"
    config["answers"]["path"] = str(moved)
    (run / "config.yaml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    moved.mkdir()
    merged = cli_inproc("merge", str(run), "--runs-dir", str(tmp_path / "m"))
    assert merged.returncode == 3 and "Traceback" not in merged.stderr, (merged.returncode, merged.stderr)
    failed = [x for x in merged.stderr.splitlines() if x.startswith("scoring ")]
    assert len(failed) == 1 and "failed" in failed[0] and "not written" in failed[0], merged.stderr
    (out,) = (tmp_path / "m").iterdir()
    assert (out / "results.jsonl").is_file() and not (out / "scores.json").exists()
    result = cli_inproc("score", str(run))
    assert result.returncode == 2 and "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert str(moved) in result.stderr


def test_sheet_ids_of_the_wrong_level_are_refused_naming_file_line_and_field(bases, tmp_path):
    """Issue 47.4 and 50.8: an answer line naming a claim, a claim line naming an answer, a one-element
    claim_in_answer and a probability of 5e-324 are refused by judge validate and judge score alike (exit 2,
    the file, the line and the field), where score crashed or scored the claim's verdict as the answer's."""
    run = tmp_path / "run"
    shutil.copytree(bases["gold claims"], run)
    _ok(cli_inproc("label", str(run), "--n", "4", "--out", str(tmp_path / "c.jsonl")), 0)
    _ok(cli_inproc("label", str(run), "--n", "4", "--level", "answer", "--out", str(tmp_path / "a.jsonl")), 0)
    claim = json.loads((tmp_path / "c.jsonl").read_text(encoding="utf-8").splitlines()[0])
    answer = json.loads((tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()[0])
    cases = {
        "answer line naming a claim": (dict(answer, item=claim["item"], label="grounded"), "item"),
        "answer line with a claim id": (dict(answer, claim_id=0, item=answer["item"] + "#0", label="grounded"), "claim_id"),
        "claim line naming an answer": (dict(claim, item=answer["item"], claim_id=None, label="supported"), "claim_id"),
        "one-element claim_in_answer": (dict(claim, claim_in_answer=[3], label="supported"), "claim_in_answer"),
        "a vanishing probability": (dict(claim, inclusion_probability=5e-324, label="supported"), "inclusion_probability"),
    }
    for what, (line, field) in cases.items():
        sheet = tmp_path / "bad.jsonl"
        sheet.write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")
        for args in (["validate", str(sheet), "--run", str(run)], ["score", str(run), "--labels", str(sheet)]):
            result = cli_inproc(*args)
            assert result.returncode == 2 and "Traceback" not in result.stderr, (what, args[0], result.stderr)
            assert str(sheet) in result.stderr and "line 1" in result.stderr and f"field {field}" in result.stderr, (what, args[0], result.stderr)


def test_record_ids_with_hash_keep_claim_and_answer_ids_apart(bases, tmp_path):
    """Issue 50.7: record "q#0"'s answer and record "q"'s first claim had the same sheet id; a claim sheet and
    an answer sheet of such a run are read whole, every label counted."""
    run = tmp_path / "run"
    shutil.copytree(bases["no gold"], run)
    _ok(cli_inproc("label", str(run), "--n", "9"), 0)
    _ok(cli_inproc("label", str(run), "--n", "9", "--level", "answer"), 0)
    claims, answers = run / "labels.jsonl", run / "labels-answers.jsonl"
    ids = [json.loads(x)["item"] for f in (claims, answers) for x in f.read_text(encoding="utf-8").splitlines()]
    assert len(ids) == len(set(ids)) and "q%230#0" in ids and "q#0#0" in ids, ids
    _fill(claims, ["supported", "unsupported"], "claim")
    _fill(answers, [], "answer")
    result = cli_inproc("score", str(run), "--json")
    _ok(result, 0)
    levels = json.loads(result.stdout)["corrected"]["levels"]
    assert levels["claim"]["labelled"] == len(claims.read_text(encoding="utf-8").splitlines())
    assert levels["answer"]["labelled"] == len(answers.read_text(encoding="utf-8").splitlines())
