"""report.md: the run's score sections as Markdown tables (for a PR comment or a CI log)."""

from __future__ import annotations

from judge.report.format import fmt
from judge.scoring import blocks


def _cell(v) -> str:
    return fmt(v).replace("|", "\\|")


def _table(headers: list[str], rows: list[list]) -> list[str]:
    return ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)] + ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]


def render(scores: dict) -> str:
    lines = [f"# judge report: {scores.get('name') or 'run'}", "", f"Run `{scores.get('run_dir')}`; judges: {', '.join(scores.get('judges', []))}; {scores.get('records')} records."]
    if scores.get("same_family_clashes"):
        lines += ["", "**Same-family judging** (allowed by the config): " + "; ".join(scores["same_family_clashes"])]
    for _, block in blocks(scores):
        lines += ["", f"## {block.title}", ""]
        if block.text:
            lines.append(block.text)
        for i, t in enumerate(block.tables):
            if i:
                lines.append("")
            if t.title:
                lines += [t.title, ""]
            lines += _table(t.headers, t.rows)
            if t.note:
                lines += ["", t.note]
    u = scores.get("usage") or {}
    lines += ["", "## Cost", "", f"Model calls {u.get('calls', 0)} (errors {u.get('errors', 0)}), cache hits {u.get('cache_hits', 0)}, "
              f"tokens {u.get('prompt_tokens', 0)} + {u.get('completion_tokens', 0)}, cost ${u.get('cost_usd', 0):.4f}"
              + (f", wall time {scores['wall_seconds']:.1f} s" if scores.get("wall_seconds") else "") + "."]
    return "\n".join(lines) + "\n"
