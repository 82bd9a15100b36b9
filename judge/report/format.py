"""How a number is written in every report (terminal, report.md, report.html): one rule, places given."""

from __future__ import annotations


def fmt(v, places: int = 3) -> str:
    """None as "n/a", a float to ``places`` decimals, an interval (a pair of floats) as [lo, hi], anything
    else as its text (unescaped)."""
    if v is None:
        return "n/a"
    if isinstance(v, tuple) and len(v) == 2:
        return fmt_ci(v, places)
    return f"{v:.{places}f}" if isinstance(v, float) else str(v)


def fmt_ci(ci, places: int = 3, signed: bool = False) -> str:
    """A 95% interval as [lo, hi], or n/a."""
    sign = "+" if signed else ""
    return f"[{ci[0]:{sign}.{places}f}, {ci[1]:{sign}.{places}f}]" if ci else "n/a"


def prompts_line(prompts: dict | None) -> str | None:
    """The prompt templates a run used, each with its hash ("answer 1f2e..., answer:v2 v2@9a8b..."): the prompt
    under test is an input, and a report read later must say which one it judged."""
    if not prompts:
        return None
    return "Prompts: " + ", ".join(f"{name} {h}" for name, h in sorted(prompts.items())) + "."


BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def no_bidi(text) -> str:
    """Data text with its bidi controls (U+202E and friends) dropped, for places no element can isolate
    (a page title, an SVG label)."""
    return "".join(ch for ch in str(text) if ch not in BIDI_CONTROLS)
