"""Pipeline stages: generate, decompose, checks (each: typed input, typed output). Judging is judge.judges."""
