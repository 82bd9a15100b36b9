"""Claim-level diffs in ``judge compare`` (issue 13.3): matching claims across runs, newly ungrounded claims
named by the gate with the path of run B and its report."""

import json
from pathlib import Path

import pytest
import yaml

from judge.models import Span
from judge.results import AnswerResult, ClaimResult, Decomposition, RecordResult
from judge.scoring.claim_diff import claim_diff, match_claims
from tests.conftest import BUNDLED_SAMPLE, ROOT, cli_inproc

BUNDLED_ANSWERS = ROOT / "judge" / "data" / "he_sample_answers.jsonl"
PLANTED = " להקת פינגווינים נודדת צפונה בכל חורף בשנת 1999 בהתפרצות."  # "penguins migrate north each winter in 1999 in an eruption": nowhere in the sources


def _answer(text: str, claims: list[tuple[str, str]], model: str = "m") -> AnswerResult:
    out = []
    for i, (claim, label) in enumerate(claims):
        start = text.find(claim)
        spans = [Span(doc_id="answer", start_char=start, end_char=start + len(claim), excerpt=claim)] if start >= 0 else []
        out.append(ClaimResult(claim_id=i, text=claim, answer_spans=spans, label=label))
    return AnswerResult(model=model, family="f", answer=text, decomposition=Decomposition(method="sentences"), claims=out)


def test_same_answer_matches_by_offsets_and_a_rewrite_by_similarity():
    text = "The line opened in 2019. It runs every 10 minutes."
    a = _answer(text, [("The line opened in 2019.", "supported"), ("It runs every 10 minutes.", "supported")])
    b = _answer(text, [("The line opened in 2019.", "unsupported"), ("It runs every 10 minutes.", "supported")])
    pairs = match_claims(a, b)
    assert [(x.text, y.label, how) for x, y, how, _ in pairs] == [("The line opened in 2019.", "unsupported", "offsets"), ("It runs every 10 minutes.", "supported", "offsets")]
    rewritten = _answer("The line opened in 2021. Tickets cost a fortune on weekends.",
                        [("The line opened in 2021.", "contradicted"), ("Tickets cost a fortune on weekends.", "unsupported")])
    pairs = match_claims(a, rewritten)
    similar = [(x.text, y.text) for x, y, how, sim in pairs if how == "similar"]
    assert similar == [("The line opened in 2019.", "The line opened in 2021.")]
    assert sorted((x is None, y is None) for x, y, _, _ in pairs) == [(False, False), (False, True), (True, False)]


def test_diff_sorts_claims_into_newly_ungrounded_fixed_flips_and_one_run_only():
    text = "A is 1. B is 2. C is 3."
    a = _answer(text, [("A is 1.", "supported"), ("B is 2.", "unsupported"), ("C is 3.", "partially_supported")])
    b = _answer("A is 1. B is 2. D is something else entirely.", [("A is 1.", "contradicted"), ("B is 2.", "supported"), ("D is something else entirely.", "unsupported")])
    ra = RecordResult(record_id="r", question="q", language="en", answers=[a])
    rb = RecordResult(record_id="r", question="q", language="en", answers=[b])
    diff = claim_diff({"r": ra}, {"r": rb}, ["r"])
    assert diff.matched == 2
    assert [(c.claim, c.a, c.b) for c in diff.newly_ungrounded] == [("A is 1.", "supported", "contradicted"), ("D is something else entirely.", None, "unsupported")]
    assert [(c.claim, c.a, c.b) for c in diff.fixed] == [("B is 2.", "unsupported", "supported"), ("C is 3.", "partially_supported", None)]
    assert {(c.claim, c.a, c.b) for c in diff.flips} == {("A is 1.", "supported", "contradicted"), ("B is 2.", "unsupported", "supported")}
    assert [c.claim for c in diff.only_a] == ["C is 3."] and [c.claim for c in diff.only_b] == ["D is something else entirely."]


def _config(tmp_path: Path, name: str, answers: Path) -> Path:
    cfg = {"name": name, "dataset": {"path": str(BUNDLED_SAMPLE)}, "answers": {"path": str(answers)}, "decompose": {"method": "sentences"},
           "adjudicate": {"judges": ["deterministic"]}, "cache_dir": str(tmp_path / "cache")}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True))
    return path


