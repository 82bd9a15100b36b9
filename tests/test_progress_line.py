"""The progress line a person reads while a run works (issue 46.4): one line at 80 columns, the time left once
a record has finished, and which model does what ("answering" while the answerer answers, "judging" while
the judge judges), through the real `judge run` path with a scripted server as both models."""

from __future__ import annotations

import re

from rich.cells import cell_len

from judge.testing.scripts import pipeline_model
from judge.testing.server import Reply
from tests.conftest import cli_inproc
from tests.test_pipeline import write_config

ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _frames(stderr: str) -> list[str]:
    """Every drawn state of the progress line, the terminal's control sequences taken out."""
    return [f for f in re.split(r"[\r\n]", ESCAPES.sub("", stderr)) if f.strip()]


def test_the_progress_line_fits_80_columns_names_the_stage_and_gives_an_eta(scripted_server, tmp_path):
    inner = pipeline_model(answer="The observatory opened in 1952. It is run by the university.")

    def slow(request: dict, n: int) -> Reply:  # slow enough that the line is drawn while each call is in flight
        reply = inner(request, n)
        reply.latency = 0.4
        return reply

    server = scripted_server(slow)
    config = write_config(
        tmp_path, server, answers=None, name="progress",
        models={"answerer-model": {"model": "openai/answerer-model", "api_base": server.base_url, "family": "fam-a", "timeout": 5, "max_attempts": 1},
                "judge-with-a-rather-long-model-name-b": {"model": "openai/judge-b", "api_base": server.base_url, "family": "fam-b", "timeout": 5, "max_attempts": 1}},
        generate={"models": ["answerer-model"]}, decompose={"method": "sentences"},
        adjudicate={"judges": ["judge-with-a-rather-long-model-name-b"], "triage": False, "batch_claims": True}, controls={"enabled": False}, record_concurrency=1,
    )
    text = config.read_text().replace("answers: null\n", "")
    config.write_text(text)
    result = cli_inproc("run", str(config), "--runs-dir", str(tmp_path / "runs"), env={"COLUMNS": "80", "TTY_COMPATIBLE": "1"})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    frames = [f for f in _frames(result.stderr) if " records " in f]
    assert frames, result.stderr[-2000:]
    assert max(cell_len(f.rstrip()) for f in frames) <= 80, [f for f in frames if cell_len(f.rstrip()) > 80]
    assert not any("-:--:--" in f for f in frames)
    before = [f for f in frames if f.startswith("0/3 records")]
    assert before and all("ETA after record 1" in f for f in before), before
    # the answerer is named with "answering" while it answers, the judge with "judging" while it judges
    assert any("answerer-model: answering" in f for f in frames), frames
    # a long model name is shortened, never what it does
    assert any(re.search(r"judge-with-a-rather-long-\S*: judging", f) for f in frames), frames
    assert not any("answerer-model: judging" in f for f in frames), frames
    after = [f for f in frames if f.startswith(("1/3 records", "2/3 records"))]
    assert after and all(re.search(r"ETA \d+:\d\d:\d\d", f) for f in after), after
    assert frames[-1].startswith("3/3 records") and "done in" in frames[-1], frames[-1]
    assert "claims" in frames[-1]
