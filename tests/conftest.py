"""Shared fixtures: paths to ../shared/data (skipped with a reason when absent) and to the bundled sample."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("JUDGE_SHARED_DATA", ROOT.parent / "shared" / "data"))
BUNDLED_SAMPLE = ROOT / "judge" / "data" / "he_sample.json"


def shared(relative: str) -> Path:
    """A file under ../shared/data, or skip the test saying why."""
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"{path} is absent (../shared/data exists only in the project workspace and CI)")
    return path


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run the real `judge` command line in a subprocess (``env``: variables added to this one's)."""
    return subprocess.run(
        [sys.executable, "-m", "judge.cli", *args], capture_output=True, text=True, cwd=cwd or ROOT, timeout=timeout,
        env={**os.environ, **env} if env else None,
    )


def cli_inproc(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """The same `judge` command line as :func:`run_cli`, run in this process by typer's test runner: no 2 s
    interpreter start-up per call. For tests about what a command does, not about the process it runs in:
    exit via sys.exit, signals, stdin/TTY, a child's memory, env isolation, secret canaries (judge.redact
    keeps the keys it has seen for the whole process), Ray, the embedded models and the plugin keep run_cli.

    ``env`` is set for the call only (CliRunner restores it); ``cwd`` is entered for the call only and left
    after it, as the subprocess's would be. An exception escaping the command's error boundary is written to
    stderr as the interpreter would (a traceback, exit 1), so "no traceback" assertions stay as strong.
    A warning logged by judge reaches stderr as Python's last-resort handler writes it in the subprocess
    (pytest's log capture would otherwise take it, and "not in stderr" would hold trivially). ``timeout`` is
    accepted for the same signature; an in-process call is not killed."""
    import contextlib
    import logging
    import traceback

    from typer.testing import CliRunner

    from judge.cli import app

    class LastResort(logging.Handler):
        def emit(self, record):
            sys.stderr.write(self.format(record) + "\n")  # the stderr of the moment: the runner's, masked by the CLI

    runner = CliRunner(env={k: str(v) for k, v in env.items()} if env else None)
    handler = LastResort(logging.WARNING)
    logging.getLogger().addHandler(handler)
    try:
        with contextlib.chdir(cwd or ROOT):
            result = runner.invoke(app, list(args), prog_name="python -m judge.cli")
    finally:
        logging.getLogger().removeHandler(handler)
    stderr = result.stderr
    code = result.exit_code
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(result.exception))
        code = 1
    return subprocess.CompletedProcess([sys.executable, "-m", "judge.cli", *args], code, result.stdout, stderr)


def tree_digest(*paths) -> dict[str, str]:
    """Every file under ``paths`` with its sha256: the state of runs a module-scoped fixture shares, so that its
    teardown can check that no test wrote into them (a test that writes copies the run first)."""
    import hashlib

    return {str(f): hashlib.sha256(f.read_bytes()).hexdigest() for p in paths for f in sorted(Path(p).rglob("*")) if f.is_file()}


def assert_spans_exact(candidates, source_of) -> None:
    """Every emitted span slices its source exactly (offsets are sacred)."""
    for c in candidates:
        src = source_of(c.doc_id)
        assert src[c.start_char : c.end_char] == c.excerpt
        for p in c.parts:
            assert 0 <= p.start_char < p.end_char <= len(src)
            assert src[p.start_char : p.end_char] == p.excerpt


@pytest.fixture
def scripted_server():
    """Start a scripted OpenAI-compatible server on 127.0.0.1: ``scripted_server(script)``; stopped after the test."""
    from judge.testing.server import ScriptedServer

    started = []

    def start(script=None, **kwargs):
        server = ScriptedServer(script, **kwargs).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


pytest_plugins = ["pytester"]
