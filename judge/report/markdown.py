"""report.md: the run's score sections as Markdown tables (for a PR comment or a CI log), the claims that
are not grounded first.

Every string from a dataset, a model or a config is data: :func:`md` escapes it, so a ``<script>`` in a
model name stays text and a ``|`` cannot open a table cell.
"""

from __future__ import annotations

import re

from judge.report.format import fmt
from judge.scoring import blocks

_SPECIAL = re.compile(r"([\\`*\[\]|#~])")


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
