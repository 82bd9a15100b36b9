"""Issue 17.7 and 17.10, the smaller ones: a result line of another schema version is refused naming file and
line; a panel judge that failed shows its errors in the terminal summary; every recorded answer model whose
family cannot be told is warned about in the terminal and listed in summary.json, where a model judge runs
(issue 35.7: no model judge, no word of it)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from judge.cli import app
from judge.testing.scripts import pipeline_model
from judge.testing.server import Reply
from tests.conftest import BUNDLED_SAMPLE, ROOT

BUNDLED_ANSWERS = ROOT / "judge" / "data" / "he_sample_answers.jsonl"
DETERMINISTIC = ROOT / "configs" / "deterministic.yaml"


def cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _run(tmp_path: Path) -> Path:
    result = cli("run", DETERMINISTIC, "--limit", "2", "--runs-dir", tmp_path / "runs", "--no-progress")
    assert result.exit_code in (0, 3), result.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    return run_dir


def test_a_result_line_of_an_unknown_schema_version_is_refused(tmp_path):
    run_dir = _run(tmp_path)
    results = run_dir / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines()
    second = json.loads(lines[1])
    second["schema_version"] = 99
    lines[1] = json.dumps(second, ensure_ascii=False)
    results.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for args in (("score", run_dir), ("run", DETERMINISTIC, "--limit", "2", "--resume", run_dir, "--no-progress")):
        result = cli(*args)
        assert result.exit_code == 2 and isinstance(result.exception, SystemExit), (result.output, result.exception)
        assert f"{results}: line 2 (record {second['record_id']}) has schema_version 99" in result.output


def test_recorded_answers_of_unknown_family_are_warned_about_in_the_terminal_and_summary(scripted_server, tmp_path):
    # no model judge: the cross-family rule concerns none, so nothing is said of it (issue 35.7)
    run_dir = _run(tmp_path)
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["unknown_family_answer_models"] == []
    quiet = cli("run", DETERMINISTIC, "--limit", "2", "--runs-dir", tmp_path / "quiet", "--no-progress")
    assert "cannot tell the model family" not in quiet.output and "cannot tell the model family" not in (quiet.stderr or "")
    # a model judge: the answers whose family cannot be told are named in the terminal and the summary
    server = scripted_server(pipeline_model())
    unknown = tmp_path / "unknown.jsonl"  # the bundled answers say family human: without it, no family can be told
    unknown.write_text("".join(json.dumps({k: v for k, v in json.loads(line).items() if k != "family"}, ensure_ascii=False) + "\n"
                               for line in BUNDLED_ANSWERS.read_text(encoding="utf-8").splitlines()), encoding="utf-8")
    config = tmp_path / "judged.yaml"
    config.write_text(
        f"name: judged\ndataset: {{path: {BUNDLED_SAMPLE}}}\nanswers: {{path: {unknown}}}\nlimit: 2\n"
        f"models:\n  judge-b: {{model: openai/judge-b, api_base: '{server.base_url}', family: fam-b}}\n"
        f"adjudicate: {{judges: [judge-b], triage: false}}\ncache_dir: {tmp_path / 'cache'}\ncontrols: {{gate: false}}\n"
    )
    result = cli("run", config, "--runs-dir", tmp_path / "again", "--no-progress")
    table_part = result.output[result.output.index("WARNING: cannot tell"):]
    assert "faithful-paraphraser, hallucinator" in table_part.splitlines()[0]
    (judged,) = (tmp_path / "again").iterdir()
    assert json.loads((judged / "summary.json").read_text(encoding="utf-8"))["unknown_family_answer_models"] == ["faithful-paraphraser", "hallucinator"]
    # answers that say their family are checked and not listed
    rows = [json.loads(line) for line in BUNDLED_ANSWERS.read_text(encoding="utf-8").splitlines()]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({**r, "family": "fam-x"}, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    config = tmp_path / "known.yaml"
    config.write_text(f"name: known\ndataset: {{path: {BUNDLED_SAMPLE}}}\nanswers: {{path: {answers}}}\nlimit: 2\n"
                      f"cache_dir: {tmp_path / 'cache'}\ncontrols: {{gate: false}}\n")
    result = cli("run", config, "--runs-dir", tmp_path / "known", "--no-progress", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["unknown_family_answer_models"] == []


def test_a_failed_panel_judge_shows_its_errors_in_the_summary_table(scripted_server, tmp_path):
    server = scripted_server(lambda request, n: Reply(status=500))  # the LLM judge fails every call
    config = tmp_path / "panel.yaml"
    config.write_text(
        f"name: panel\ndataset: {{path: {BUNDLED_SAMPLE}}}\nanswers: {{path: {BUNDLED_ANSWERS}}}\nlimit: 2\n"
        f"models:\n  judge-b: {{model: openai/judge-b, api_base: '{server.base_url}', family: fam-b, max_attempts: 1, timeout: 5}}\n"
        f"adjudicate: {{judges: [judge-b, deterministic], triage: false}}\ncache_dir: {tmp_path / 'cache'}\ncontrols: {{gate: false}}\n"
    )
    result = cli("run", config, "--runs-dir", tmp_path / "runs", "--no-progress")
    assert result.exit_code in (0, 3), result.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    errors = summary["by_judge"]["judge-b"]["labels"]["judge_error"]
    assert errors > 0 and summary["overall"]["labels"]["judge_error"] == 0  # the panel's labels hide it
    row = next(line for line in result.output.splitlines() if "judge judge-b" in line)
    claims = summary["by_judge"]["judge-b"]["claims"]
    assert f"{claims} " in row and row.split("│")[3].strip().endswith(f"/{errors}")  # S/P/U/C/E, E last
    assert any("judge deterministic" in line for line in result.output.splitlines())
