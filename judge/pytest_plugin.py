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
    """A grounding assertion that failed, with the numbers, the claims and where the run is."""


SHOWN_CLAIMS = 5  # claims named in a failure message; the report lists them all


def _where(run) -> str:
    return f"run {run.path}; report {run.report_path}"


def _not_grounded(run) -> list[str]:
    """The claims that are not grounded, most severe first, as the terminal lists them (scoring.ungrounded)."""
    from judge.scoring.ungrounded import more_line, not_grounded, passage_text, summary_line

    ng = not_grounded(run.results(), cap=SHOWN_CLAIMS)
    lines = [summary_line(ng)]
    for c in ng.claims:
        lines += [f"  {c.label.upper()}  {c.record_id} / {c.model}: {c.text}", f"      passage: {passage_text(c.passage)}"]
    more = more_line(ng, str(run.report_path))
    return lines + ([more] if more else [])


def run_config(config, runs_dir: str | Path = "runs", **kwargs) -> Path:
    """Run a config (a path, a dict or a RunConfig; see judge.evaluate) and return its run directory, scored
    and reported. Fails like ``judge run`` exits 3: when too many claims ended in judge_error, a stage failed
    for every record, or nothing was judged (the message gives the causes and the run's path)."""
    from judge.api import evaluate

    run = evaluate(config, runs_dir=runs_dir, **kwargs)
    if run.failures:
        raise GroundingError("\n".join([*run.failures, _where(run)]))
    return run.path


def _run_dir(run_or_config, runs_dir: str | Path) -> Path:
    """A Run (judge.evaluate's), a run directory, or a config to run now."""
    from judge.runs.run import Run

    if isinstance(run_or_config, Run):
        return run_or_config.path
    if isinstance(run_or_config, (str, Path)) and Path(run_or_config).is_dir():
        return Path(run_or_config)
    return run_config(run_or_config, runs_dir)


def check_bounds(**bounds) -> None:
    """The plugin's bounds, checked before anything is read: a rate in [0, 1] (NaN and infinity refused: every
    comparison with NaN is False, so ``min_faithfulness=nan`` would pass any run), a count a whole number >= 0.
    judge.boundary.ArgumentError (a judge.InputError) naming the bound."""
    import math

    from judge.boundary import ArgumentError

    for name, value in bounds.items():
        if value is None:
            continue
        if name == "max_judge_errors":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ArgumentError(f"{name}: expected a whole number of claims >= 0, found {value!r}"[:200])
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 <= value <= 1:
            raise ArgumentError(f"{name}: expected a number from 0 to 1, found {value!r}"[:200])


def assert_grounded(run_or_config, min_faithfulness: float | None = None, max_hallucination: float | None = None,
                    max_judge_errors: int | None = None, runs_dir: str | Path = "runs") -> dict:
    """Fail unless the run's overall faithfulness, hallucination rate and judge errors are within bounds;
    the message names the claims that are not grounded (up to SHOWN_CLAIMS) and the report."""
    from judge.runs.run import Run

    check_bounds(min_faithfulness=min_faithfulness, max_hallucination=max_hallucination, max_judge_errors=max_judge_errors)
    run = Run.open(_run_dir(run_or_config, runs_dir))
    problems = list(run.failures)
    if not run.summary:  # a run that never finished: its failure says so, there are no numbers to check
        raise GroundingError("\n".join([*problems, _where(run)]))
    overall = run.summary["overall"]
    if min_faithfulness is not None and (overall["faithfulness"] is None or overall["faithfulness"] < min_faithfulness):
        problems.append(f"faithfulness {overall['faithfulness']} < {min_faithfulness}")
    if max_hallucination is not None and (overall["hallucination_rate"] is None or overall["hallucination_rate"] > max_hallucination):
        problems.append(f"hallucination rate {overall['hallucination_rate']} > {max_hallucination}")
    if max_judge_errors is not None and overall["labels"][JUDGE_ERROR] > max_judge_errors:
        problems.append(f"{overall['labels'][JUDGE_ERROR]} judge errors > {max_judge_errors}")
    if problems:
        raise GroundingError("\n".join(["; ".join(problems), *_not_grounded(run), _where(run)]))
    return overall


def assert_no_regression(run_or_config, baseline: str | Path, gates: list[str], runs_dir: str | Path = "runs",
                         allow_missing: bool = False) -> dict:
    """Fail when a gated metric dropped against the baseline run beyond its threshold (and beyond noise), or
    is missing in either run (unless ``allow_missing``); the message names the claims newly ungrounded."""
    from judge.runs.run import Run
    from judge.runs.store import RunDirError
    from judge.scoring.compare import Gate, compare

    run = Run.open(_run_dir(run_or_config, runs_dir))
    if run.failures:  # a run that cannot pass is no evidence of "no regression", whatever the gates allow
        raise GroundingError("\n".join([*run.failures, _where(run)]))
    baseline = baseline.path if isinstance(baseline, Run) else Path(baseline)
    try:
        result = compare(baseline, run.path, [Gate.parse(g) for g in gates], allow_missing=allow_missing)
    except RunDirError as e:  # runs with no record in common
        raise GroundingError(str(e)) from None
    if result["failed"]:  # each reason names the claims newly ungrounded, the run and its report
        raise GroundingError("\n".join(g["why"] for g in result["gates"] if g["failed"]))
    return result


class JudgeGrounding:
    """What the ``judge_grounding`` fixture hands a test: run configs into a temporary runs directory, assert."""

    def __init__(self, runs_dir: Path):
        self.runs_dir = runs_dir

    def run(self, config, **kwargs) -> Path:
        return run_config(config, self.runs_dir, **kwargs)

    def assert_grounded(self, run_or_config, **bounds) -> dict:
        return assert_grounded(run_or_config, runs_dir=self.runs_dir, **bounds)

    def assert_no_regression(self, run_or_config, baseline: str | Path, gates: list[str], allow_missing: bool = False) -> dict:
        return assert_no_regression(run_or_config, baseline, gates, runs_dir=self.runs_dir, allow_missing=allow_missing)


@pytest.fixture
def judge_grounding(tmp_path_factory) -> JudgeGrounding:
    return JudgeGrounding(tmp_path_factory.mktemp("judge-runs"))
