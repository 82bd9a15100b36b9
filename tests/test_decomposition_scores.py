"""Free-verdict share and precision, decomposition drops and fallbacks, and the evidence ceiling in every
score, terminal summary and report (issue 24.5), with gold and without."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from judge.metrics.free import FreeVerdicts
from judge.results import JudgeVerdict
from judge.scoring.evidence import EvidenceCeilingSection
from judge.scoring.gold_labels import FreeVerdictsSection
from tests.conftest import cli_inproc

SOURCE = "The bridge opened in 1932. It was designed by John Bradfield. The city paid 6 million pounds for it."


def _v(label: str, how: str) -> JudgeVerdict:
    return JudgeVerdict(judge=how, model="m", family="f", label=label, how=how)


def test_the_free_share_counts_every_claim_gold_or_not():
    free = FreeVerdicts()
    free.add_claim([_v("supported", "triage")])
    free.add_claim([_v("unsupported", "deterministic")])
    free.add_claim([_v("supported", "model"), _v("supported", "deterministic")])
    free.add_claim([_v("supported", "model")])
    out = free.result()
    assert out == {"run": {"claims": 4, "triage": 1, "triage_share": 0.25, "no_model_call": 2, "no_model_call_share": 0.5}}
    block = FreeVerdictsSection.block(out, {})
    assert "not measured" in block.text and block.tables[0].rows == [[4, 1, 0.25, 2, 0.5]]
    assert "not measured" in EvidenceCeilingSection.block(None, {}).text


def _run(tmp_path: Path, gold: bool) -> tuple[Path, str]:
    answers = {
        "Would you like to know more? The bridge opened in 1932. Hope this helps!": [("The bridge opened in 1932.", "supported", 0, 26)],
        "1932": [],
        "It was designed by William Conrad.": [("It was designed by William Conrad.", "unsupported", None, None)],
    }
    questions = ["When did the bridge open?", "In which year did the bridge open?", "Who designed the bridge?"]
    lines = []
    for n, ((answer, claims), question) in enumerate(zip(answers.items(), questions)):
        row = {"id": f"r{n}", "question": question, "source": SOURCE, "answer": answer}
        if gold and claims:
            row["gold_claims"] = [{"text": t, "label": lbl, "support": [{"start_char": s, "end_char": e}] if s is not None else []} for t, lbl, s, e in claims]
        lines.append(json.dumps(row))
    (tmp_path / "data.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = {"name": "dec", "dataset": {"path": "data.jsonl"}, "decompose": {"method": "sentences"}, "adjudicate": {"judges": ["deterministic"]},
              "cache_dir": str(tmp_path / "cache")}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    result = cli_inproc("run", str(tmp_path / "config.yaml"), "--runs-dir", str(tmp_path / "runs"), "--no-progress")
    assert result.returncode in (0, 1), result.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    return run_dir, result.stdout


def test_a_run_without_gold_shows_drops_share_and_what_is_not_measured(tmp_path):
    run_dir, terminal = _run(tmp_path, gold=False)
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["claims_dropped"] == 2 and summary["claims_dropped_by_reason"] == {"a pleasantry, no statement": 1, "a question": 1}
    assert summary["claims_read_with_question"] == 1  # "1932", read with "In which year did the bridge open?"
    scores = json.loads((run_dir / "scores.json").read_text(encoding="utf-8"))
    dec = scores["decomposition"]
    assert (dec["answers"], dec["claims"], dec["read_with_question"], dec["dropped"], dec["fallbacks"]) == (3, 3, 1, 2, 0)
    assert [e["reason"] for e in dec["examples"]] == ["a question", "a pleasantry, no statement"]
    run = scores["free_verdicts"]["run"]
    assert run["claims"] == 3 and run["no_model_call"] == 3 and run["no_model_call_share"] == 1.0
    assert "triage" not in scores["free_verdicts"] and scores["evidence_ceiling"] is None
    assert "decomposition: 3 claims, 1 read with the question; dropped 2 (a pleasantry, no statement 1; a question 1)" in terminal
    assert "free verdicts: triage" in terminal and "precision not measured (no gold claim labels)" in terminal
    assert "evidence ceiling: not measured (no gold support spans)" in terminal
    for name in ("report.md", "report.html"):
        text = (run_dir / name).read_text(encoding="utf-8")
        assert "Decomposition: claims kept" in text and "Would you like to know more?" in text
        assert "the precision of the free verdicts is not measured" in text and "the ceiling is not measured" in text
    assert "2 dropped by decomposition" in (run_dir / "report.html").read_text(encoding="utf-8")
    claims = [c for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines() for a in json.loads(line)["answers"] for c in a["claims"]]
    short = next(c for c in claims if c.get("reads_question"))
    assert short["text"] == "In which year did the bridge open? 1932" and short["answer_spans"][0]["excerpt"] == "1932"


def test_a_run_with_gold_shows_precision_and_the_ceiling_in_the_terminal(tmp_path):
    run_dir, terminal = _run(tmp_path, gold=True)
    scores = json.loads((run_dir / "scores.json").read_text(encoding="utf-8"))
    free = scores["free_verdicts"]
    assert free["claims"] == 2 and free["run"]["claims"] == 3
    assert scores["evidence_ceiling"]["claims"] == 1
    assert "precision against gold: triage" in terminal
    assert f"evidence ceiling: {scores['evidence_ceiling']['ceiling']:.4f} of 1 gold-supported claims" in terminal
