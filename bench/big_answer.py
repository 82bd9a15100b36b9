"""Peak RSS and wall time of judge.evaluate on one record with a very long answer or source (issue 48,
"the 5 MB one-sentence answer under 400 MB"), this checkout against earlier ones in the same session.

    python bench/big_answer.py [--baseline DIR ...] [--shapes one many source] [--mb 1 5]

Shapes (one record, reports on, sentence claims, the deterministic judge, no controls, no cache):

- ``one``: the answer is one sentence of N MB (a run-on text with one full stop at its end);
- ``many``: the answer is N MB of ordinary sentences (~80 characters each);
- ``source``: a one-sentence answer against a source of N MB of ordinary sentences.

Each measurement is a child process of its own (``PYTHONPATH=<checkout>``, this interpreter) that reports
its VmHWM (peak RSS), the seconds judge.evaluate took and the claims the run judged; --baseline checkouts run
the same child script. ``--timeout`` stops a child that runs too long (reported as such).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, tempfile, time
import judge
shape, n = sys.argv[1], int(sys.argv[2])
sentence = "The committee approved the budget for the new library and the park near the river. "
run_on = "the committee approved the budget for the new library and the park near river "
source = "The committee approved the budget for the new library. The park is near the river."
if shape == "one":
    answer = (run_on * (n // len(run_on) + 1))[:n].rstrip() + "."
elif shape == "many":
    answer = (sentence * (n // len(sentence) + 1))[:n].strip()
else:
    answer = "The committee approved the budget for the new library."
    source = (sentence * (n // len(sentence) + 1))[:n].strip()
records = [{"id": "r1", "question": "What did the committee approve?", "source": source}]
config = {"name": "big", "decompose": {"method": "sentences"}, "adjudicate": {"judges": ["deterministic"]}, "controls": False}
t = time.perf_counter()
run = judge.evaluate(config, records=records, answers={"r1": answer}, runs_dir=tempfile.mkdtemp(), use_cache=False, reports=True)
seconds = time.perf_counter() - t
hwm = [l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM:")]
print(json.dumps({"seconds": round(seconds, 1), "peak_mb": int(hwm[0]) // 1024, "claims": sum(1 for _ in run.claims())}))
"""


def measure(checkout: Path, shape: str, chars: int, timeout: float) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    try:
        out = subprocess.run([sys.executable, "-c", CHILD, shape, str(chars)], cwd=checkout, env=env, capture_output=True,
                             text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout:.0f} s"}
    if out.returncode != 0:
        return {"error": f"exit {out.returncode}: {(out.stderr.strip().splitlines() or [''])[-1]}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def label_of(checkout: Path) -> str:
    head = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    return head.stdout.strip() or checkout.name


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", action="append", default=[], type=Path, help="a checkout of an earlier commit (repeatable)")
    ap.add_argument("--shapes", nargs="+", default=["one", "many", "source"], choices=["one", "many", "source"])
    ap.add_argument("--mb", nargs="+", type=float, default=[1, 5], help="sizes in MB (10^6 characters)")
    ap.add_argument("--timeout", type=float, default=600)
    a = ap.parse_args()
    checkouts = [ROOT, *(b.resolve() for b in a.baseline)]
    print("| shape | MB | checkout | seconds | peak RSS MB | claims judged |")
    print("|---|---|---|---|---|---|")
    for shape in a.shapes:
        for mb in a.mb:
            for c in checkouts:
                m = measure(c, shape, int(mb * 1_000_000), a.timeout)
                name = ("now " if c == ROOT else "") + label_of(c)
                if "error" in m:
                    print(f"| {shape} | {mb:g} | {name} | {m['error']} | | |", flush=True)
                else:
                    print(f"| {shape} | {mb:g} | {name} | {m['seconds']} | {m['peak_mb']} | {m['claims']} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
