"""Pipeline stages: generate, decompose, checks, adjudicate (each: typed input, typed output)."""
