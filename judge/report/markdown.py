"""report.md: the run's score sections as Markdown tables (for a PR comment or a CI log), the claims that
are not grounded first.

Every string from a dataset, a model or a config is data: :func:`md` escapes it, so a ``<script>`` in a
model name stays text and a ``|`` cannot open a table cell.
"""

from __future__ import annotations

import re

from judge.report.format import fmt, fmt_ci
from judge.scoring import blocks

_SPECIAL = re.compile(r"([\\`*_\[\]|#~])")


def md(text) -> str:
    """Data as inert Markdown: HTML metacharacters as entities, Markdown markup backslash-escaped, one line."""
    s = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SPECIAL.sub(r"\\\1", " ".join(s.splitlines()))


def _cell(v) -> str:
    return md(v) if isinstance(v, str) else fmt(v)


def _table(headers: list[str], rows: list[list]) -> list[str]:
    return ["| " + " | ".join(md(h) for h in headers) + " |", "|" + "---|" * len(headers)] + ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]


def render(scores: dict) -> str:
    lines = [f"# judge report: {md(scores.get('name') or 'run')}", "",
             f"Run {md(scores.get('run_dir'))}; judges: {md(', '.join(scores.get('judges', [])))}; {scores.get('records')} records."]
    if scores.get("same_family_clashes"):
        lines += ["", "**Same-family judging** (allowed by the config): " + md("; ".join(scores["same_family_clashes"]))]
    for _, block in blocks(scores):
        lines += ["", f"## {md(block.title)}", ""]
        if block.text:
            lines += [md(block.text), ""]
        for i, t in enumerate(block.tables):
            if i:
                lines.append("")
            if t.title:
                lines += [md(t.title), ""]
            lines += _table(t.headers, t.rows)
            if t.note:
                lines += ["", md(t.note)]
    u = scores.get("usage") or {}
    lines += ["", "## Cost", "", f"Model calls {u.get('calls', 0)} (errors {u.get('errors', 0)}), cache hits {u.get('cache_hits', 0)}, "
              f"tokens {u.get('prompt_tokens', 0)} + {u.get('completion_tokens', 0)}, cost ${u.get('cost_usd', 0):.4f}"
              + (f", wall time {scores['wall_seconds']:.1f} s" if scores.get("wall_seconds") else "") + "."]
    return "\n".join(lines) + "\n"


def compare(result: dict, rows: int = 50) -> str:
    """``judge compare --md``: the deltas, the gates and the claim-level differences, for a PR comment."""
    lines = [f"# judge compare: B - A over {result['records_compared']} records", "", f"A {md(result['run_a'])}; B {md(result['run_b'])}."]
    if result.get("note"):
        lines += ["", md(result["note"])]
    lines += [""] + _table(["metric", "A", "B", "delta", "95% CI"],
                           [[name, fmt(m["a"], 4), fmt(m["b"], 4), f"{m['delta']:+.4f}", fmt_ci(m["ci95"], 4, signed=True)] for name, m in result["metrics"].items()])
    if result["gates"]:
        lines += ["", "## Gates", ""] + [f"- **{'FAIL' if g['failed'] else 'ok'}** {md(g['gate'])}: {md(g['why'])}" for g in result["gates"]]
    claims = result.get("claims") or {}
    for title, items in (("Newly ungrounded in B", claims.get("newly_ungrounded", [])), ("Worse in B", claims.get("worsened", [])),
                         ("Fixed in B", claims.get("fixed", [])),
                         ("Verdict flips", result.get("flips", []))):
        if items:
            lines += ["", f"## {title} ({len(items)})", ""] + _table(
                ["record", "model", "claim", "A", "B"], [[c["record_id"], c["model"], c["claim"], c["a"] or "-", c["b"] or "-"] for c in items[:rows]])
            if len(items) > rows:
                lines += ["", f"{len(items) - rows} more: judge compare --json lists all."]
    for key, run in (("only_a", "A"), ("only_b", "B")):
        if claims.get(key):
            lines += ["", f"{len(claims[key])} claims only in run {run}."]
    return "\n".join(lines) + "\n"
