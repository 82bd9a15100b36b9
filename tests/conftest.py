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
