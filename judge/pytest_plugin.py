"""A pytest plugin (registered by entry point) for prompt-regression tests in a user's own test suite
(docs/regression.md): the ``judge_grounding`` fixture, ``assert_grounded`` and ``assert_no_regression``
(importable too). A failure is one line per failed gate and regressed claim, then where the run is; the
plugin's own frames are hidden. Runs go to ``--judge-runs-dir`` (ini ``judge_runs_dir``, $JUDGE_RUNS_DIR), else
pytest's temporary folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from judge.verdicts import JUDGE_ERROR


class GroundingError(AssertionError):
    """A grounding assertion that failed, with the numbers, the claims and where the run is."""


SHOWN_CLAIMS = 5  # claims named in an assert_grounded failure; the report lists them all
SHOWN_REGRESSIONS = 20  # regressed claims named in an assert_no_regression failure (the rest are counted)
PASSAGE_CHARS = 160  # of a passage in a failure line
RUNS_ENV = "JUDGE_RUNS_DIR"


def _where(run) -> str:
    return f"run {run.path}; report {run.report_path}"


def _not_grounded(run) -> list[str]:
    """The claims that are not grounded, most severe first, as the terminal lists them (scoring.ungrounded)."""
    from judge.scoring.ungrounded import more_line, not_grounded, passage_text, summary_line

    ng = not_grounded(run.results(), cap=SHOWN_CLAIMS)
    lines = [summary_line(ng)]
    for c in ng.claims:
        lines += [f"  {c.label.upper()}  {c.record_id} / {c.model}: {c.text}", f"      passage: {_cut(passage_text(c.passage))}"]
    more = more_line(ng, str(run.report_path))
    return lines + ([more] if more else [])


def _cut(text: str | None, n: int = PASSAGE_CHARS) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[: n - 1] + "…"


def run_config(config, runs_dir: str | Path = "runs", **kwargs) -> Path:
    """Run a config (a path, a dict or a RunConfig) and return its run directory, scored and reported; fails
    where ``judge run`` exits 3, naming the causes and the run."""
    __tracebackhide__ = True
    from judge.api import evaluate

    run = evaluate(config, runs_dir=runs_dir, **kwargs)
    if run.failures:
        raise GroundingError("\n".join([*run.failures, _where(run)]))
    return run.path


def _run_dir(run_or_config, runs_dir: str | Path) -> Path:
    """A Run (judge.evaluate's), a run directory, or a config to run now."""
    __tracebackhide__ = True
    from judge.runs.run import Run

    if isinstance(run_or_config, Run):
        return run_or_config.path
    if isinstance(run_or_config, (str, Path)) and Path(run_or_config).is_dir():
        return Path(run_or_config)
    return run_config(run_or_config, runs_dir)


def check_bounds(**bounds) -> None:
    """The bounds checked before anything is read (NaN refused: ``min_faithfulness=nan`` would pass any run);
    ArgumentError naming the bound."""
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
                    max_judge_errors: int | None = None, runs_dir: str | Path = "runs", *, labels: list | None = None,
                    max_corrected_hallucination: float | None = None, min_corrected_faithfulness: float | None = None) -> dict:
    """Fail unless the run's faithfulness, hallucination rate and judge errors (overall and per model under
    test) are within bounds (default: the config's ``thresholds``), naming the claims not grounded.
    ``max_corrected_hallucination`` / ``min_corrected_faithfulness``: bounds on the far end of the human-label
    corrected rate's interval; ``labels``: filled sheets to score the run with first."""
    __tracebackhide__ = True
    from judge.runs.run import Run
    from judge.runs.decision import decide
    from judge.thresholds import Thresholds

    check_bounds(min_faithfulness=min_faithfulness, max_hallucination=max_hallucination, max_judge_errors=max_judge_errors,
                 max_corrected_hallucination=max_corrected_hallucination, min_corrected_faithfulness=min_corrected_faithfulness)
    run = Run.open(_run_dir(run_or_config, runs_dir))
    if labels is not None:
        from judge.api import score

        run = score(run, labels)
    problems = list(run.failures)
    if not run.summary:  # a run that never finished: its failure says so, there are no numbers to check
        raise GroundingError("\n".join([*problems, _where(run)]))
    overall = run.summary["overall"]
    corrected = [f"{spec}{v}" for spec, v in (("corrected_hallucination_rate<=", max_corrected_hallucination),
                                              ("corrected_faithfulness>=", min_corrected_faithfulness)) if v is not None]
    if corrected:
        from judge.scoring.corrected_compare import bound_gate

        gates = [bound_gate(spec, run, allow_missing=False) for spec in corrected]
        problems += [f"{g['gate']}: {g['summary']}" for g in gates if g["failed"]]
    if min_faithfulness is None and max_hallucination is None and max_judge_errors is None and not corrected:
        bounds = run.config.thresholds
    else:
        bounds = Thresholds(max_hallucination_rate=max_hallucination, min_faithfulness=min_faithfulness)
    problems += decide(run.summary_model, thresholds=bounds).broken
    if max_judge_errors is not None and overall["labels"][JUDGE_ERROR] > max_judge_errors:
        problems.append(f"{overall['labels'][JUDGE_ERROR]} judge errors > {max_judge_errors}")
    if problems:
        raise GroundingError("\n".join([*problems, *_not_grounded(run), _where(run)]))
    return overall


