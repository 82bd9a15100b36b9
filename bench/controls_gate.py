"""The control gate against judges that guess: how often it passes a judge right with probability p on each
control (wrong answers spread over the other labels), per controls per label, through judge.controls.health
itself (the gate every run uses). Also lopsided judges: one that misses a single label, one that says
"supported" to everything.

    python bench/controls_gate.py [--runs 1000]
    python bench/controls_gate.py --one-claim [--limit 1000] [--seeds 5]

The bar (issue 23): p <= 0.5 passes <= 5% of runs; p >= 0.8 passes >= 90%.

``--one-claim`` (issue 37): HeQ questions, each with one one-claim answer (its gold answer, read with its
question as a run with ``decompose: sentences`` reads it), the default controls config with 5 seeds: the
controls each seed's plan makes per label (bench.tells.measure, the run's own code), the share of
the claims judged that they are, whether a judge right with probability 0.9 on each control passes the gate
(and the run's own detector's AUC), one seeded judge per seed.
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


def one_claim(limit: int, seeds: int, p: float = 0.9) -> None:
    from collections import Counter

    from judge.stages.decompose import sentence_claims
    from judge.controls.make import ControlsConfig
    from bench.tells import measure
    from judge.datasets import load

    shared = Path(__file__).resolve().parents[2] / "shared" / "data"
    records = [r for r in load(shared / "external" / "heq" / "test_v1.1.json") if r.claims][:limit]
    print(f"\none-claim answers: {len(records)} HeQ questions, default controls config, a judge right with p={p}")
    print("| seed | controls S / C / U | share of claims judged | detector AUC | judge p=0.9 | on the counts alone |")
    print("|---|---|---|---|---|---|")
    passed = counts_pass = 0
    for seed in range(seeds):
        made = measure(records, lambda r: [[c.text for c in sentence_claims(r.claims[0].text, r.question).claims]], config=ControlsConfig(seed=seed), keep=True)
        labels = [m["label"] for m in made["made"] if not m["settled"]]
        count = Counter(labels)
        rng = random.Random(seed)
        rows = [ControlObservation(judge="j", control_id=str(i), label=lbl, kind="k", answered=lbl if rng.random() < p else rng.choice([a for a in ANSWERS if a != lbl]))
                for i, lbl in enumerate(labels)]
        tells = {"real": made["real"], "controls": made["controls"], "auc": made["auc"], "detector_auc": made["detector_auc"]}
        h = judge_health(rows, tells=tells).judges[0]
        passed += h.status == "passed"
        alone = judge_health(rows).judges[0].status  # the gate on the label counts, the detector aside
        counts_pass += alone == "passed"
        share = made["controls"] / max(1, made["controls"] + made["real"])
        auc = f"{made['detector_auc']:.2f}" if made["detector_auc"] is not None else "-"
        print(f"| {seed} | {count['supported']} / {count['contradicted']} / {count['unsupported']} | {share:.1%} | {auc} | {h.status} | {alone} |")
    print(f"passed in {passed} of {seeds} runs; on the label counts alone in {counts_pass} of {seeds}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--one-claim", action="store_true")
    ap.add_argument("--limit", type=int, default=1000)
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    if args.one_claim:
        one_claim(args.limit, args.seeds)
        return
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
