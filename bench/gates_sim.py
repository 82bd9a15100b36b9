"""How often the prompt-regression gates are wrong (issue 26): false-pass rates on simulated regressions and
false-fail rates on simulated non-regressions, at 10, 30 and 100 records, through the real gate code
(judge.scoring.compare.compare_results over in-memory RecordResults: the claim diff, the sign test, the
claim-level fallback; only the judges' health gate, which needs run directories, is left out).

A record has one answer of 1 to 4 claims; a claim is not grounded (contradicted) with the baseline's rate p0.
Scenarios (run B against baseline A):

  no regression
    rerun          B is A (a rerun from the cache)
    judge noise    the same answers; each claim's verdict re-drawn with probability 0.1 (at the same rate p0)
    equal prompt   every answer rewritten (new claims, none matched) at the same rate p0
  regression
    3 broken       three answers replaced by one contradicted claim (the issue's case)
    10% broken     a tenth of the answers (at least one) replaced by one contradicted claim
    rate +0.10     every answer rewritten at rate p0 + 0.10

    python bench/gates_sim.py [--trials 400] [--seed 0]

End to end (issue 39): docs/ci's recipe as written (judge.testing.ci_sim: a copy of docs/ci, the workflow's
commands through the real command line in process, a scripted writer and a scripted rule-based judge with 5%
or 12% of its labels random, unseeded), ten pull requests of each kind, each with a cold cache after a fresh
push to main (a new baseline, the judge calibrated on docs/ci's labelled calibration.jsonl): an unchanged prompt,
a reworded prompt that keeps every fact, a prompt that makes 3 of 10 answers wrong, one that makes 1 of 10
wrong. ``--judge lenient`` plays a judge that calls everything supported: require: calibrated must refuse it. The same trials with the recipe of before (no calibration: controls on the ten
questions, per_label 24; changed verdicts not re-asked) are the baseline.

    python bench/gates_sim.py --end-to-end [--trials 10] [--noise 0.12 0.05] [--judge good lenient] [--no-before]
    python bench/gates_sim.py --rule [--noise 0.12 0.05]     # the confirmation rule's exact miss rate on one error
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judge.results import AnswerResult, ClaimResult, Decomposition, RecordResult  # noqa: E402
from judge.scoring.compare import DEFAULT_GATES, compare_results, parse_gates  # noqa: E402

SIZES = (10, 30, 100)
BASE_RATES = (0.0, 0.05, 0.15)
GATE_SETS = {"default": list(DEFAULT_GATES), "default + new_not_grounded:0": [*DEFAULT_GATES, "new_not_grounded:0"]}


def _answer(rng: random.Random, rate: float, tag: str) -> list[tuple[str, str]]:
    return [(f"{tag} claim {k} {rng.random():.12f}", "contradicted" if rng.random() < rate else "supported") for k in range(rng.randint(1, 4))]


def _result(rid: str, claims: list[tuple[str, str]]) -> RecordResult:
    text = " ".join(t for t, _ in claims)
    answer = AnswerResult(model="writer+main", family="fam-w", answer=text, decomposition=Decomposition(method="sentences"),
                          claims=[ClaimResult(claim_id=i, text=t, label=lbl) for i, (t, lbl) in enumerate(claims)])
    return RecordResult(record_id=rid, question="q", language="en", answers=[answer])


def scenario(name: str, n: int, p0: float, rng: random.Random):
    a = {f"r{i}": _answer(rng, p0, f"a{i}") for i in range(n)}
    if name == "rerun":
        b = dict(a)
    elif name == "judge noise":
        b = {rid: [(t, ("contradicted" if rng.random() < p0 else "supported") if rng.random() < 0.1 else lbl) for t, lbl in cs] for rid, cs in a.items()}
    elif name == "equal prompt":
        b = {rid: _answer(rng, p0, f"b{rid}") for rid in a}
    elif name in ("3 broken", "10% broken"):
        k = 3 if name == "3 broken" else max(1, round(0.1 * n))
        broken = set(rng.sample(sorted(a), k))
        b = {rid: ([(f"wrong {rid} {rng.random():.12f}", "contradicted")] if rid in broken else cs) for rid, cs in a.items()}
    elif name == "rate +0.10":
        b = {rid: _answer(rng, p0 + 0.10, f"b{rid}") for rid in a}
    else:
        raise ValueError(name)
    return {rid: _result(rid, cs) for rid, cs in a.items()}, {rid: _result(rid, cs) for rid, cs in b.items()}


NULL = ("rerun", "judge noise", "equal prompt")
REGRESSION = ("3 broken", "10% broken", "rate +0.10")


def old_recipe(recipe) -> None:
    """The recipe before issue 39: controls verify the judge on the ten questions each run, nothing re-asked."""
    config = recipe.root / "grounding" / "judge.yaml"
    text = config.read_text()
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(("controls:", "per_label:", "calibration:"))
                     and not line.lstrip().startswith("#  ") and "its settings and the judge prompt" not in line)
    config.write_text(text + "\n")
    recipe.steps = {name: (cmd + " --confirm 0" if name.startswith("Run and gate") else cmd) for name, cmd in recipe.steps.items()
                    if not name.startswith("Calibrate")}
    recipe.steps["Calibrate"] = "judge --help"


def end_to_end(trials: int, noises: list[float], old: bool, judges: list[str] = ("good",)) -> None:
    import tempfile

    from judge.testing.ci_sim import PROMPTS, Recipe, script
    from judge.testing.server import ScriptedServer

    root = Path(__file__).resolve().parents[1]
    started = time.perf_counter()
    print(f"{trials} pull requests of each kind, each after a fresh push to main, cold caches; cells: pull requests that FAIL (exit != 0)\n")
    print("| recipe | judge | judge noise | pushes that could not pin | judge refused (require: calibrated) | unchanged (false fail) | reworded (false fail) | "
          "3 of 10 broken (caught) | 1 of 10 broken (caught) | exit codes | CI judge tokens on controls | re-ask calls per PR |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for recipe_name, judge, noise in [(r, j, x) for r in (["now", "before"] if old else ["now"]) for j in judges for x in (noises if j == "good" else [0.0])]:
        server = ScriptedServer(script(judge, noise), keep_bodies=False).start()
        try:
            recipe = Recipe(Path(tempfile.mkdtemp(prefix="ci-sim-")), server, root / "docs" / "ci")
            if recipe_name == "before":
                old_recipe(recipe)
            fails, codes, pins, shares, reasks, refused = dict.fromkeys(PROMPTS, 0), {}, 0, [], [], 0
            for _ in range(trials):
                pushed = recipe.push()
                pins += pushed[1] != 0
                refused += _refused(recipe.root)
                for kind in PROMPTS:
                    code = recipe.pull_request(kind)
                    fails[kind] += code != 0
                    codes[code] = codes.get(code, 0) + 1
                    shares.append(_controls_share(recipe.root))
                    reasks.append(_reask_calls(recipe.root))
            share = sum(shares) / len(shares) if shares else 0.0
            print(f"| {recipe_name} | {judge} | {noise:.0%} | {pins}/{trials} | {refused}/{trials} | {fails['unchanged']}/{trials} | "
                  f"{fails['reworded']}/{trials} | {fails['broken']}/{trials} | {fails['one error']}/{trials} | {', '.join(f'{k}: {v}' for k, v in sorted(codes.items()))} | {share:.0%} | "
                  f"{sum(reasks) / len(reasks):.1f} |", flush=True)
        finally:
            server.stop()
    print(f"\n({time.perf_counter() - started:.0f} s)")


def rule_miss_rates(noises: list[float], floors=(0.1, 0.15, 0.2, 0.25, 0.3), tested=(2, 5, 10, 20)) -> None:
    """The confirmation rule's miss rate on a one-error regression, exact (issue 49.5): a judge that replaces
    ``noise`` of its labels by one of the four at random calls a real error supported with e = noise / 4 per
    call. The error is missed when its first verdict is supported (it is then no flag, not re-asked) or when
    its n re-asks (judge.scoring.confirm.samples_for at the floor and alpha / claims tested) fail the test
    against the floor (at least two dissents, or one where n cannot absorb it)."""
    from scipy.stats import binom

    from judge.scoring.confirm import ALPHA, samples_for, test

    print("| judge noise | noise floor | claims tested | re-asks n | P(first verdict supported) | P(re-asks dismiss it) | miss rate |")
    print("|---|---|---|---|---|---|---|")
    for noise in noises:
        e = noise / 4
        for floor in floors:
            for m in tested:
                n = samples_for(floor, ALPHA / m)
                dismiss = sum(binom.pmf(d, n, e) for d in range(n + 1)
                              if not ((r := test(["contradicted"] * (n - d) + ["supported"] * d, floor, ALPHA / m))[3] and r[2] < ALPHA / m))
                print(f"| {noise:.0%} | {floor} | {m} | {n} | {e:.4f} | {dismiss:.4f} | {e + (1 - e) * dismiss:.4f} |")


def _refused(root: Path) -> int:
    """Whether the pinned baseline is marked "judge not calibrated" (require: calibrated refused its judge)."""
    import json

    marker = root / "baselines" / "main" / "BASELINE.json"
    return int(marker.exists() and bool(json.loads(marker.read_text()).get("judge_not_calibrated")))


def _controls_share(root: Path) -> float:
    import json

    runs = sorted((root / "artifacts" / "runs").glob("*/summary.json"))
    if not runs:
        return 0.0
    health = json.loads(runs[-1].read_text()).get("judge_health") or {}
    cost, total = health.get("cost") or {}, health.get("judge_tokens") or 0
    return (cost.get("prompt_tokens", 0) + cost.get("completion_tokens", 0)) / total if total else 0.0


def _reask_calls(root: Path) -> int:
    import re

    md = root / "artifacts" / "compare.md"
    m = re.search(r"; (\d+) calls, \d+ cached\)", md.read_text()) if md.exists() else None
    return int(m.group(1)) if m else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--end-to-end", action="store_true", help="the CI recipe end to end with noisy scripted judges (issue 39)")
    ap.add_argument("--noise", type=float, nargs="+", default=[0.12, 0.05])
    ap.add_argument("--no-before", action="store_true", help="with --end-to-end: skip the recipe of before")
    ap.add_argument("--judge", nargs="+", default=["good"], choices=["good", "mediocre", "lenient"], help="with --end-to-end: the scripted judges (noise applies to good)")
    ap.add_argument("--rule", action="store_true", help="the confirmation rule's exact miss rate on a one-error regression (issue 49.5)")
    args = ap.parse_args()
    if args.rule:
        rule_miss_rates(args.noise)
        return
    if args.end_to_end:
        end_to_end(args.trials or 10, args.noise, not args.no_before, args.judge)
        return
    args.trials = args.trials or 400
    started = time.perf_counter()
    print(f"{args.trials} trials per cell, seed {args.seed}; cells: share of trials where the gates FAIL (exit 1): false-fail rates under no regression, catch rates (1 - false pass) under a regression\n")
    # one comparison per trial with every gate of every set (an explicit new_not_grounded:0 is also the delta
    # gates' fallback, so adding it changes no other gate's verdict); each set fails when one of its gates does
    union = list(dict.fromkeys(g for specs in GATE_SETS.values() for g in specs))
    gates = parse_gates(union)
    failed = {label: {} for label in GATE_SETS}
    for p0 in BASE_RATES:
        for n in SIZES:
            for name in NULL + REGRESSION:
                rng = random.Random(f"{args.seed}:{name}:{n}:{p0}")
                counts = dict.fromkeys(GATE_SETS, 0)
                for _ in range(args.trials):
                    a, b = scenario(name, n, p0, rng)
                    verdicts = {g["gate"]: g["failed"] for g in compare_results(a, b, gates, bootstrap=0)["gates"]}
                    for label, specs in GATE_SETS.items():
                        counts[label] += any(verdicts[g.spec] for g in parse_gates(specs))
                for label in GATE_SETS:
                    failed[label][(p0, n, name)] = counts[label] / args.trials
            print(f"p0 {p0}, {n} records: done ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    for label, specs in GATE_SETS.items():
        print(f"## gates: {label} ({', '.join(specs)})\n")
        print("| p0 | records | " + " | ".join(f"{s} (false fail)" for s in NULL) + " | " + " | ".join(f"{s} (caught)" for s in REGRESSION) + " |")
        print("|" + "---|" * (2 + len(NULL) + len(REGRESSION)))
        for p0 in BASE_RATES:
            for n in SIZES:
                print(f"| {p0} | {n} | " + " | ".join(f"{failed[label][(p0, n, s)]:.3f}" for s in NULL + REGRESSION) + " |")
        print()
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