def _run(tmp_path: Path, name: str, answers: Path) -> str:
    result = cli_inproc("run", str(_config(tmp_path, name, answers)), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["run_dir"]


def _rewritten(tmp_path: Path, model: str, records: int) -> Path:
    """The bundled answers with ``PLANTED`` appended to ``model``'s answer in the first ``records`` records."""
    rows = [json.loads(line) for line in BUNDLED_ANSWERS.read_text(encoding="utf-8").splitlines()]
    seen = []
    for row in rows:
        if row["model"] == model and len(seen) < records:
            row["answer"] += PLANTED
            seen.append(row["record_id"])
    path = tmp_path / f"answers-{records}.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_compare_names_the_claim_a_rewritten_answer_made_ungrounded(tmp_path):
    base = _run(tmp_path, "base", BUNDLED_ANSWERS)
    one = _run(tmp_path, "one", _rewritten(tmp_path, "faithful-paraphraser", 1))
    out = json.loads(cli_inproc("compare", base, one, "--json").stdout)
    new = out["claims"]["newly_ungrounded"]
    assert [(c["record_id"], c["model"], c["claim"].strip(), c["a"]) for c in new] == [("he-pkg-001", "faithful-paraphraser", PLANTED.strip(), None)]
    assert new[0]["b"] in ("partially_supported", "unsupported", "contradicted")  # a year the source never writes: never supported
    assert out["claims"]["matched"] > 0 and out["claims"]["only_a"] == []
    shown = cli_inproc("compare", base, one)
    # no --gate: the documented default gates decide (issue 26), and the claim-level one fails on the planted claim
    assert shown.returncode == 1 and "newly ungrounded in B" in shown.stdout and "בהתפרצות" in shown.stdout
    assert "FAIL" in shown.stdout and "new_not_grounded:0 decides" in shown.stdout
    # every record rewritten: the drop is real, the gate fails and names the claims, run B and its report
    every = _run(tmp_path, "every", _rewritten(tmp_path, "faithful-paraphraser", 3))
    gate = cli_inproc("compare", base, every, "--gate", "hallucination_rate:0.01", "--md", str(tmp_path / "compare.md"))
    assert gate.returncode == 1, gate.stdout
    md = (tmp_path / "compare.md").read_text(encoding="utf-8")
    assert "**FAIL** hallucination\\_rate" in md or "**FAIL** hallucination_rate" in md
    assert "## Newly ungrounded in B (3)" in md and md.count(PLANTED.strip()) >= 3
    fail = next(line for line in gate.stdout.replace("\n", " ").split("FAIL ")[1:])
    assert "3 claims newly not grounded" in fail and "3 claims newly ungrounded in B" in gate.stdout  # the table above names them
    assert str(Path(every) / "report.html") in gate.stdout.replace("\n", "")
    assert "improved" not in fail and "got worse by" in fail
    # a narrow terminal folds the claim text but never cuts a label
    narrow = cli_inproc("compare", base, every, env={"COLUMNS": "60"})
    labels = {c["b"] for c in json.loads(cli_inproc("compare", base, every, "--json").stdout)["claims"]["newly_ungrounded"]}
    cells = {cell.strip() for line in narrow.stdout.splitlines() for cell in line.split("│")}
    assert labels and labels <= cells


def test_an_improvement_reads_improved_and_intervals_have_four_decimals(tmp_path):
    base = _run(tmp_path, "base", BUNDLED_ANSWERS)
    worse = _run(tmp_path, "worse", _rewritten(tmp_path, "faithful-paraphraser", 3))
    out = json.loads(cli_inproc("compare", worse, base, "--gate", "faithfulness:0.01", "--json").stdout)
    why = out["gates"][0]["why"]
    assert not out["gates"][0]["failed"] and "faithfulness improved by" in why and "-" not in why.split("improved by ")[1][:3]
    assert "0 of 3 records worse, 3 better" in why  # the sign test's counts; the interval is the table's
    table = cli_inproc("compare", worse, base, "--gate", "faithfulness:0.01", env={"COLUMNS": "200"}).stdout
    row = next(line for line in table.splitlines() if line.startswith("│ faithfulness"))
    lo, hi = row.split("[")[1].split("]")[0].split(", ")
    assert len(lo.split(".")[1]) == 4 and len(hi.split(".")[1]) == 4 and float(lo) > 0  # improved: the interval is above zero
    fixed = out["claims"]["fixed"]  # the planted claims are gone in B: fixed
    assert [(c["claim"].strip(), c["b"]) for c in fixed] == [(PLANTED.strip(), None)] * 3


def test_the_pytest_plugins_regression_failure_names_the_claims_and_the_report(tmp_path):
    from judge.pytest_plugin import GroundingError, assert_no_regression

    base = _run(tmp_path, "base", BUNDLED_ANSWERS)
    every = _run(tmp_path, "every", _rewritten(tmp_path, "faithful-paraphraser", 3))
    with pytest.raises(GroundingError) as failed:
        assert_no_regression(every, baseline=base, gates=["hallucination_rate:0.01"])
    message = str(failed.value)
    assert "hallucination_rate" in message and PLANTED.strip()[:10] in message and "he-pkg-001" in message
    assert str(Path(every) / "report.html") in message.replace("\n", "")
    assert_no_regression(base, baseline=base, gates=["hallucination_rate:0.01"])  # the same run passes


def test_a_claim_that_gets_worse_while_staying_ungrounded_is_listed():
    text = "A is 1. B is 2."
    a = _answer(text, [("A is 1.", "partially_supported"), ("B is 2.", "contradicted")])
    b = _answer(text, [("A is 1.", "contradicted"), ("B is 2.", "unsupported")])
    diff = claim_diff({"r": RecordResult(record_id="r", question="q", language="en", answers=[a])},
                      {"r": RecordResult(record_id="r", question="q", language="en", answers=[b])}, ["r"])
    assert diff.newly_ungrounded == [] and diff.fixed == []
    assert [(c.claim, c.a, c.b) for c in diff.worsened] == [("A is 1.", "partially_supported", "contradicted")]


def test_comparing_runs_with_no_record_in_common_is_refused(tmp_path):
    base = _run(tmp_path, "base", BUNDLED_ANSWERS)
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"id": "elsewhere", "question": "q?", "source": "The sky is blue.", "answer": "The sky is blue."}) + "\n")
    cfg = tmp_path / "other.yaml"
    cfg.write_text(yaml.safe_dump({"name": "other", "dataset": {"path": str(other)}, "cache_dir": str(tmp_path / "cache")}))
    result = cli_inproc("run", str(cfg), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress")
    unrelated = json.loads(result.stdout)["run_dir"]
    refused = cli_inproc("compare", base, unrelated, "--gate", "faithfulness:0.1")
    assert refused.returncode == 2 and "no finished record in common" in refused.stderr
    unwritable = cli_inproc("compare", base, base, "--md", str(tmp_path))
    assert unwritable.returncode == 2 and "--md" in unwritable.stderr and "Traceback" not in unwritable.stderr
