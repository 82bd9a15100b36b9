"""The control gate against judges that guess: how often it passes a judge right with probability p on each
control (wrong answers spread over the other labels), per controls per label, through judge.controls.health
itself (the gate every run uses). Also lopsided judges: one that misses a single label, one that says
"supported" to everything.

    python bench/controls_gate.py [--runs 1000]

The bar (issue 23): p <= 0.5 passes <= 5% of runs; p >= 0.8 passes >= 90%.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judge.controls.health import ControlObservation, GateConfig, judge_health  # noqa: E402

LABELS = ("supported", "contradicted", "unsupported")
ANSWERS = ("supported", "partially_supported", "unsupported", "contradicted")


def observations(per_label: int, answer) -> list[ControlObservation]:
    return [ControlObservation(judge="j", control_id=f"{lbl}{i}", label=lbl, kind="k", answered=answer(lbl)) for lbl in LABELS for i in range(per_label)]


def pass_rate(p: float, per_label: int, runs: int, gate: GateConfig) -> float:
    passed = 0
    for seed in range(runs):
        rng = random.Random(seed)
        rows = observations(per_label, lambda lbl: lbl if rng.random() < p else rng.choice([a for a in ANSWERS if a != lbl]))
        passed += judge_health(rows, gate=gate).judges[0].status == "passed"
    return passed / runs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    args = ap.parse_args()
    ps = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
    for floor in (0.4, 0.5):
        gate = GateConfig(floor=floor)
        print(f"\nfloor {floor}, one-sided 95% Clopper-Pearson lower bound on every label; share of {args.runs} runs passed")
        print("| controls per label | " + " | ".join(f"p={p}" for p in ps) + " |")
        print("|---|" + "---|" * len(ps))
        for n in (4, 8, 12, 16, 20, 24, 30):
            print(f"| {n} | " + " | ".join(f"{pass_rate(p, n, args.runs, gate):.3f}" for p in ps) + " |")
    lenient = judge_health(observations(24, lambda lbl: "supported" if lbl == "contradicted" else lbl)).judges[0]
    always = judge_health(observations(24, lambda lbl: "supported")).judges[0]
    print(f"\nmisses one label (24 per label): {lenient.status}: {lenient.verdict}")
    print(f"always supported (24 per label): {always.status}: {always.verdict}")


if __name__ == "__main__":
    main()