def regression_lines(result: dict, shown: int = SHOWN_REGRESSIONS) -> list[str]:
    """A failed comparison, short: each failed gate on one line, then each regressed claim (newly not grounded,
    or worse, in B) on one line with its reason and passage, then where run B and its report are."""
    lines = [f"{g['gate']}: {g.get('summary') or g['why']}" for g in result["gates"] if g["failed"]]
    claims = result.get("claims") or {}
    regressed = list(claims.get("newly_ungrounded", [])) + list(claims.get("worsened", []))
    for c in regressed[:shown]:
        what = f'  {c["record_id"]} / {c["model"]}: {c["a"] or "absent"} -> {c["b"]}: "{_cut(c["claim"], 200)}"'
        why = "; ".join(x for x in (f"reason: {_cut(c.get('reason'))}" if c.get("reason") else "",
                                    f"passage: {_cut(c.get('passage'))}" if c.get("passage") else "") if x)
        lines.append(what + (f" ({why})" if why else ""))
    if len(regressed) > shown:
        lines.append(f"  and {len(regressed) - shown} more: judge compare {result['run_a']} {result['run_b']}")
    lines.append(f"baseline {result['run_a']}; run {result['run_b']}; report {Path(result['run_b']) / 'report.html'}")
    return lines


def assert_no_regression(run_or_config, baseline: str | Path, gates: list[str] | None = None, runs_dir: str | Path = "runs",
                         allow_missing: bool = False, baselines_dir: str | Path | None = None,
                         prompt: str | None = None, baseline_prompt: str | None = None) -> dict:
    """Fail when a gate fails against ``baseline`` (a run directory or a pinned baseline's name); ``gates``: as
    ``judge compare --gate`` (default DEFAULT_GATES); ``prompt`` / ``baseline_prompt``: those variants only."""
    __tracebackhide__ = True
    from judge.runs.baseline import resolve_baseline
    from judge.runs.run import Run
    from judge.runs.store import RunDirError
    from judge.scoring.compare import compare, parse_gates
    from judge.scoring.confirm import SAMPLES

    run = Run.open(_run_dir(run_or_config, runs_dir))
    if run.failures:  # a run that cannot pass is no evidence of "no regression", whatever the gates allow
        raise GroundingError("\n".join([*run.failures, _where(run)]))
    try:
        base = baseline.path if isinstance(baseline, Run) else resolve_baseline(baseline, baselines_dir)
        result = compare(base, run.path, parse_gates(gates), allow_missing=allow_missing, prompt_a=baseline_prompt, prompt_b=prompt, confirm=SAMPLES)
    except (RunDirError, ValueError) as e:  # no such baseline, runs with no record in common, a bad gate
        raise GroundingError(str(e)) from None
    if result["failed"]:
        raise GroundingError("\n".join(regression_lines(result)))
    return result


class JudgeGrounding:
    """What the ``judge_grounding`` fixture hands a test: run configs into its runs directory, assert."""

    def __init__(self, runs_dir: Path, baselines_dir: Path | None = None):
        self.runs_dir = runs_dir
        self.baselines_dir = baselines_dir

    def run(self, config, **kwargs) -> Path:
        __tracebackhide__ = True
        return run_config(config, self.runs_dir, **kwargs)

    def assert_grounded(self, run_or_config, **bounds) -> dict:
        __tracebackhide__ = True
        return assert_grounded(run_or_config, runs_dir=self.runs_dir, **bounds)

    def assert_no_regression(self, run_or_config, baseline: str | Path, gates: list[str] | None = None, allow_missing: bool = False,
                             **kwargs) -> dict:
        __tracebackhide__ = True
        kwargs.setdefault("baselines_dir", self.baselines_dir)
        return assert_no_regression(run_or_config, baseline, gates, runs_dir=self.runs_dir, allow_missing=allow_missing, **kwargs)


def pytest_addoption(parser):
    group = parser.getgroup("judge", "grounding evaluation (judge)")
    group.addoption("--judge-runs-dir", default=None, help="Where judge_grounding writes its runs (e.g. an artifact folder CI uploads).")
    group.addoption("--judge-baselines-dir", default=None, help="Where pinned baselines are looked up (default ./baselines).")
    parser.addini("judge_runs_dir", "Where judge_grounding writes its runs (relative to the rootdir).", default="")
    parser.addini("judge_baselines_dir", "Where pinned baselines are looked up (relative to the rootdir).", default="")


def _configured(config, option: str, ini: str, env: str | None) -> Path | None:
    value = config.getoption(option) or config.getini(ini) or (os.environ.get(env) if env else None)
    if not value:
        return None
    path = Path(value)
    return path if path.is_absolute() else Path(config.rootpath) / path


@pytest.fixture
def judge_grounding(request, tmp_path_factory) -> JudgeGrounding:
    runs = _configured(request.config, "--judge-runs-dir", "judge_runs_dir", RUNS_ENV)
    baselines = _configured(request.config, "--judge-baselines-dir", "judge_baselines_dir", None)
    return JudgeGrounding(runs or tmp_path_factory.mktemp("judge-runs"), baselines)
