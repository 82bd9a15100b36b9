"""A pytest plugin (registered by entry point) for prompt-regression tests in a user's own test suite.

    def test_answers_stay_grounded(judge_grounding):
        run = judge_grounding.run("configs/my_prompt.yaml")          # or an existing run directory
        judge_grounding.assert_grounded(run, min_faithfulness=0.8, max_hallucination=0.1)
        judge_grounding.assert_no_regression(run, baseline="runs/baseline", gates=["faithfulness:0.02"])

The same functions are importable: ``from judge.pytest_plugin import assert_grounded, assert_no_regression``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.verdicts import JUDGE_ERROR


class GroundingError(AssertionError):
    """A grounding assertion that failed, with the numbers."""


def run_config(config: str | Path, runs_dir: str | Path = "runs", **kwargs) -> Path:
    """Run a config (``judge run``) and return its run directory; scores and reports are written too."""
    from judge.report import write_reports
    from judge.runs.config import load_run_config
    from judge.runs.runner import execute

    store, _ = execute(load_run_config(config), runs_root=Path(runs_dir), **kwargs)
    write_reports(store.path)
    return store.path


def _run_dir(run_or_config: str | Path, runs_dir: str | Path) -> Path:
    path = Path(run_or_config)
    if path.is_dir():
        return path
    return run_config(path, runs_dir)


def assert_grounded(run_or_config: str | Path, min_faithfulness: float | None = None, max_hallucination: float | None = None,
                    max_judge_errors: int | None = None, runs_dir: str | Path = "runs") -> dict:
    """Fail unless the run's overall faithfulness, hallucination rate and judge errors are within bounds."""
    from judge.runs.run import Run

    run_dir = _run_dir(run_or_config, runs_dir)
    overall = Run.open(run_dir).summary["overall"]
    problems = []
    if min_faithfulness is not None and (overall["faithfulness"] is None or overall["faithfulness"] < min_faithfulness):
        problems.append(f"faithfulness {overall['faithfulness']} < {min_faithfulness}")
    if max_hallucination is not None and (overall["hallucination_rate"] is None or overall["hallucination_rate"] > max_hallucination):
        problems.append(f"hallucination rate {overall['hallucination_rate']} > {max_hallucination}")
    if max_judge_errors is not None and overall["labels"][JUDGE_ERROR] > max_judge_errors:
        problems.append(f"{overall['labels'][JUDGE_ERROR]} judge errors > {max_judge_errors}")
    if problems:
        raise GroundingError(f"{run_dir}: " + "; ".join(problems))
    return overall


def assert_no_regression(run_or_config: str | Path, baseline: str | Path, gates: list[str], runs_dir: str | Path = "runs") -> dict:
    """Fail when a gated metric dropped against the baseline run beyond its threshold (and beyond noise)."""
    from judge.scoring.compare import Gate, compare

    run_dir = _run_dir(run_or_config, runs_dir)
    result = compare(Path(baseline), run_dir, [Gate.parse(g) for g in gates])
    if result["failed"]:
        raise GroundingError("; ".join(g["why"] for g in result["gates"] if g["failed"]))
    return result


class JudgeGrounding:
    """What the ``judge_grounding`` fixture hands a test: run configs into a temporary runs directory, assert."""

    def __init__(self, runs_dir: Path):
        self.runs_dir = runs_dir

    def run(self, config: str | Path, **kwargs) -> Path:
        return run_config(config, self.runs_dir, **kwargs)

    def assert_grounded(self, run_or_config: str | Path, **bounds) -> dict:
        return assert_grounded(run_or_config, runs_dir=self.runs_dir, **bounds)

    def assert_no_regression(self, run_or_config: str | Path, baseline: str | Path, gates: list[str]) -> dict:
        return assert_no_regression(run_or_config, baseline, gates, runs_dir=self.runs_dir)


@pytest.fixture
def judge_grounding(tmp_path_factory) -> JudgeGrounding:
    return JudgeGrounding(tmp_path_factory.mktemp("judge-runs"))
