"""Issue 36 item 16: the numbers check (judge.stages.alignment_numbers.aligned_mismatches) on a claim with N numbers
against a sentence of the source, for growing N. Before the fix each number normalised the whole claim
again and walked every word before it (quadratic in N, cubic with the source's sentences); now the claim's
words and leads are computed once and sliced per number. Prints the seconds per N and the growth ratio
against the smallest N (about N/N0 when linear, (N/N0)^2 when quadratic).

    PYTHONPATH=. python bench/slot_leads_bench.py [--tree PATH]  # --tree: another checkout (e.g. main) to time
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time


def claim_with(n: int) -> str:
    return "Alice founded the club " + " ".join(f"and met member {i}" for i in range(n)) + "."


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", default=None, help="a checkout to import judge from instead of this one")
    parser.add_argument("--sizes", default="250,500,1000,2000")
    args = parser.parse_args()
    if args.tree:
        sys.path.insert(0, args.tree)
    slots = importlib.import_module("judge.stages.alignment_numbers")
    if not hasattr(slots, "aligned_mismatches"):  # a tree from before issue 48
        slots = importlib.import_module("judge.stages.slots")
    sentence = "Bob met member 7 of the club in 1990."
    times = {}
    for n in map(int, args.sizes.split(",")):
        claim = claim_with(n)
        started = time.process_time()
        slots.aligned_mismatches(claim, [sentence])
        times[n] = time.process_time() - started
        print(f"N={n:>5}  {times[n]:8.3f} s CPU", flush=True)
    first = min(times)
    for n, t in times.items():
        print(f"N={n:>5}  x{n / first:.0f} numbers -> x{t / max(times[first], 1e-9):.1f} time")


if __name__ == "__main__":
    main()
