"""The in-process CLI of the tests (tests/conftest.py::cli_inproc) answers as the subprocess does: same exit code,
stdout and stderr, a logged warning included, so that tests moved to it assert no less than before."""

import json
import re

import pytest

from judge.testing.server import Reply
from tests.conftest import BUNDLED_SAMPLE, cli_inproc, run_cli


def _same(*args, timed: bool = False, **kwargs):
    """Both ways of running the command, compared (``timed``: stdout is JSON whose latencies may differ)."""
    child, here = run_cli(*args, **kwargs), cli_inproc(*args, **kwargs)
    assert (here.returncode, here.stderr) == (child.returncode, child.stderr), args
    if timed:
        untimed = lambda text: json.loads(re.sub(r'"latency_s": [0-9.e-]+', '"latency_s": 0', text))  # noqa: E731
        assert untimed(here.stdout) == untimed(child.stdout)
    else:
        assert here.stdout == child.stdout, args
    return here


def test_output_exit_codes_and_environment_match_the_subprocess(tmp_path):
    assert _same("--version").returncode == 0
    assert _same("validate", str(BUNDLED_SAMPLE), "--json").returncode == 0
    assert _same("validate", str(tmp_path / "absent.jsonl")).returncode == 2
    assert _same("nosuch").returncode == 2  # click's usage error, with the same program name
    bad = _same("validate", str(BUNDLED_SAMPLE), env={"JUDGE_MAX_PROBLEMS": "lots"})
    assert bad.returncode == 2 and "JUDGE_MAX_PROBLEMS" in bad.stderr


@pytest.mark.slow
def test_a_logged_warning_reaches_stderr_as_in_the_subprocess(scripted_server, tmp_path):
    server = scripted_server([Reply(body={"label": "supported", "rationale": "x"})] * 2)
    models = tmp_path / "models.yaml"
    models.write_text(f"models:\n  scripted:\n    model: openai/scripted\n    api_base: {server.base_url}\n    family: testing\n")
    blocker = tmp_path / "file"
    blocker.write_text("x")  # a cache directory under a file: the port logs a warning and runs without it
    result = _same("ping", str(models), "scripted", "--cache-dir", str(blocker / "cache"), "--json", timed=True)
    assert result.returncode == 0 and "running without the cache" in result.stderr

