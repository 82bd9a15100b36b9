"""How good is the embedded judge (issue 45)? ``judge calibrate`` with the demo's model judge (Qwen2.5-Coder-1.5B,
embedded, on the CPU) on labelled QA answers: each answer's balanced accuracy (the mean of its recall on
grounded and on not-grounded answers), its not-grounded recall and its noise on claims, with exact intervals.

    python bench/embedded_accuracy.py [--sets he,heq] [--heq-limit 60] [--judge local-qwen-1.5b]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.calibration_bench import cli, config  # noqa: E402
from bench.controls_bench import SETS  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="he,heq")
    ap.add_argument("--heq-limit", type=int, default=60)
    ap.add_argument("--judge", default="local-qwen-1.5b")
    args = ap.parse_args()
    models = yaml.safe_load((ROOT / "configs" / "models.yaml").read_text(encoding="utf-8"))["models"]
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for name in args.sets.split(","):
            labelled = SETS[name](tmp, {"heq": args.heq_limit}.get(name))
            path = config(labelled, args.judge, {args.judge: models[args.judge]}, tmp, None)
            cfg = yaml.safe_load(path.read_text(encoding="utf-8"))
            cfg["search"] = {"k": 2}  # as the demo (configs/default.yaml)
            path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
            started = time.perf_counter()
            out = tmp / f"{name}.calibration.json"
            c = cli("calibrate", str(path), "--out", str(out), "--json", "--no-progress", "--runs-dir", str(tmp / "runs"))
            if c.returncode != 0:
                raise SystemExit(f"{name}: exit {c.returncode}: {c.stderr[-1500:]}")
            j = json.loads(c.stdout)["judges"][args.judge]
            row = {"set": labelled["name"], "seconds": round(time.perf_counter() - started), **j}
            rows.append(row)
            print(json.dumps(row), flush=True)
    print("\n| set | answers | balanced accuracy (answers) | claims | not-grounded recall [95%] | grounded flagged (noise) [95%] |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        ng, noise = r["not_grounded_recall"], r["noise"]
        ci = lambda x: f"[{x['ci95'][0]:.2f}, {x['ci95'][1]:.2f}]" if x.get("ci95") else ""  # noqa: E731
        print(f"| {r['set']} | {r['answers']} | {r['balanced_accuracy']} | {r['claims']} | {ng['k']}/{ng['n']} {ci(ng)} | {noise['k']}/{noise['n']} {ci(noise)} |")


if __name__ == "__main__":
    main()
